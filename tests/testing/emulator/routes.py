"""The REST routes of the emulator (a mixin of `GitHubEmulator`).

Status codes and error bodies follow GitHub (see the project's platform notes): 201 with
`Location` on creation, 204 on deletion, 302 for logs, 410 for expired logs, 422 variants with
GitHub's messages. Paginated lists answer `Link` headers with the emulator's own URLs.
"""

from __future__ import annotations

import base64
import io
import re
import zipfile
from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlencode

from tests.testing.emulator.shapes import example, now
from tests.testing.emulator.state import Comment, Job, Pull, Repo, Run, Status

if TYPE_CHECKING:
    from tests.testing.emulator.core import GitHubEmulator

Result = tuple[int, Any, list[tuple[str, str]]]
_REPO = r"^/repos/(?P<owner>[^/]+)/(?P<name>[^/]+)"
_SHA = re.compile(r"^[0-9a-f]{40}$")


class ApiError(Exception):
    def __init__(
        self,
        status: int,
        message: str,
        docs: str = "https://docs.github.com/rest",
        headers: list[tuple[str, str]] | None = None,
        **extra: Any,
    ) -> None:
        from tests.testing.emulator.core import error_body

        super().__init__(message)
        self.status = status
        self.body = error_body(status, message, docs, **extra)
        self.headers = headers or []


def _not_found() -> ApiError:
    return ApiError(404, "Not Found")


def _validation(docs: str, **error: Any) -> ApiError:
    return ApiError(422, "Validation Failed", docs, errors=[error])


_ROUTES: list[tuple[str, re.Pattern[str], str]] = []


_DOCS_EDIT_COMMENT = "https://docs.github.com/rest/issues/comments#update-an-issue-comment"


def route(method: str, pattern: str) -> Callable[[Callable[..., Result]], Callable[..., Result]]:
    def register(func: Callable[..., Result]) -> Callable[..., Result]:
        full = pattern if pattern.startswith("^") else _REPO + pattern + "$"
        _ROUTES.append((method, re.compile(full), func.__name__))
        return func

    return register


class Routes:
    # ---- dispatch -----------------------------------------------------------------------------------
    def dispatch_route(
        self: GitHubEmulator, method: str, path: str, query: dict[str, str], body: Any, login: str
    ) -> Result:
        for route_method, pattern, name in _ROUTES:
            match = pattern.match(path)
            if route_method == method and match:
                groups = match.groupdict()
                repo = None
                if "owner" in groups:
                    repo = self.repos.get(f"{groups.pop('owner')}/{groups.pop('name')}")
                    if repo is None:
                        raise _not_found()
                handler = getattr(self, name)
                args = {"query": query, "body": body, "login": login, **groups}
                return handler(repo, **args) if repo is not None else handler(**args)  # type: ignore[no-any-return]
        raise _not_found()

    # ---- shared shapes ------------------------------------------------------------------------------
    def _repo_api(self: GitHubEmulator, r: Repo) -> str:
        return f"{self.api_url}/repos/{r.full_name}"

    def _repo_web(self: GitHubEmulator, r: Repo) -> str:
        return f"{self.server_url}/{r.full_name}"

    def _user_json(self: GitHubEmulator, login: str) -> dict[str, Any]:
        if login not in self.users:
            self.add_user(login)
        return self.shapes.user(login, self.users[login][0])

    def _repo_json(self: GitHubEmulator, r: Repo) -> dict[str, Any]:
        return self.shapes.repository(r.full_name, r.id, r.default_branch, r.owner_id)

    def _paginate(
        self: GitHubEmulator, items: list[Any], query: dict[str, str], path: str
    ) -> tuple[list[Any], list[tuple[str, str]]]:
        per_page = max(1, min(100, int(query.get("per_page") or 30)))
        page = max(1, int(query.get("page") or 1))
        last = max(1, -(-len(items) // per_page))
        chunk = items[(page - 1) * per_page : page * per_page]

        def link(n: int) -> str:
            params = {**query, "per_page": str(per_page), "page": str(n)}
            return f"<{self.api_url}{path}?{urlencode(params)}>"

        links = []
        if page < last:
            links += [f'{link(page + 1)}; rel="next"', f'{link(last)}; rel="last"']
        if page > 1:
            links += [f'{link(1)}; rel="first"', f'{link(page - 1)}; rel="prev"']
        return chunk, ([("Link", ", ".join(links))] if links else [])

    def _commit_json(self: GitHubEmulator, r: Repo, sha: str) -> dict[str, Any]:
        data = r.bare.commit(sha)
        api, web = self._repo_api(r), self._repo_web(r)
        commit = self.shapes.rewrite(example("commit"))
        author = self._login_for_email(data.author_email)
        committer = self._login_for_email(data.committer_email)
        commit.update(
            url=f"{api}/commits/{sha}",
            sha=sha,
            node_id=f"C_{sha[:16]}",
            html_url=f"{web}/commit/{sha}",
            comments_url=f"{api}/commits/{sha}/comments",
            author=self._user_json(author) if author else None,
            committer=self._user_json(committer) if committer else None,
            parents=[
                {"sha": p, "url": f"{api}/commits/{p}", "html_url": f"{web}/commit/{p}"} for p in data.parents
            ],
            stats={"additions": 0, "deletions": 0, "total": 0},
            files=[],
        )
        commit["commit"].update(
            url=f"{api}/git/commits/{sha}",
            message=data.message,
            comment_count=0,
            author={"name": data.author_name, "email": data.author_email, "date": data.author_date},
            committer={
                "name": data.committer_name,
                "email": data.committer_email,
                "date": data.committer_date,
            },
            tree={"sha": data.tree, "url": f"{api}/git/trees/{data.tree}"},
        )
        return commit  # type: ignore[no-any-return]

    def _login_for_email(self: GitHubEmulator, email: str) -> str | None:
        for login, (uid, known) in self.users.items():
            if email in (
                known,
                f"{login}@users.noreply.github.com",
                f"{uid}+{login}@users.noreply.github.com",
            ):
                return login
        return None

    # ---- repository -------------------------------------------------------------------------------------
    @route("GET", "^/rate_limit$")
    def get_rate_limit(self: GitHubEmulator, **_: Any) -> Result:
        return 200, self.shapes.rewrite(example("rate-limit-overview")), []

    @route("GET", "")
    def get_repo(self: GitHubEmulator, r: Repo, **_: Any) -> Result:
        return 200, self._repo_json(r), []

    @route("GET", r"/collaborators/(?P<username>[^/]+)/permission")
    def get_permission(self: GitHubEmulator, r: Repo, username: str, **_: Any) -> Result:
        role = self.permission_of(r, username)
        if role is None:
            raise ApiError(
                404,
                "Not Found",
                "https://docs.github.com/rest/collaborators/collaborators#get-repository-permissions-for-a-user",
            )
        legacy = {"maintain": "write", "triage": "read"}.get(role, role)
        return 200, {"permission": legacy, "role_name": role, "user": self._user_json(username)}, []

    @route("GET", r"/contents/(?P<file_path>.+)")
    def get_contents(
        self: GitHubEmulator, r: Repo, file_path: str, query: dict[str, str], **_: Any
    ) -> Result:
        ref = query.get("ref") or r.default_branch
        data = r.bare.file(ref, file_path)
        if data is None:
            raise ApiError(
                404, "Not Found", "https://docs.github.com/rest/repos/contents#get-repository-content"
            )
        api, web = self._repo_api(r), self._repo_web(r)
        sha = r.bare.blob_sha(ref, file_path)
        return (
            200,
            {
                "type": "file",
                "encoding": "base64",
                "size": len(data),
                "name": file_path.rsplit("/", 1)[-1],
                "path": file_path,
                "content": base64.encodebytes(data).decode(),
                "sha": sha,
                "url": f"{api}/contents/{file_path}?ref={ref}",
                "git_url": f"{api}/git/blobs/{sha}",
                "html_url": f"{web}/blob/{ref}/{file_path}",
                "download_url": f"{self.server_url}/raw/{r.full_name}/{ref}/{file_path}",
            },
            [],
        )

    # ---- actions: runs, jobs, logs ------------------------------------------------------------------
    def _run(self: GitHubEmulator, r: Repo, run_id: str) -> Run:
        run = self.runs.get(int(run_id))
        if run is None or run.repo != r.full_name:
            raise _not_found()
        return run

    def _run_json(self: GitHubEmulator, run: Run, attempt: int) -> dict[str, Any]:
        r = self.repos[run.repo]
        full = self._repo_json(r)
        minimal = self.shapes.minimal_repository(full)
        lite = self.shapes.repo_lite(full)
        head_repo = minimal
        if run.fork:  # a fork: another repository, with its own id and name
            owner, name = run.fork.split("/")
            head_repo = {**minimal, "id": r.id + 1_000_000, "full_name": run.fork, "name": name, "fork": True}
            head_repo["owner"] = {**minimal["owner"], "login": owner}
        head = r.bare.commit(run.head_sha) if r.bare.has_commit(run.head_sha) else None
        head_commit = None
        if head is not None:
            head_commit = {
                "id": head.sha,
                "tree_id": head.tree,
                "message": head.message,
                "timestamp": head.committer_date,
                "author": {"name": head.author_name, "email": head.author_email},
                "committer": {"name": head.committer_name, "email": head.committer_email},
            }
        prs = []
        for number in run.pull_requests:
            pull = self._pull(r, number)
            prs.append(
                {
                    "id": pull.id,
                    "number": pull.number,
                    "url": f"{self._repo_api(r)}/pulls/{pull.number}",
                    "head": {"ref": pull.head_ref, "sha": pull.head_sha, "repo": lite},
                    "base": {
                        "ref": pull.base_ref,
                        "sha": r.bare.ref(f"refs/heads/{pull.base_ref}") or "",
                        "repo": lite,
                    },
                }
            )
        return self.shapes.run(
            self._repo_api(r),
            self._repo_web(r),
            id=run.id,
            name=run.workflow.name,
            head_branch=run.head_branch,
            head_sha=run.head_sha,
            path=run.workflow.path,
            display_title=run.display_title,
            run_number=run.run_number,
            event=run.event,
            status=run.status if attempt == run.run_attempt else "completed",
            conclusion=run.conclusions.get(attempt),
            workflow_id=run.workflow.id,
            pull_requests=prs,
            created_at=now(),
            updated_at=now(),
            run_started_at=now(),
            run_attempt=attempt,
            actor=self._user_json(run.actor),
            triggering_actor=self._user_json(run.triggering_actor),
            head_commit=head_commit,
            repository=minimal,
            head_repository=head_repo,
            head_repository_id=head_repo["id"],
        )

    def _job_json(self: GitHubEmulator, job: Job) -> dict[str, Any]:
        run = self.runs[job.run_id]
        r = self.repos[run.repo]
        steps = [
            {
                "name": s.name,
                "status": "completed",
                "conclusion": s.conclusion,
                "number": i,
                "started_at": "2026-01-01T00:00:00Z",
                "completed_at": "2026-01-01T00:00:01Z",
            }
            for i, s in enumerate(job.steps, start=1)
        ]
        return self.shapes.job(
            self._repo_api(r),
            self._repo_web(r),
            id=job.id,
            run_id=run.id,
            run_attempt=job.attempt,
            name=job.name,
            conclusion=job.conclusion,
            steps=steps,
            head_sha=run.head_sha,
            head_branch=run.head_branch,
            workflow_name=run.workflow.name,
            created_at="2026-01-01T00:00:00Z",
            started_at="2026-01-01T00:00:00Z",
            completed_at="2026-01-01T00:00:01Z",
        )

    @route("GET", r"/actions/runs")
    def list_runs(self: GitHubEmulator, r: Repo, query: dict[str, str], **_: Any) -> Result:
        runs = [run for run in sorted(self.runs.values(), key=lambda x: -x.id) if run.repo == r.full_name]
        for key, attr in (("branch", "head_branch"), ("head_sha", "head_sha"), ("event", "event")):
            if query.get(key):
                runs = [run for run in runs if getattr(run, attr) == query[key]]
        if query.get("status"):
            runs = [run for run in runs if query["status"] in (run.status, run.conclusion)]
        chunk, links = self._paginate(runs, query, f"/repos/{r.full_name}/actions/runs")
        return (
            200,
            {"total_count": len(runs), "workflow_runs": [self._run_json(x, x.run_attempt) for x in chunk]},
            links,
        )

    @route("GET", r"/actions/runs/(?P<run_id>\d+)")
    def get_run(self: GitHubEmulator, r: Repo, run_id: str, **_: Any) -> Result:
        run = self._run(r, run_id)
        return 200, self._run_json(run, run.run_attempt), []

    @route("GET", r"/actions/runs/(?P<run_id>\d+)/attempts/(?P<attempt>\d+)")
    def get_attempt(self: GitHubEmulator, r: Repo, run_id: str, attempt: str, **_: Any) -> Result:
        run = self._run(r, run_id)
        if int(attempt) not in run.attempts:
            raise _not_found()
        return 200, self._run_json(run, int(attempt)), []

    @route("GET", r"/actions/runs/(?P<run_id>\d+)/jobs")
    def list_jobs(self: GitHubEmulator, r: Repo, run_id: str, query: dict[str, str], **_: Any) -> Result:
        run = self._run(r, run_id)
        which = query.get("filter") or "latest"
        if which not in ("latest", "all"):
            raise _validation(
                "https://docs.github.com/rest/actions/workflow-jobs",
                resource="Job",
                field="filter",
                code="invalid",
            )
        jobs = run.jobs if which == "latest" else [j for n in sorted(run.attempts) for j in run.attempts[n]]
        return self._jobs_page(jobs, query, f"/repos/{r.full_name}/actions/runs/{run.id}/jobs")

    @route("GET", r"/actions/runs/(?P<run_id>\d+)/attempts/(?P<attempt>\d+)/jobs")
    def list_attempt_jobs(
        self: GitHubEmulator, r: Repo, run_id: str, attempt: str, query: dict[str, str], **_: Any
    ) -> Result:
        run = self._run(r, run_id)
        if int(attempt) not in run.attempts:
            raise _not_found()
        return self._jobs_page(
            run.attempts[int(attempt)],
            query,
            f"/repos/{r.full_name}/actions/runs/{run.id}/attempts/{attempt}/jobs",
        )

    def _jobs_page(self: GitHubEmulator, jobs: list[Job], query: dict[str, str], path: str) -> Result:
        chunk, links = self._paginate(jobs, query, path)
        return 200, {"total_count": len(jobs), "jobs": [self._job_json(j) for j in chunk]}, links

    def _job(self: GitHubEmulator, r: Repo, job_id: str) -> Job:
        job = self.jobs.get(int(job_id))
        if job is None or self.runs[job.run_id].repo != r.full_name:
            raise _not_found()
        return job

    @route("GET", r"/actions/jobs/(?P<job_id>\d+)")
    def get_job(self: GitHubEmulator, r: Repo, job_id: str, **_: Any) -> Result:
        return 200, self._job_json(self._job(r, job_id)), []

    @route("GET", r"/actions/jobs/(?P<job_id>\d+)/logs")
    def get_job_logs(self: GitHubEmulator, r: Repo, job_id: str, **_: Any) -> Result:
        job = self._job(r, job_id)
        docs = "https://docs.github.com/rest/actions/workflow-jobs#download-job-logs-for-a-workflow-run"
        if job.logs_expired:
            raise ApiError(410, "Server Error", docs)
        if job.logs_missing:
            raise ApiError(404, "Not Found", docs)
        log = job.log if job.log.startswith(b"\xef\xbb\xbf") else b"\xef\xbb\xbf" + job.log
        return 302, None, [("Location", self.sign_blob("text/plain; charset=utf-8", log))]

    @route("GET", r"/actions/runs/(?P<run_id>\d+)/logs")
    def get_run_logs(self: GitHubEmulator, r: Repo, run_id: str, **_: Any) -> Result:
        run = self._run(r, run_id)
        if any(job.logs_expired for job in run.jobs):
            raise ApiError(
                410,
                "Server Error",
                "https://docs.github.com/rest/actions/workflow-runs#download-workflow-run-logs",
            )
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as archive:
            for i, job in enumerate(run.jobs):
                archive.writestr(f"{i}_{job.name}.txt", b"\xef\xbb\xbf" + job.log)
        return 302, None, [("Location", self.sign_blob("application/zip", buffer.getvalue()))]

    @route("POST", r"/actions/runs/(?P<run_id>\d+)/rerun-failed-jobs")
    def rerun_failed(self: GitHubEmulator, r: Repo, run_id: str, **_: Any) -> Result:
        from tests.testing.emulator.state import Rerun

        run = self._run(r, run_id)
        if run.status != "completed":
            raise ApiError(
                403,
                "This workflow run is not completed",
                "https://docs.github.com/rest/actions/workflow-runs#re-run-failed-jobs-from-a-workflow-run",
            )
        self.reruns.append(Rerun(r.full_name, run.id, "failed-jobs"))
        return 201, {}, []

    # ---- check runs -------------------------------------------------------------------------------
    def _annotation_json(self: GitHubEmulator, r: Repo, run: Run, given: dict[str, Any]) -> dict[str, Any]:
        path = given.get("path", ".github")
        line = given.get("start_line", 1)
        return {
            "path": path,
            "blob_href": f"{self._repo_web(r)}/blob/{run.head_sha}/{path}",
            "start_line": line,
            "end_line": given.get("end_line", line),
            "start_column": given.get("start_column"),
            "end_column": given.get("end_column"),
            "annotation_level": given.get("annotation_level", "failure"),
            "title": given.get("title", ""),
            "message": given.get("message", ""),
            "raw_details": given.get("raw_details", ""),
        }

    @route("GET", r"/check-runs/(?P<job_id>\d+)")
    def get_check_run(self: GitHubEmulator, r: Repo, job_id: str, **_: Any) -> Result:
        job = self._job(r, job_id)
        run = self.runs[job.run_id]
        check = self.shapes.rewrite(example("check-run"))
        api = self._repo_api(r)
        check.update(
            id=job.id,
            head_sha=run.head_sha,
            node_id=f"CR_{job.id}",
            name=job.name,
            url=f"{api}/check-runs/{job.id}",
            html_url=f"{self._repo_web(r)}/runs/{job.id}",
            status="completed",
            conclusion=job.conclusion,
            pull_requests=[],
        )
        check["output"].update(
            annotations_count=len(job.annotations), annotations_url=f"{api}/check-runs/{job.id}/annotations"
        )
        check["check_suite"] = {"id": run.id}
        return 200, check, []

    @route("GET", r"/check-runs/(?P<job_id>\d+)/annotations")
    def list_annotations(
        self: GitHubEmulator, r: Repo, job_id: str, query: dict[str, str], **_: Any
    ) -> Result:
        job = self._job(r, job_id)
        run = self.runs[job.run_id]
        items = [self._annotation_json(r, run, a) for a in job.annotations]
        chunk, links = self._paginate(items, query, f"/repos/{r.full_name}/check-runs/{job.id}/annotations")
        return 200, chunk, links

    # ---- workflows -----------------------------------------------------------------------------------
    def _workflow(self: GitHubEmulator, r: Repo, workflow_id: str) -> Any:
        for wf in r.workflows.values():
            if workflow_id in (str(wf.id), wf.path.rsplit("/", 1)[-1], wf.path):
                return wf
        raise _not_found()

    @route("GET", r"/actions/workflows/(?P<workflow_id>[^/]+)")
    def get_workflow(self: GitHubEmulator, r: Repo, workflow_id: str, **_: Any) -> Result:
        wf = self._workflow(r, workflow_id)
        return 200, self.shapes.workflow(self._repo_api(r), self._repo_web(r), wf.id, wf.name, wf.path), []

    @route("POST", r"/actions/workflows/(?P<workflow_id>[^/]+)/dispatches")
    def dispatch(self: GitHubEmulator, r: Repo, workflow_id: str, body: Any, login: str, **_: Any) -> Result:
        from tests.testing.emulator.state import Dispatch

        wf = self._workflow(r, workflow_id)
        docs = "https://docs.github.com/rest/actions/workflows#create-a-workflow-dispatch-event"
        body = body or {}
        if not wf.dispatch:
            raise ApiError(422, "Workflow does not have 'workflow_dispatch' trigger", docs)
        ref = str(body.get("ref", ""))
        branch = ref.removeprefix("refs/heads/")
        sha = r.bare.ref(f"refs/heads/{branch}") or r.bare.ref(f"refs/tags/{ref.removeprefix('refs/tags/')}")
        if sha is None:
            raise ApiError(422, f"No ref found for: {ref}", docs)
        inputs = body.get("inputs") or {}
        for name, spec in wf.inputs.items():
            if spec.get("required") and name not in inputs:
                raise ApiError(422, f"Required input '{name}' not provided", docs)
        for name in inputs:
            if name not in wf.inputs:
                raise ApiError(422, f'Unexpected inputs provided: ["{name}"]', docs)
        self.dispatches.append(Dispatch(r.full_name, wf.path, ref, dict(inputs)))
        run = self.add_workflow_run(
            r.full_name, wf.path, branch, sha, None, event="workflow_dispatch", actor=login, status="queued"
        )
        if body.get("return_run_details"):
            return (
                200,
                {
                    "workflow_run_id": run.id,
                    "run_url": f"{self._repo_api(r)}/actions/runs/{run.id}",
                    "html_url": f"{self._repo_web(r)}/actions/runs/{run.id}",
                },
                [],
            )
        return 204, None, []

    # ---- git refs ------------------------------------------------------------------------------------
    @route("GET", r"/git/ref/(?P<ref>.+)")
    def get_ref(self: GitHubEmulator, r: Repo, ref: str, **_: Any) -> Result:
        sha = r.bare.ref(f"refs/{ref}")
        if sha is None:
            raise ApiError(404, "Not Found", "https://docs.github.com/rest/git/refs#get-a-reference")
        return 200, self.shapes.git_ref(self._repo_api(r), f"refs/{ref}", sha), []

    @route("GET", r"/git/matching-refs/(?P<ref>.+)")
    def matching_refs(self: GitHubEmulator, r: Repo, ref: str, **_: Any) -> Result:
        prefix = f"refs/{ref}"
        items = [
            self.shapes.git_ref(self._repo_api(r), name, sha)
            for name, sha in sorted(r.bare.refs().items())
            if name.startswith(prefix)
        ]
        return 200, items, []

    @route("POST", r"/git/refs")
    def create_ref(self: GitHubEmulator, r: Repo, body: Any, **_: Any) -> Result:
        docs = "https://docs.github.com/rest/git/refs#create-a-reference"
        name, sha = str(body.get("ref", "")), str(body.get("sha", ""))
        if not name.startswith("refs/") or name.count("/") < 2:
            raise ApiError(422, "Reference name is invalid", docs)
        if not _SHA.match(sha) or not r.bare.has_commit(sha):
            raise ApiError(422, "Object does not exist", docs)
        if r.bare.ref(name) is not None or not r.bare.update_ref(name, sha, "0" * 40):
            raise ApiError(422, "Reference already exists", docs)
        location = f"{self._repo_api(r)}/git/{name}"
        return 201, self.shapes.git_ref(self._repo_api(r), name, sha), [("Location", location)]

    @route("PATCH", r"/git/refs/(?P<ref>.+)")
    def update_ref(self: GitHubEmulator, r: Repo, ref: str, body: Any, **_: Any) -> Result:
        docs = "https://docs.github.com/rest/git/refs#update-a-reference"
        name, sha = f"refs/{ref}", str(body.get("sha", ""))
        old = r.bare.ref(name)
        if old is None:
            raise ApiError(422, "Reference does not exist", docs)
        if not _SHA.match(sha) or not r.bare.has_commit(sha):
            raise ApiError(422, "Object does not exist", docs)
        if not body.get("force") and not r.bare.is_ancestor(old, sha):
            raise ApiError(422, "Update is not a fast forward", docs)
        if not r.bare.update_ref(name, sha, old):
            raise ApiError(409, "Reference update failed", docs)
        return 200, self.shapes.git_ref(self._repo_api(r), name, sha), []

    @route("DELETE", r"/git/refs/(?P<ref>.+)")
    def delete_ref(self: GitHubEmulator, r: Repo, ref: str, **_: Any) -> Result:
        docs = "https://docs.github.com/rest/git/refs#delete-a-reference"
        if ref == f"heads/{r.default_branch}":
            raise ApiError(422, "Cannot delete the default branch", docs)
        if r.bare.ref(f"refs/{ref}") is None or not r.bare.delete_ref(f"refs/{ref}"):
            raise ApiError(422, "Reference does not exist", docs)
        return 204, None, []

    # ---- commits ------------------------------------------------------------------------------------
    @route("GET", r"/commits/(?P<ref>[^/]+)")
    def get_commit(self: GitHubEmulator, r: Repo, ref: str, **_: Any) -> Result:
        sha = r.bare.resolve(ref)
        if sha is None:
            raise ApiError(
                422,
                f"No commit found for SHA: {ref}",
                "https://docs.github.com/rest/commits/commits#get-a-commit",
            )
        return 200, self._commit_json(r, sha), []

    @route("GET", r"/commits/(?P<sha>[^/]+)/pulls")
    def commit_pulls(self: GitHubEmulator, r: Repo, sha: str, query: dict[str, str], **_: Any) -> Result:
        resolved = r.bare.resolve(sha)
        if resolved is None:
            raise ApiError(
                422,
                f"No commit found for SHA: {sha}",
                "https://docs.github.com/rest/commits/commits#list-pull-requests-associated-with-a-commit",
            )
        found = []
        for pull in sorted(r.pulls.values(), key=lambda p: -p.number):
            self._refresh_pull(r, pull)
            base = r.bare.ref(f"refs/heads/{pull.base_ref}")
            contains = pull.head_sha == resolved or (
                r.bare.has_commit(pull.head_sha)
                and r.bare.is_ancestor(resolved, pull.head_sha)
                and not (base and r.bare.is_ancestor(resolved, base))
            )
            if contains:
                found.append(self._pull_json(r, pull))
        chunk, links = self._paginate(found, query, f"/repos/{r.full_name}/commits/{sha}/pulls")
        return 200, chunk, links

    # ---- commit statuses ------------------------------------------------------------------------------
    def _status_json(self: GitHubEmulator, r: Repo, status: Status) -> dict[str, Any]:
        out = self.shapes.rewrite(example("status"))
        creator = self._user_json(status.creator)
        out.update(
            url=f"{self._repo_api(r)}/statuses/{status.sha}",
            avatar_url=creator["avatar_url"],
            id=status.id,
            node_id=f"SC_{status.id}",
            state=status.state,
            description=status.description,
            target_url=status.target_url,
            context=status.context,
            created_at=status.created_at,
            updated_at=status.created_at,
            creator=creator,
        )
        return out  # type: ignore[no-any-return]

    @route("POST", r"/statuses/(?P<sha>[^/]+)")
    def create_status(self: GitHubEmulator, r: Repo, sha: str, body: Any, login: str, **_: Any) -> Result:
        """The status's creator is whoever the token acts as: no one can create one for another."""
        docs = "https://docs.github.com/rest/commits/statuses#create-a-commit-status"
        if not _SHA.match(sha) or not r.bare.has_commit(sha):
            raise ApiError(422, f"No commit found for SHA: {sha}", docs)
        context = str(body.get("context") or "default")
        same = [s for s in r.statuses if s.sha == sha and s.context.lower() == context.lower()]
        if len(same) >= 1000:
            raise _validation(
                docs,
                resource="Status",
                code="custom",
                message="This SHA and context has reached the maximum number of statuses.",
            )
        status = self._new_status(
            r, sha, str(body["state"]), context, body.get("description"), body.get("target_url"), login
        )
        location = f"{self._repo_api(r)}/statuses/{sha}"
        return 201, self._status_json(r, status), [("Location", location)]

    def _statuses(self: GitHubEmulator, r: Repo, ref: str, query: dict[str, str], path: str) -> Result:
        sha = r.bare.resolve(ref)
        if sha is None:
            raise _not_found()
        newest_first = [self._status_json(r, s) for s in reversed(r.statuses) if s.sha == sha]
        chunk, links = self._paginate(newest_first, query, path)
        return 200, chunk, links

    @route("GET", r"/commits/(?P<ref>[^/]+)/statuses")
    def list_statuses(self: GitHubEmulator, r: Repo, ref: str, query: dict[str, str], **_: Any) -> Result:
        return self._statuses(r, ref, query, f"/repos/{r.full_name}/commits/{ref}/statuses")

    @route("GET", r"/statuses/(?P<sha>[^/]+)")
    def list_statuses_legacy(
        self: GitHubEmulator, r: Repo, sha: str, query: dict[str, str], **_: Any
    ) -> Result:
        """`GET /repos/{o}/{r}/statuses/{ref}`, the legacy route PyGithub's `get_statuses` uses."""
        return self._statuses(r, sha, query, f"/repos/{r.full_name}/statuses/{sha}")

    # ---- pull requests --------------------------------------------------------------------------------
    def _pull(self: GitHubEmulator, r: Repo, number: int | str) -> Pull:
        pull = r.pulls.get(int(number))
        if pull is None:
            raise _not_found()
        self._refresh_pull(r, pull)
        return pull

    def _refresh_pull(self: GitHubEmulator, r: Repo, pull: Pull) -> None:
        live = r.bare.ref(f"refs/heads/{pull.head_ref}")
        if live is not None and pull.state == "open":
            pull.head_sha = live
        base = r.bare.ref(f"refs/heads/{pull.base_ref}")
        if (
            pull.state == "open"
            and base
            and pull.head_sha != base
            and r.bare.is_ancestor(pull.head_sha, base)
        ):
            pull.state, pull.merged, pull.closed_at = "closed", True, now()

    def _pull_json(self: GitHubEmulator, r: Repo, pull: Pull) -> dict[str, Any]:
        api, web = self._repo_api(r), self._repo_web(r)
        n = pull.number
        owner = r.full_name.split("/")[0]
        repo_json = self._repo_json(r)
        owner_json = self._user_json(owner)
        base_sha = r.bare.ref(f"refs/heads/{pull.base_ref}") or ""
        out = self.shapes.rewrite(example("pull-request"))
        out.update(
            url=f"{api}/pulls/{n}",
            id=pull.id,
            node_id=f"PR_{pull.id}",
            html_url=f"{web}/pull/{n}",
            diff_url=f"{web}/pull/{n}.diff",
            patch_url=f"{web}/pull/{n}.patch",
            issue_url=f"{api}/issues/{n}",
            commits_url=f"{api}/pulls/{n}/commits",
            review_comments_url=f"{api}/pulls/{n}/comments",
            review_comment_url=f"{api}/pulls/comments{{/number}}",
            comments_url=f"{api}/issues/{n}/comments",
            statuses_url=f"{api}/statuses/{pull.head_sha}",
            number=n,
            state=pull.state,
            locked=False,
            active_lock_reason=None,
            title=pull.title,
            user=self._user_json(pull.user),
            body=pull.body,
            labels=[self.shapes.label(api, self._label_id(r, name), name) for name in pull.labels],
            milestone=None,
            created_at=pull.created_at,
            updated_at=now(),
            closed_at=pull.closed_at,
            merged_at=pull.closed_at if pull.merged else None,
            merge_commit_sha=None,
            assignee=None,
            assignees=[],
            requested_reviewers=[self._user_json(u) for u in pull.requested_reviewers],
            requested_teams=[
                self.shapes.team(t.split("/")[0], abs(hash(t)) % 10**6, t.split("/")[1])
                for t in pull.requested_teams
            ],
            head={
                "label": f"{(pull.fork or r.full_name).split('/')[0]}:{pull.head_ref}",
                "ref": pull.head_ref,
                "sha": pull.head_sha,
                "user": owner_json,
                "repo": {**repo_json, "full_name": pull.fork, "id": repo_json["id"] + 1}
                if pull.fork
                else repo_json,
            },
            base={
                "label": f"{owner}:{pull.base_ref}",
                "ref": pull.base_ref,
                "sha": base_sha,
                "user": owner_json,
                "repo": repo_json,
            },
            _links={
                "self": {"href": f"{api}/pulls/{n}"},
                "html": {"href": f"{web}/pull/{n}"},
                "issue": {"href": f"{api}/issues/{n}"},
                "comments": {"href": f"{api}/issues/{n}/comments"},
                "review_comments": {"href": f"{api}/pulls/{n}/comments"},
                "review_comment": {"href": f"{api}/pulls/comments{{/number}}"},
                "commits": {"href": f"{api}/pulls/{n}/commits"},
                "statuses": {"href": f"{api}/statuses/{pull.head_sha}"},
            },
            author_association="CONTRIBUTOR",
            auto_merge=None,
            draft=pull.draft,
            merged=pull.merged,
            mergeable=None,
            rebaseable=None,
            mergeable_state="unknown",
            merged_by=None,
            comments=len(pull.comments),
            review_comments=len(pull.review_comments),
            commits=1,
            additions=0,
            deletions=0,
            changed_files=0,
        )
        return out  # type: ignore[no-any-return]

    @route("GET", r"/pulls")
    def list_pulls(self: GitHubEmulator, r: Repo, query: dict[str, str], **_: Any) -> Result:
        state = query.get("state") or "open"
        pulls = [self._pull(r, p.number) for p in sorted(r.pulls.values(), key=lambda p: -p.number)]
        if state != "all":
            pulls = [p for p in pulls if p.state == state]
        if query.get("head"):
            owner, _, branch = query["head"].partition(":")
            if not branch or owner != r.full_name.split("/")[0]:
                pulls = []
            else:
                pulls = [p for p in pulls if p.head_ref == branch]
        if query.get("base"):
            pulls = [p for p in pulls if p.base_ref == query["base"]]
        chunk, links = self._paginate(
            [self._pull_json(r, p) for p in pulls], query, f"/repos/{r.full_name}/pulls"
        )
        return 200, chunk, links

    @route("POST", r"/pulls")
    def create_pull(self: GitHubEmulator, r: Repo, body: Any, login: str, **_: Any) -> Result:
        docs = "https://docs.github.com/rest/pulls/pulls#create-a-pull-request"
        owner = r.full_name.split("/")[0]
        head = str(body.get("head", ""))
        head_owner, _, head_branch = head.rpartition(":")
        base = str(body.get("base", ""))
        base_sha = r.bare.ref(f"refs/heads/{base}")
        head_sha = r.bare.ref(f"refs/heads/{head_branch}") if head_owner in ("", owner) else None
        if base_sha is None:
            raise _validation(docs, resource="PullRequest", field="base", code="invalid")
        if head_sha is None:
            raise _validation(docs, resource="PullRequest", field="head", code="invalid")
        for pull in r.pulls.values():
            self._refresh_pull(r, pull)
            if pull.state == "open" and pull.head_ref == head_branch and pull.base_ref == base:
                raise _validation(
                    docs,
                    resource="PullRequest",
                    code="custom",
                    message=f"A pull request already exists for {owner}:{head_branch}.",
                )
        if r.bare.is_ancestor(head_sha, base_sha):
            raise _validation(
                docs,
                resource="PullRequest",
                code="custom",
                message=f"No commits between {base} and {head_branch}",
            )
        pull = self._new_pull(
            r,
            head_branch,
            head_sha,
            base,
            str(body.get("title") or head_branch),
            body.get("body"),
            login,
            bool(body.get("draft", False)),
        )
        return 201, self._pull_json(r, pull), [("Location", f"{self._repo_api(r)}/pulls/{pull.number}")]

    @route("GET", r"/pulls/(?P<number>\d+)")
    def get_pull(self: GitHubEmulator, r: Repo, number: str, **_: Any) -> Result:
        return 200, self._pull_json(r, self._pull(r, number)), []

    @route("PATCH", r"/pulls/(?P<number>\d+)")
    def update_pull(self: GitHubEmulator, r: Repo, number: str, body: Any, **_: Any) -> Result:
        pull = self._pull(r, number)
        body = body or {}
        if "title" in body:
            pull.title = body["title"]
        if "body" in body:
            pull.body = body["body"]
        if "base" in body:
            if r.bare.ref(f"refs/heads/{body['base']}") is None:
                raise _validation(
                    "https://docs.github.com/rest/pulls/pulls#update-a-pull-request",
                    resource="PullRequest",
                    field="base",
                    code="invalid",
                )
            pull.base_ref = body["base"]
        if body.get("state") == "closed" and pull.state == "open":
            pull.state, pull.closed_at = "closed", now()
        elif body.get("state") == "open" and pull.state == "closed" and not pull.merged:
            pull.state, pull.closed_at = "open", None
        return 200, self._pull_json(r, pull), []

    @route("POST", r"/pulls/(?P<number>\d+)/requested_reviewers")
    def request_reviewers(self: GitHubEmulator, r: Repo, number: str, body: Any, **_: Any) -> Result:
        pull = self._pull(r, number)
        docs = "https://docs.github.com/rest/pulls/review-requests#request-reviewers-for-a-pull-request"
        users = [str(u) for u in (body or {}).get("reviewers") or []]
        teams = [str(t) for t in (body or {}).get("team_reviewers") or []]
        org = r.full_name.split("/")[0]
        if pull.user in users:
            raise ApiError(422, "Review cannot be requested from pull request author.", docs)
        not_collaborators = [u for u in users if self.permission_of(r, u) in (None, "none")]
        unknown_teams = [t for t in teams if f"{org}/{t}" not in r.teams]
        if not_collaborators or unknown_teams:
            raise ApiError(
                422,
                "Reviews may only be requested from collaborators. One or more of the users or "
                f"teams you specified is not a collaborator of the {r.full_name} repository.",
                docs,
            )
        for login in users:
            if login not in pull.requested_reviewers:
                pull.requested_reviewers.append(login)
        for team in teams:
            if f"{org}/{team}" not in pull.requested_teams:
                pull.requested_teams.append(f"{org}/{team}")
        return 201, self._pull_json(r, pull), []

    # ---- issues side of pull requests --------------------------------------------------------------------
    @route("GET", r"/issues/(?P<number>\d+)/comments")
    def list_comments(self: GitHubEmulator, r: Repo, number: str, query: dict[str, str], **_: Any) -> Result:
        pull = self._pull(r, number)
        items = [
            self.shapes.comment(
                self._repo_api(r), self._repo_web(r), c.id, pull.number, c.body, self._user_json(c.user)
            )
            for c in pull.comments
        ]
        chunk, links = self._paginate(items, query, f"/repos/{r.full_name}/issues/{number}/comments")
        return 200, chunk, links

    @route("POST", r"/issues/(?P<number>\d+)/comments")
    def create_comment(self: GitHubEmulator, r: Repo, number: str, body: Any, login: str, **_: Any) -> Result:
        pull = self._pull(r, number)
        text = (body or {}).get("body")
        if not isinstance(text, str) or not text:
            raise _validation(
                "https://docs.github.com/rest/issues/comments#create-an-issue-comment",
                resource="IssueComment",
                field="body",
                code="missing_field",
            )
        comment = self._comment(r, pull, login, text)
        api = self._repo_api(r)
        out = self.shapes.comment(
            api, self._repo_web(r), comment.id, pull.number, text, self._user_json(login)
        )
        return 201, out, [("Location", f"{api}/issues/comments/{comment.id}")]

    @route("PATCH", r"/issues/comments/(?P<comment_id>\d+)")
    def edit_comment(
        self: GitHubEmulator, r: Repo, comment_id: str, body: Any, login: str, **_: Any
    ) -> Result:
        for pull in r.pulls.values():
            for comment in pull.comments:
                if comment.id == int(comment_id):
                    self._edit(r, comment, body, login)
                    return 200, self._comment_json(r, pull.number, comment), []
        raise _not_found()

    def _edit(self: GitHubEmulator, r: Repo, comment: Comment, body: Any, login: str) -> None:
        """An edit by the comment's author, or by someone who may write to the repository."""
        if comment.user != login and self.permission_of(r, login) not in ("admin", "maintain", "write"):
            raise ApiError(403, "Resource not accessible by integration", _DOCS_EDIT_COMMENT)
        comment.body = str((body or {}).get("body") or "")

    def _comment_json(self: GitHubEmulator, r: Repo, number: int, comment: Comment) -> dict[str, Any]:
        return self.shapes.comment(
            self._repo_api(r),
            self._repo_web(r),
            comment.id,
            number,
            comment.body,
            self._user_json(comment.user),
        )

    @route("DELETE", r"/issues/(?P<number>\d+)/labels/(?P<label>[^/]+)")
    def remove_label(self: GitHubEmulator, r: Repo, number: str, label: str, **_: Any) -> Result:
        pull = self._pull(r, number)
        label = unquote(label)
        if label not in pull.labels:
            raise ApiError(
                404,
                "Label does not exist",
                "https://docs.github.com/rest/issues/labels#remove-a-label-from-an-issue",
            )
        pull.labels.remove(label)
        api = self._repo_api(r)
        return 200, [self.shapes.label(api, self._label_id(r, n), n) for n in pull.labels], []

    # ---- commit comments --------------------------------------------------------------------------------
    @route("GET", r"/commits/(?P<sha>[0-9a-f]{40})/comments")
    def list_commit_comments(
        self: GitHubEmulator, r: Repo, sha: str, query: dict[str, str], **_: Any
    ) -> Result:
        items = [self._commit_comment_json(r, c) for c in r.commit_comments if c.commit_id == sha]
        chunk, links = self._paginate(items, query, f"/repos/{r.full_name}/commits/{sha}/comments")
        return 200, chunk, links

    @route("POST", r"/commits/(?P<sha>[0-9a-f]{40})/comments")
    def create_commit_comment(
        self: GitHubEmulator, r: Repo, sha: str, body: Any, login: str, **_: Any
    ) -> Result:
        if r.bare.resolve(sha) is None:
            raise _not_found()
        text = (body or {}).get("body")
        if not isinstance(text, str) or not text:
            raise _validation(
                "https://docs.github.com/rest/commits/comments#create-a-commit-comment",
                resource="CommitComment",
                field="body",
                code="missing_field",
            )
        comment = Comment(self.new_id(), login, text, commit_id=sha)
        r.commit_comments.append(comment)
        out = self._commit_comment_json(r, comment)
        return 201, out, [("Location", out["url"])]

    @route("PATCH", r"/comments/(?P<comment_id>\d+)")
    def edit_commit_comment(
        self: GitHubEmulator, r: Repo, comment_id: str, body: Any, login: str, **_: Any
    ) -> Result:
        for comment in r.commit_comments:
            if comment.id == int(comment_id):
                self._edit(r, comment, body, login)
                return 200, self._commit_comment_json(r, comment), []
        raise _not_found()

    def _commit_comment_json(self: GitHubEmulator, r: Repo, comment: Comment) -> dict[str, Any]:
        return self.shapes.commit_comment(
            self._repo_api(r),
            self._repo_web(r),
            comment.id,
            comment.commit_id,
            comment.body,
            self._user_json(comment.user),
        )

    @route("POST", r"/issues/(?P<number>\d+)/labels")
    def add_labels(self: GitHubEmulator, r: Repo, number: str, body: Any, **_: Any) -> Result:
        pull = self._pull(r, number)
        given = body.get("labels", []) if isinstance(body, dict) else body or []
        for item in given:
            name = item["name"] if isinstance(item, dict) else str(item)
            self._label_id(r, name)
            if name not in pull.labels:
                pull.labels.append(name)
        api = self._repo_api(r)
        return 200, [self.shapes.label(api, self._label_id(r, name), name) for name in pull.labels], []
