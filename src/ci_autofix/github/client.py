"""GitHub's REST API: the only module that imports PyGithub.

`GitHub` is built once from the token, the API URL and the repository; it makes no request
until a method needs one, and returns our own small frozen dataclasses, never PyGithub objects.
Every failure the user can act on becomes a `UserError` (`errors`); expired or missing logs
become halts (`logs`).
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from github import Auth, Github, GithubRetry
from github.GithubException import RateLimitExceededExceedsMaxWait
from github.GithubObject import NonCompletableGithubObject
from github.PaginatedList import PaginatedList

from ci_autofix.github import logs
from ci_autofix.github.errors import GitHubError, ReviewOutsideDiff, api
from ci_autofix.github.models import (
    FAILED_CONCLUSIONS,
    PERMISSION_LEVELS,
    AnnotationInfo,
    CommentInfo,
    CommitInfo,
    DispatchInfo,
    JobInfo,
    PullFile,
    PullInfo,
    ReviewCommentDraft,
    ReviewCommentInfo,
    ReviewInfo,
    RunInfo,
    StatusInfo,
    comment_info,
    commit_info,
    job_info,
    pull_file,
    pull_info,
    review_comment_info,
    review_info,
    run_info,
    status_info,
)
from ci_autofix.redact import Redacted


@dataclass(frozen=True)
class ClientSettings:
    """How patiently we talk to GitHub. Tests use small waits; the defaults suit a CI job."""

    timeout: int = 30
    retries: int = 3
    backoff_factor: float = 1.0
    secondary_rate_wait: float = 60.0
    max_rate_limit_wait: float = 120.0  # longer waits fail with "retry after …" instead of blocking the job
    # PyGithub throttles every call by default (0.25 s, 1 s for writes) for bulk clients; one run
    # makes a handful of writes, far below GitHub's secondary limits (80 content-creating
    # requests a minute), so a short pause between writes is enough.
    seconds_between_requests: float = 0.0
    seconds_between_writes: float = 0.2
    # The signed log download (another host, not PyGithub's retry): tried again on connection
    # errors, timeouts and 5xx, after `log_backoff` seconds, doubled each time.
    log_retries: int = 3
    log_backoff: float = 1.0


class _BoundedRetry(GithubRetry):
    """PyGithub's retry, except that a `Retry-After` longer than `max_rate_limit_wait` fails at
    once (urllib3 would otherwise sleep for as long as the header says)."""

    def increment(
        self,
        method: str | None = None,
        url: str | None = None,
        response: Any = None,
        error: Exception | None = None,
        _pool: Any = None,
        _stacktrace: Any = None,
    ) -> Any:
        if response is not None and self.max_rate_limit_wait is not None:
            after = str(response.headers.get("Retry-After") or "")
            if after.isdigit() and int(after) > self.max_rate_limit_wait:
                raise RateLimitExceededExceedsMaxWait(
                    response.status,
                    {"message": "rate limited (Retry-After)"},
                    dict(response.headers),
                    wait=float(after),
                )
        return super().increment(method, url, response, error, _pool, _stacktrace)


class GitHub:
    def __init__(
        self, token: str, api_url: str, repository: str, *, settings: ClientSettings | None = None
    ) -> None:
        self.settings = settings or ClientSettings()
        self.repository = repository
        s = self.settings
        retry = _BoundedRetry(
            total=s.retries,
            backoff_factor=s.backoff_factor,
            secondary_rate_wait=s.secondary_rate_wait,
            max_rate_limit_wait=s.max_rate_limit_wait,
        )
        self._gh = Github(
            auth=Auth.Token(token),
            base_url=api_url.rstrip("/"),
            retry=retry,
            timeout=s.timeout,
            per_page=100,
            seconds_between_requests=s.seconds_between_requests,
            seconds_between_writes=s.seconds_between_writes,
            lazy=True,
        )
        self._requester = self._gh.requester
        self._url = f"/repos/{repository}"
        self._default_branch: str | None = None

    @property
    def owner(self) -> str:
        return self.repository.split("/", 1)[0]

    def _list(
        self, path: str, params: dict[str, Any] | None = None, item: str = "items"
    ) -> list[dict[str, Any]]:
        """Every item of a paginated list (PyGithub follows the `Link` headers)."""
        pages = PaginatedList(_Raw, self._requester, f"{self._url}{path}", params, list_item=item)
        return [element.raw for element in pages]

    def _json(self, verb: str, path: str, body: Any = None, params: dict[str, Any] | None = None) -> Any:
        _, data = self._requester.requestJsonAndCheck(
            verb, f"{self._url}{path}", parameters=params, input=body
        )
        return data

    # ---- runs, jobs, logs -------------------------------------------------------------------------
    def workflow_run(self, run_id: int) -> RunInfo:
        with api(f"reading workflow run {run_id}", "actions: read"):
            return run_info(self._json("GET", f"/actions/runs/{run_id}"))

    def workflow_run_json(self, run_id: int) -> dict[str, Any]:
        """The run as the API returns it: the shape of a `workflow_run` payload's `workflow_run`."""
        with api(f"reading workflow run {run_id}", "actions: read"):
            data = self._json("GET", f"/actions/runs/{run_id}")
        return data if isinstance(data, dict) else {}

    def runs_for_commit(self, head_sha: str, *, branch: str | None = None) -> list[RunInfo]:
        """Workflow runs of a commit, newest first."""
        params: dict[str, Any] = {"head_sha": head_sha}
        if branch:
            params["branch"] = branch
        with api(f"listing workflow runs of {head_sha[:12]}", "actions: read"):
            return [run_info(run) for run in self._list("/actions/runs", params, "workflow_runs")]

    def jobs(self, run_id: int, attempt: int) -> list[JobInfo]:
        """Every job of one attempt of a run."""
        with api(f"listing the jobs of run {run_id} (attempt {attempt})", "actions: read"):
            jobs = self._list(f"/actions/runs/{run_id}/attempts/{attempt}/jobs", None, "jobs")
            return [job_info(job) for job in jobs]

    def failed_jobs(self, run_id: int, attempt: int) -> list[JobInfo]:
        """Jobs of that attempt that concluded `failure` or `timed_out`."""
        return [job for job in self.jobs(run_id, attempt) if job.conclusion in FAILED_CONCLUSIONS]

    def job_log(self, job_id: int, dest: Path) -> Path:
        """The raw log of one job, streamed into the file `dest` (see `logs`: the answer is a
        redirect to a signed URL); `dest`."""
        try:
            with api(f"downloading the log of job {job_id}", "actions: read"):
                headers, _ = self._requester.requestBlobAndCheck(
                    "GET", f"{self._url}/actions/jobs/{job_id}/logs"
                )
        except GitHubError as exc:
            if halt := logs.refused(job_id, exc.status):
                raise halt from None
            raise
        s = self.settings
        return logs.download(
            job_id, headers, dest, timeout=s.timeout, retries=s.log_retries, backoff=s.log_backoff
        )

    def annotations(self, job_id: int) -> list[AnnotationInfo]:
        """Check-run annotations of a job (a job's id is its check run's id)."""
        with api(f"reading the annotations of job {job_id}", "checks: read"):
            items = self._list(f"/check-runs/{job_id}/annotations")
            return [
                AnnotationInfo(
                    str(a.get("path") or ""),
                    a.get("start_line"),
                    a.get("end_line"),
                    str(a.get("annotation_level") or "failure"),
                    str(a.get("title") or ""),
                    str(a.get("message") or ""),
                )
                for a in items
            ]

    def rerun_failed_jobs(self, run_id: int) -> None:
        with api(f"re-running the failed jobs of run {run_id}", "actions: write"):
            self._json("POST", f"/actions/runs/{run_id}/rerun-failed-jobs")

    # ---- pull requests -------------------------------------------------------------------------------
    def pulls_for_commit(self, sha: str) -> list[PullInfo]:
        """Pull requests containing a commit, including ones from forks."""
        with api(f"finding pull requests of commit {sha[:12]}", "pull-requests: read"):
            return [pull_info(p) for p in self._list(f"/commits/{sha}/pulls")]

    def find_pull(self, head_branch: str, state: str = "all") -> PullInfo | None:
        """The newest pull request whose head is `head_branch` of this repository."""
        with api(f"looking for a pull request from {head_branch}", "pull-requests: read"):
            pulls = self._list("/pulls", {"state": state, "head": f"{self.owner}:{head_branch}"})
            return pull_info(pulls[0]) if pulls else None

    def list_pulls(self, base: str, state: str = "all") -> list[PullInfo]:
        with api(f"listing pull requests into {base}", "pull-requests: read"):
            return [pull_info(p) for p in self._list("/pulls", {"state": state, "base": base})]

    def get_pull(self, number: int) -> PullInfo:
        with api(f"reading pull request #{number}", "pull-requests: read"):
            return pull_info(self._json("GET", f"/pulls/{number}"))

    def pull_files(self, number: int) -> list[PullFile]:
        """The files #number changes, with GitHub's diff of each (at most 3000, as GitHub lists them)."""
        with api(f"listing the files of #{number}", "pull-requests: read"):
            return [pull_file(raw) for raw in self._list(f"/pulls/{number}/files")]

    def create_pull(
        self, base: str, head: str, title: Redacted, body: Redacted, draft: bool = False
    ) -> PullInfo:
        """Open a pull request; when one is already open for `head`, return that one. The title
        and the body are `Redacted`: no text reaches GitHub without passing the redactor."""
        try:
            with api(f"opening a pull request from {head} into {base}", "pull-requests: write"):
                data = self._json(
                    "POST",
                    "/pulls",
                    {"base": base, "head": head, "title": title.text, "body": body.text, "draft": draft},
                )
                return pull_info(data)
        except GitHubError as exc:
            if exc.status == 422 and "already exists" in exc.github_message:
                existing = self.find_pull(head, state="open")
                if existing is not None:
                    return existing
            raise

    def update_pull(
        self,
        number: int,
        *,
        title: Redacted | None = None,
        body: Redacted | None = None,
        state: str | None = None,
    ) -> PullInfo:
        texts = {"title": title.text if title else None, "body": body.text if body else None}
        changes = {k: v for k, v in {**texts, "state": state}.items() if v is not None}
        with api(f"updating pull request #{number}", "pull-requests: write"):
            return pull_info(self._json("PATCH", f"/pulls/{number}", changes))

    def close_pull(self, number: int) -> None:
        self.update_pull(number, state="closed")

    def request_reviewers(self, number: int, logins: list[str]) -> list[str]:
        """Request each reviewer separately (`org/team` entries are teams), so one that cannot be
        requested (the author, a non-collaborator, an unknown team) does not block the others.
        Returns the entries that could not be requested."""
        failed = []
        for login in dict.fromkeys(x.strip().lstrip("@") for x in logins if x.strip()):
            body = {"team_reviewers": [login.split("/", 1)[1]]} if "/" in login else {"reviewers": [login]}
            try:
                with api(f"requesting a review from {login} on #{number}", "pull-requests: write"):
                    self._json("POST", f"/pulls/{number}/requested_reviewers", body)
            except GitHubError as exc:
                if exc.status not in (404, 422):
                    raise
                failed.append(login)
        return failed

    def add_labels(self, number: int, labels: list[str]) -> None:
        if not labels:
            return
        with api(f"labelling #{number}", "issues: write"):
            self._json("POST", f"/issues/{number}/labels", {"labels": list(labels)})

    def remove_label(self, number: int, label: str) -> None:
        """Take `label` off #number; a label that is not there is no error."""
        try:
            with api(f"removing the label {label} from #{number}", "issues: write"):
                self._json("DELETE", f"/issues/{number}/labels/{quote(label, safe='')}")
        except GitHubError as exc:
            if exc.status != 404:
                raise

    def comment(self, number: int, body: Redacted) -> CommentInfo:
        with api(f"commenting on #{number}", "issues: write"):
            data = self._json("POST", f"/issues/{number}/comments", {"body": body.text})
            return comment_info(data)

    def comments(self, number: int) -> list[CommentInfo]:
        with api(f"reading the comments of #{number}", "issues: read"):
            return [comment_info(raw) for raw in self._list(f"/issues/{number}/comments")]

    def edit_comment(self, comment_id: int, body: Redacted) -> CommentInfo:
        with api(f"editing comment {comment_id}", "issues: write"):
            return comment_info(self._json("PATCH", f"/issues/comments/{comment_id}", {"body": body.text}))

    def commit_comment(self, sha: str, body: Redacted) -> CommentInfo:
        with api(f"commenting on commit {sha[:12]}", "contents: write"):
            return comment_info(self._json("POST", f"/commits/{sha}/comments", {"body": body.text}))

    def commit_comments(self, sha: str) -> list[CommentInfo]:
        with api(f"reading the comments of commit {sha[:12]}", "contents: read"):
            return [comment_info(raw) for raw in self._list(f"/commits/{sha}/comments")]

    def edit_commit_comment(self, comment_id: int, body: Redacted) -> CommentInfo:
        with api(f"editing commit comment {comment_id}", "contents: write"):
            return comment_info(self._json("PATCH", f"/comments/{comment_id}", {"body": body.text}))

    # ---- reviews --------------------------------------------------------------------------------------
    def reviews(self, number: int) -> list[ReviewInfo]:
        """Every review of #number, oldest first (replies to threads are COMMENTED reviews too)."""
        with api(f"reading the reviews of #{number}", "pull-requests: read"):
            return [review_info(raw) for raw in self._list(f"/pulls/{number}/reviews")]

    def review(self, number: int, review_id: int) -> ReviewInfo:
        with api(f"reading review {review_id} of #{number}", "pull-requests: read"):
            return review_info(self._json("GET", f"/pulls/{number}/reviews/{review_id}"))

    def review_comments(self, number: int) -> list[ReviewCommentInfo]:
        """Every review comment of #number (all pages), oldest first: threads' first comments and
        their replies (`in_reply_to_id`)."""
        with api(f"reading the review comments of #{number}", "pull-requests: read"):
            return [review_comment_info(raw) for raw in self._list(f"/pulls/{number}/comments")]

    def reply_to_review_comment(self, number: int, comment_id: int, body: Redacted) -> CommentInfo:
        """Reply in the thread of review comment `comment_id` (pass a thread's first comment,
        `ReviewCommentInfo.thread_id`: GitHub documents no replies to replies)."""
        with api(f"replying to review comment {comment_id} on #{number}", "pull-requests: write"):
            data = self._json("POST", f"/pulls/{number}/comments/{comment_id}/replies", {"body": body.text})
            return comment_info(data)

    def create_review(
        self, number: int, commit_sha: str, body: Redacted, comments: list[ReviewCommentDraft]
    ) -> ReviewInfo:
        """Post a COMMENT review on `commit_sha` of #number with `comments`. GitHub takes all of
        them or none: one outside the pull request's diff raises `ReviewOutsideDiff`."""
        payload = {
            "commit_id": commit_sha,
            "body": body.text,
            "event": "COMMENT",
            "comments": [draft.payload() for draft in comments],
        }
        try:
            with api(f"posting a review on #{number}", "pull-requests: write"):
                return review_info(self._json("POST", f"/pulls/{number}/reviews", payload))
        except GitHubError as exc:
            if exc.status == 422 and "Pull request review thread" in exc.github_message:
                raise ReviewOutsideDiff(
                    f"GitHub refused the review on #{number}: {exc.github_message}.",
                    "Post only comments whose lines are inside one hunk of the pull request's diff "
                    "(RIGHT: lines of the head's file a hunk shows; LEFT: lines of the base's file); "
                    "the others can go into the review's body.",
                    status=exc.status,
                    message=exc.github_message,
                ) from None
            raise

    # ---- branches, commits, permissions -----------------------------------------------------------------
    def commit(self, sha: str) -> CommitInfo:
        """A commit's parents and message."""
        with api(f"reading commit {sha[:12]}", "contents: read"):
            return commit_info(self._json("GET", f"/commits/{sha}"))

    def branch_sha(self, branch: str) -> str | None:
        try:
            with api(f"reading branch {branch}", "contents: read"):
                data = self._json("GET", f"/git/ref/heads/{quote(branch, safe='/')}")
        except GitHubError as exc:
            if exc.status == 404:
                return None
            raise
        return str(data["object"]["sha"])

    def branches(self, prefix: str) -> dict[str, str]:
        """The branches whose names start with `prefix` (name → head sha)."""
        with api(f"listing the branches {prefix}*", "contents: read"):
            items = self._json("GET", f"/git/matching-refs/heads/{quote(prefix, safe='/')}")  # not paged
        return {str(i["ref"]).removeprefix("refs/heads/"): str(i["object"]["sha"]) for i in items}

    def delete_branch(self, branch: str) -> None:
        """Delete a branch; one that is already gone is fine."""
        try:
            with api(f"deleting branch {branch}", "contents: write"):
                self._json("DELETE", f"/git/refs/heads/{quote(branch, safe='/')}")
        except GitHubError as exc:
            if exc.status == 422 and "does not exist" in exc.github_message:
                return
            raise

    def permission(self, login: str) -> str:
        """`admin`, `maintain`, `write`, `triage`, `read` or `none`."""
        try:
            with api(f"reading the permission of {login}", "metadata: read"):
                data = self._json("GET", f"/collaborators/{quote(login, safe='')}/permission")
        except GitHubError as exc:
            if exc.status == 404:
                return "none"
            raise
        for key in ("role_name", "permission"):
            value = str(data.get(key) or "")
            if value in PERMISSION_LEVELS:
                return value
        return "none"

    def commit_author_login(self, sha: str) -> str | None:
        """The GitHub account of a commit's author, when GitHub knows it."""
        try:
            with api(f"reading commit {sha[:12]}", "contents: read"):
                data = self._json("GET", f"/commits/{sha}")
        except GitHubError as exc:
            if exc.status in (404, 422):
                return None
            raise
        author = data.get("author") or {}
        return str(author["login"]) if author.get("login") else None

    def create_status(
        self, sha: str, *, context: str, state: str, description: str, target_url: str = ""
    ) -> StatusInfo:
        """Set a commit status on `sha`, created by the identity this client's token acts as."""
        commit = self._gh.get_repo(self.repository).get_commit(sha)
        with api(f"setting the status `{context}` on {sha[:12]}", "statuses: write"):
            if target_url:
                created = commit.create_status(
                    state, target_url=target_url, description=description, context=context
                )
            else:
                created = commit.create_status(state, description=description, context=context)
            return status_info(created)

    def statuses(self, sha: str) -> list[StatusInfo]:
        """Every commit status of `sha`, newest first (as GitHub lists them)."""
        commit = self._gh.get_repo(self.repository).get_commit(sha)
        with api(f"reading the statuses of {sha[:12]}", "statuses: read"):
            return [status_info(status) for status in commit.get_statuses()]

    def default_branch(self) -> str:
        if self._default_branch is None:
            with api("reading the repository", "metadata: read"):
                self._default_branch = str(self._json("GET", "")["default_branch"])
        return self._default_branch

    # ---- workflows ----------------------------------------------------------------------------------
    def default_branch_file(self, path: str) -> str | None:
        """The text of a file on the default branch, or None when it has none."""
        try:
            with api(f"reading {path}", "contents: read"):
                data = self._json(
                    "GET", f"/contents/{quote(path, safe='/')}", params={"ref": self.default_branch()}
                )
        except GitHubError as exc:
            if exc.status == 404:
                return None
            raise
        return base64.b64decode(str(data.get("content", ""))).decode("utf-8", errors="replace")

    def dispatch_workflow(
        self, workflow: str, ref: str, inputs: Mapping[str, str] | None = None
    ) -> DispatchInfo:
        """Start a workflow with `workflow_dispatch` on `ref`."""
        name = workflow.rsplit("/", 1)[-1].split("@", 1)[0]
        body: dict[str, Any] = {"ref": ref, "return_run_details": True}
        if inputs:
            body["inputs"] = dict(inputs)
        with api(f"starting workflow {name} on {ref}", "actions: write"):
            data = self._json("POST", f"/actions/workflows/{quote(name, safe='')}/dispatches", body)
        if isinstance(data, dict) and data.get("workflow_run_id"):
            return DispatchInfo(int(data["workflow_run_id"]), str(data.get("html_url") or "") or None)
        return DispatchInfo(None, None)


class _Raw(NonCompletableGithubObject):
    """A list item kept as its JSON (for lists PyGithub has no public class for)."""

    def _initAttributes(self) -> None:
        self.raw: dict[str, Any] = {}

    def _useAttributes(self, attributes: dict[str, Any]) -> None:
        self.raw = attributes
