"""GitHub's REST API: the only module that imports PyGithub.

`GitHub` is built once from the token, the API URL and the repository; it makes no request
until a method needs one, and returns our own small frozen dataclasses, never PyGithub objects.
Every failure the user can act on becomes a `UserError` here (bad token, a missing
`permissions:` entry, rate limits, GitHub unavailable); expired or missing logs become halts.
No message ever contains the token: messages are built from GitHub's `message` field only.
"""

from __future__ import annotations

import base64
import re
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

import requests
from github import Auth, Github, GithubException, GithubRetry, RateLimitExceededException
from github.CommitStatus import CommitStatus
from github.GithubException import RateLimitExceededExceedsMaxWait
from github.GithubObject import NonCompletableGithubObject
from github.PaginatedList import PaginatedList

from ci_autofix.errors import Halt, HaltReason, UserError
from ci_autofix.redact import Redacted

FAILED_CONCLUSIONS = frozenset({"failure", "timed_out"})
PERMISSION_LEVELS = ("admin", "maintain", "write", "triage", "read", "none")
_DOCS_PERMISSIONS = "https://docs.github.com/actions/writing-workflows/choosing-what-your-workflow-does/controlling-permissions-for-github_token"
_DOCS_RATE_LIMITS = "https://docs.github.com/rest/using-the-rest-api/rate-limits-for-the-rest-api"
_DOCS_LOG_RETENTION = "https://docs.github.com/actions/reference/workflows-and-actions/workflow-artifacts#about-workflow-artifact-and-log-retention"
_CREDENTIALS_REMEDY = (
    "Pass a valid token in the `github-token` input (usually `${{ secrets.GITHUB_TOKEN }}`); "
    "an expired token, or one for another repository or GitHub host, does not work."
)


# ---- what we return ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class RunInfo:
    id: int
    name: str
    workflow_id: int
    workflow_path: str  # ".github/workflows/ci.yml" (any "@ref" suffix removed)
    head_branch: str
    head_sha: str
    event: str
    status: str
    conclusion: str | None
    run_attempt: int
    html_url: str
    actor: str | None
    triggering_actor: str | None
    pull_numbers: list[int] = field(default_factory=list)


@dataclass(frozen=True)
class StepInfo:
    number: int
    name: str
    conclusion: str | None


@dataclass(frozen=True)
class JobInfo:
    id: int
    name: str
    conclusion: str | None
    html_url: str
    run_attempt: int | None
    steps: list[StepInfo] = field(default_factory=list)

    @property
    def failed_steps(self) -> list[StepInfo]:
        return [step for step in self.steps if step.conclusion in FAILED_CONCLUSIONS]


@dataclass(frozen=True)
class AnnotationInfo:
    path: str
    start_line: int | None
    end_line: int | None
    level: str  # notice | warning | failure
    title: str
    message: str


@dataclass(frozen=True)
class PullInfo:
    number: int
    html_url: str
    state: str  # open | closed
    merged: bool
    title: str
    body: str
    head_ref: str
    head_sha: str
    base_ref: str
    author: str | None
    labels: list[str] = field(default_factory=list)
    draft: bool = False


@dataclass(frozen=True)
class CommentInfo:
    id: int
    author: str | None
    body: str
    html_url: str


@dataclass(frozen=True)
class StatusInfo:
    """A commit status. `creator` is the login GitHub records for the token that created it:
    nobody can create a status in another account's name."""

    context: str
    state: str
    description: str
    target_url: str
    creator: str | None


@dataclass(frozen=True)
class DispatchInfo:
    run_id: int | None  # known when GitHub returns the run's details
    html_url: str | None


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


class GitHubError(UserError):
    """GitHub refused a call for a reason not mapped to a more specific remedy."""

    def __init__(self, cause: str, remedy: str, *, status: int, message: str) -> None:
        super().__init__(cause, remedy)
        self.status = status
        self.github_message = message


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


# ---- the client --------------------------------------------------------------------------------------
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
        with _api(f"reading workflow run {run_id}", "actions: read"):
            return _run_info(self._json("GET", f"/actions/runs/{run_id}"))

    def runs_for_commit(self, head_sha: str, *, branch: str | None = None) -> list[RunInfo]:
        """Workflow runs of a commit, newest first."""
        params: dict[str, Any] = {"head_sha": head_sha}
        if branch:
            params["branch"] = branch
        with _api(f"listing workflow runs of {head_sha[:12]}", "actions: read"):
            return [_run_info(run) for run in self._list("/actions/runs", params, "workflow_runs")]

    def jobs(self, run_id: int, attempt: int) -> list[JobInfo]:
        """Every job of one attempt of a run."""
        with _api(f"listing the jobs of run {run_id} (attempt {attempt})", "actions: read"):
            jobs = self._list(f"/actions/runs/{run_id}/attempts/{attempt}/jobs", None, "jobs")
            return [_job_info(job) for job in jobs]

    def failed_jobs(self, run_id: int, attempt: int) -> list[JobInfo]:
        """Jobs of that attempt that concluded `failure` or `timed_out`."""
        return [job for job in self.jobs(run_id, attempt) if job.conclusion in FAILED_CONCLUSIONS]

    def job_log(self, job_id: int) -> bytes:
        """The raw log of one job. The API answers 302 to a signed URL on another host, which
        must be fetched without our Authorization header."""
        what = f"downloading the log of job {job_id}"
        try:
            with _api(what, "actions: read"):
                headers, _ = self._requester.requestBlobAndCheck(
                    "GET", f"{self._url}/actions/jobs/{job_id}/logs"
                )
        except GitHubError as exc:
            if exc.status == 410:
                raise Halt(
                    HaltReason.LOGS_EXPIRED,
                    f"The log of job {job_id} has expired: GitHub keeps workflow logs for 90 days by "
                    "default (less if the repository's retention setting is shorter), so this run is too "
                    f"old to diagnose. See {_DOCS_LOG_RETENTION}.",
                ) from None
            if exc.status == 404:
                raise Halt(
                    HaltReason.LOGS_UNAVAILABLE,
                    f"GitHub has no log for job {job_id} (404): it may have been deleted, or the job "
                    "never ran.",
                ) from None
            raise
        location = _header(headers, "location")
        if not location:
            raise Halt(HaltReason.LOGS_UNAVAILABLE, f"GitHub gave no log location for job {job_id}.")
        try:
            # a fresh session: proxies come from the environment, credentials from nowhere
            with requests.Session() as session:
                response = session.get(
                    location, timeout=self.settings.timeout, allow_redirects=True, auth=_without_authorization
                )
        except requests.RequestException as exc:
            raise UserError(
                f"The log of job {job_id} could not be downloaded ({type(exc).__name__}).",
                "Check the runner's network access to GitHub's log storage and re-run the job.",
            ) from None
        if response.status_code in (404, 410):
            raise Halt(
                HaltReason.LOGS_EXPIRED if response.status_code == 410 else HaltReason.LOGS_UNAVAILABLE,
                f"The log of job {job_id} is no longer available (log storage answered "
                f"{response.status_code}).",
            )
        if response.status_code != 200:
            raise UserError(
                f"The log of job {job_id} could not be downloaded (log storage answered "
                f"{response.status_code}).",
                "Re-run the job; if it persists, GitHub's log storage "
                "may be having problems (see githubstatus.com).",
            )
        return response.content

    def annotations(self, job_id: int) -> list[AnnotationInfo]:
        """Check-run annotations of a job (a job's id is its check run's id)."""
        with _api(f"reading the annotations of job {job_id}", "checks: read"):
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
        with _api(f"re-running the failed jobs of run {run_id}", "actions: write"):
            self._json("POST", f"/actions/runs/{run_id}/rerun-failed-jobs")

    # ---- pull requests -------------------------------------------------------------------------------
    def pulls_for_commit(self, sha: str) -> list[PullInfo]:
        """Pull requests containing a commit, including ones from forks."""
        with _api(f"finding pull requests of commit {sha[:12]}", "pull-requests: read"):
            return [_pull_info(p) for p in self._list(f"/commits/{sha}/pulls")]

    def find_pull(self, head_branch: str, state: str = "all") -> PullInfo | None:
        """The newest pull request whose head is `head_branch` of this repository."""
        with _api(f"looking for a pull request from {head_branch}", "pull-requests: read"):
            pulls = self._list("/pulls", {"state": state, "head": f"{self.owner}:{head_branch}"})
            return _pull_info(pulls[0]) if pulls else None

    def list_pulls(self, base: str, state: str = "all") -> list[PullInfo]:
        with _api(f"listing pull requests into {base}", "pull-requests: read"):
            return [_pull_info(p) for p in self._list("/pulls", {"state": state, "base": base})]

    def get_pull(self, number: int) -> PullInfo:
        with _api(f"reading pull request #{number}", "pull-requests: read"):
            return _pull_info(self._json("GET", f"/pulls/{number}"))

    def create_pull(
        self, base: str, head: str, title: Redacted, body: Redacted, draft: bool = False
    ) -> PullInfo:
        """Open a pull request; when one is already open for `head`, return that one. The title
        and the body are `Redacted`: no text reaches GitHub without passing the redactor."""
        try:
            with _api(f"opening a pull request from {head} into {base}", "pull-requests: write"):
                data = self._json(
                    "POST",
                    "/pulls",
                    {"base": base, "head": head, "title": title.text, "body": body.text, "draft": draft},
                )
                return _pull_info(data)
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
        with _api(f"updating pull request #{number}", "pull-requests: write"):
            return _pull_info(self._json("PATCH", f"/pulls/{number}", changes))

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
                with _api(f"requesting a review from {login} on #{number}", "pull-requests: write"):
                    self._json("POST", f"/pulls/{number}/requested_reviewers", body)
            except GitHubError as exc:
                if exc.status not in (404, 422):
                    raise
                failed.append(login)
        return failed

    def add_labels(self, number: int, labels: list[str]) -> None:
        if not labels:
            return
        with _api(f"labelling #{number}", "issues: write"):
            self._json("POST", f"/issues/{number}/labels", {"labels": list(labels)})

    def comment(self, number: int, body: Redacted) -> CommentInfo:
        with _api(f"commenting on #{number}", "issues: write"):
            data = self._json("POST", f"/issues/{number}/comments", {"body": body.text})
            return _comment_info(data)

    # ---- branches, commits, permissions -----------------------------------------------------------------
    def branch_sha(self, branch: str) -> str | None:
        try:
            with _api(f"reading branch {branch}", "contents: read"):
                data = self._json("GET", f"/git/ref/heads/{quote(branch, safe='/')}")
        except GitHubError as exc:
            if exc.status == 404:
                return None
            raise
        return str(data["object"]["sha"])

    def delete_branch(self, branch: str) -> None:
        """Delete a branch; one that is already gone is fine."""
        try:
            with _api(f"deleting branch {branch}", "contents: write"):
                self._json("DELETE", f"/git/refs/heads/{quote(branch, safe='/')}")
        except GitHubError as exc:
            if exc.status == 422 and "does not exist" in exc.github_message:
                return
            raise

    def permission(self, login: str) -> str:
        """`admin`, `maintain`, `write`, `triage`, `read` or `none`."""
        try:
            with _api(f"reading the permission of {login}", "metadata: read"):
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
            with _api(f"reading commit {sha[:12]}", "contents: read"):
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
        with _api(f"setting the status `{context}` on {sha[:12]}", "statuses: write"):
            if target_url:
                created = commit.create_status(
                    state, target_url=target_url, description=description, context=context
                )
            else:
                created = commit.create_status(state, description=description, context=context)
            return _status_info(created)

    def statuses(self, sha: str) -> list[StatusInfo]:
        """Every commit status of `sha`, newest first (as GitHub lists them)."""
        commit = self._gh.get_repo(self.repository).get_commit(sha)
        with _api(f"reading the statuses of {sha[:12]}", "statuses: read"):
            return [_status_info(status) for status in commit.get_statuses()]

    def default_branch(self) -> str:
        if self._default_branch is None:
            with _api("reading the repository", "metadata: read"):
                self._default_branch = str(self._json("GET", "")["default_branch"])
        return self._default_branch

    # ---- workflows ----------------------------------------------------------------------------------
    def workflow_dispatchable(self, workflow: str) -> bool:
        """Whether the workflow file on the default branch has a `workflow_dispatch` trigger
        (GitHub dispatches only workflows present on the default branch)."""
        path = workflow if "/" in workflow else f".github/workflows/{workflow}"
        try:
            with _api(f"reading {path}", "contents: read"):
                data = self._json(
                    "GET", f"/contents/{quote(path, safe='/')}", params={"ref": self.default_branch()}
                )
        except GitHubError as exc:
            if exc.status == 404:
                return False
            raise
        text = base64.b64decode(str(data.get("content", ""))).decode("utf-8", errors="replace")
        return has_dispatch_trigger(text)

    def dispatch_workflow(
        self, workflow: str, ref: str, inputs: Mapping[str, str] | None = None
    ) -> DispatchInfo:
        """Start a workflow with `workflow_dispatch` on `ref`."""
        name = workflow.rsplit("/", 1)[-1].split("@", 1)[0]
        body: dict[str, Any] = {"ref": ref, "return_run_details": True}
        if inputs:
            body["inputs"] = dict(inputs)
        with _api(f"starting workflow {name} on {ref}", "actions: write"):
            data = self._json("POST", f"/actions/workflows/{quote(name, safe='')}/dispatches", body)
        if isinstance(data, dict) and data.get("workflow_run_id"):
            return DispatchInfo(int(data["workflow_run_id"]), str(data.get("html_url") or "") or None)
        return DispatchInfo(None, None)


def has_dispatch_trigger(workflow_text: str) -> bool:
    """Whether a workflow file's text names the `workflow_dispatch` event (comments ignored)."""
    lines = [re.sub(r"(^|\s)#.*$", "", line) for line in workflow_text.splitlines()]
    return re.search(r"(?<![\w-])workflow_dispatch(?![\w-])", "\n".join(lines)) is not None


def _without_authorization(request: requests.PreparedRequest) -> requests.PreparedRequest:
    """Auth hook for the signed log URL: it must carry no `Authorization` (not even from .netrc)."""
    request.headers.pop("Authorization", None)
    return request


# ---- conversions ------------------------------------------------------------------------------------
class _Raw(NonCompletableGithubObject):
    """A list item kept as its JSON (for lists PyGithub has no public class for)."""

    def _initAttributes(self) -> None:
        self.raw: dict[str, Any] = {}

    def _useAttributes(self, attributes: dict[str, Any]) -> None:
        self.raw = attributes


def _run_info(raw: Mapping[str, Any]) -> RunInfo:
    actor = raw.get("actor") or {}
    triggering = raw.get("triggering_actor") or {}
    return RunInfo(
        id=int(raw["id"]),
        name=str(raw.get("name") or ""),
        workflow_id=int(raw.get("workflow_id") or 0),
        workflow_path=str(raw.get("path") or "").split("@", 1)[0],
        head_branch=str(raw.get("head_branch") or ""),
        head_sha=str(raw["head_sha"]),
        event=str(raw.get("event") or ""),
        status=str(raw.get("status") or ""),
        conclusion=raw.get("conclusion"),
        run_attempt=int(raw.get("run_attempt") or 1),
        html_url=str(raw.get("html_url") or ""),
        actor=actor.get("login"),
        triggering_actor=triggering.get("login"),
        pull_numbers=[int(p["number"]) for p in raw.get("pull_requests") or []],
    )


def _job_info(raw: Mapping[str, Any]) -> JobInfo:
    steps = [StepInfo(int(s["number"]), str(s["name"]), s.get("conclusion")) for s in raw.get("steps") or []]
    return JobInfo(
        int(raw["id"]),
        str(raw["name"]),
        raw.get("conclusion"),
        str(raw.get("html_url") or ""),
        raw.get("run_attempt"),
        steps,
    )


def _pull_info(raw: Mapping[str, Any]) -> PullInfo:
    head, base = raw.get("head") or {}, raw.get("base") or {}
    return PullInfo(
        number=int(raw["number"]),
        html_url=str(raw.get("html_url") or ""),
        state=str(raw.get("state") or ""),
        merged=bool(raw.get("merged")) or raw.get("merged_at") is not None,
        title=str(raw.get("title") or ""),
        body=str(raw.get("body") or ""),
        head_ref=str(head.get("ref") or ""),
        head_sha=str(head.get("sha") or ""),
        base_ref=str(base.get("ref") or ""),
        author=(raw.get("user") or {}).get("login"),
        labels=[str(label["name"]) for label in raw.get("labels") or []],
        draft=bool(raw.get("draft")),
    )


def _status_info(status: CommitStatus) -> StatusInfo:
    creator = status.creator
    return StatusInfo(
        context=str(status.context or ""),
        state=str(status.state or ""),
        description=str(status.description or ""),
        target_url=str(status.target_url or ""),
        creator=str(creator.login) if creator is not None and creator.login else None,
    )


def _comment_info(raw: Mapping[str, Any]) -> CommentInfo:
    return CommentInfo(
        int(raw["id"]),
        (raw.get("user") or {}).get("login"),
        str(raw.get("body") or ""),
        str(raw.get("html_url") or ""),
    )


# ---- errors -------------------------------------------------------------------------------------------
def _header(headers: Mapping[str, Any] | None, name: str) -> str | None:
    for key, value in (headers or {}).items():
        if key.lower() == name:
            return str(value)
    return None


def _message(exc: GithubException) -> str:
    """GitHub's `message`, with the details of a 422's `errors` (which say what already exists)."""
    data = exc.data
    if not isinstance(data, dict):
        return str(data or "")[:200]
    details = []
    for error in data.get("errors") or []:
        if isinstance(error, dict):
            text = error.get("message") or " ".join(
                str(error.get(k)) for k in ("resource", "field", "code") if error.get(k)
            )
            details.append(str(text))
        else:
            details.append(str(error))
    message = str(data.get("message") or "")
    return f"{message} ({'; '.join(details)})" if details else message


def _is_rate_limit(status: int, message: str, headers: Mapping[str, Any] | None) -> bool:
    if status == 429:
        return True
    lowered = message.lower()
    return status == 403 and (
        "rate limit" in lowered
        or "abuse" in lowered
        or _header(headers, "retry-after") is not None
        or _header(headers, "x-ratelimit-remaining") == "0"
    )


def _when(headers: Mapping[str, Any] | None, wait: float | None = None) -> str:
    after = _header(headers, "retry-after")
    if after and after.isdigit():
        return f"in {int(after)} seconds or later"
    reset = _header(headers, "x-ratelimit-reset")
    if reset and reset.isdigit() and _header(headers, "x-ratelimit-remaining") == "0":
        at = datetime.fromtimestamp(int(reset), UTC)
        minutes = max(1, round((int(reset) - time.time()) / 60))
        return f"after {at:%H:%M} UTC (in about {minutes} minute{'s' if minutes != 1 else ''})"
    if wait:
        return f"in {int(wait)} seconds or later"
    return "in a few minutes"


def _rate_limited(
    doing: str, headers: Mapping[str, Any] | None, message: str, wait: float | None = None
) -> UserError:
    exhausted = (
        _header(headers, "x-ratelimit-remaining") == "0" or "api rate limit exceeded" in message.lower()
    )
    kind = "primary" if exhausted else "secondary"
    return UserError(
        f"GitHub's {kind} API rate limit was hit while {doing}.",
        f"Re-run the job {_when(headers, wait)}. The limit is shared by everything using this token "
        "(other workflows in the repository count too).",
        docs=_DOCS_RATE_LIMITS,
    )


def permission_entries(accepted: str | None) -> list[str]:
    """`X-Accepted-GitHub-Permissions` (`pull_requests=write; issues=write`) as `permissions:`
    entries (`pull-requests: write`), one per accepted alternative."""
    entries = []
    for alternative in (accepted or "").split(";"):
        parts = [p.strip() for p in alternative.split(",") if "=" in p]
        if parts:
            entries.append(
                ", ".join(
                    f"{k.strip().replace('_', '-')}: {v.strip()}" for k, v in (p.split("=", 1) for p in parts)
                )
            )
    return entries


def _error(doing: str, needs: str, exc: GithubException) -> UserError:
    status, message, headers = exc.status, _message(exc), exc.headers
    if status >= 500:
        return _unavailable(doing, f"{status}")
    if isinstance(exc, RateLimitExceededExceedsMaxWait):
        return _rate_limited(doing, headers, message, exc.wait)
    if status == 401:
        return UserError(
            f"GitHub rejected the token while {doing} (401 {message or 'Bad credentials'}).",
            _CREDENTIALS_REMEDY,
        )
    if isinstance(exc, RateLimitExceededException) or _is_rate_limit(status, message, headers):
        return _rate_limited(doing, headers, message)
    if status == 403 and "not accessible" in message.lower():
        entries = permission_entries(_header(headers, "x-accepted-github-permissions")) or [needs]
        wanted = " or ".join(f"`{e}`" for e in entries)
        return UserError(
            f'The token may not do this: GitHub answered 403 "{message}" while {doing}.',
            f"add {wanted} to the job's `permissions:` in the workflow file (naming any permission "
            "sets all the others to `none`).",
            docs=_DOCS_PERMISSIONS,
        )
    remedy = "Check the repository's settings and this run's inputs; GitHub's message says what it refused."
    if status == 403:
        remedy = (
            f"Check that the token may do this (the job's `permissions:` need `{needs}`) and that no "
            "branch protection or repository rule forbids it."
        )
    return GitHubError(
        f"GitHub answered {status} while {doing}: {message or 'no message'}.",
        remedy,
        status=status,
        message=message,
    )


def _unavailable(doing: str, detail: str) -> UserError:
    return UserError(
        f"GitHub is unavailable: it kept failing ({detail}) while {doing}, even after retries.",
        "Re-run the job later; see https://www.githubstatus.com for incidents.",
    )


@contextmanager
def _api(doing: str, needs: str) -> Iterator[None]:
    """Turn PyGithub and transport failures into errors the user can act on."""
    try:
        yield
    except GithubException as exc:
        raise _error(doing, needs, exc) from None
    except requests.exceptions.RetryError as exc:
        reason = str(getattr(exc.args[0], "reason", exc.args[0]) if exc.args else exc)
        codes = re.findall(r"too many (\d{3}) error", reason)
        if codes and codes[0] in ("403", "429"):
            raise UserError(
                f"GitHub's API rate limit was hit while {doing}, and retrying did not help.",
                "Re-run the job in a few minutes.",
                docs=_DOCS_RATE_LIMITS,
            ) from None
        raise _unavailable(doing, f"HTTP {codes[0]}" if codes else "no answer") from None
    except (requests.ConnectionError, requests.Timeout) as exc:
        raise UserError(
            f"GitHub could not be reached while {doing} ({type(exc).__name__}).",
            "Check the runner's network access and `GITHUB_API_URL`; re-run the job.",
        ) from None
