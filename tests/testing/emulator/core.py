"""The stateful GitHub emulator: seeding, inspection, and the request pipeline.

One server carries the REST API under `/api/v3` (GHES layout, so `GITHUB_API_URL` is
`http://127.0.0.1:P/api/v3`) and git's smart HTTP at `/<owner>/<repo>.git` (so
`GITHUB_SERVER_URL` is `http://127.0.0.1:P`). A second server on another port plays the signed
log-blob host: the job-log redirect crosses hosts, and that host refuses any request that
carries an `Authorization` header, as the real signed URLs do.

Every API request goes through: OpenAPI request check → authentication → injected faults →
permission denials → the route → OpenAPI response check → rate-limit headers. Any request, on
any of the three (API, git, blob), may be answered late (`delay`); git and blob requests may be
failed too (`fail_git`, `fail_blob`).
"""

from __future__ import annotations

import base64
import itertools
import json
import re
import secrets
import shutil
import tempfile
import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

from tests.testing.emulator import openapi
from tests.testing.emulator.bare import BareRepo, http_backend
from tests.testing.emulator.reviews import ReviewRoutes
from tests.testing.emulator.routes import ApiError, Routes
from tests.testing.emulator.servers import Request, Response, Server
from tests.testing.emulator.shapes import Shapes
from tests.testing.emulator.state import (
    Comment,
    Delay,
    Denial,
    Dispatch,
    Fault,
    Job,
    JobSpec,
    Pull,
    PushRule,
    Repo,
    RequestRecord,
    Rerun,
    Run,
    Status,
    Workflow,
)

DEFAULT_TOKEN = "ghs_emulatorToken0123456789abcdefABCDEF"
BOT = "github-actions[bot]"
RATE_LIMIT = 5000
DOCS = "https://docs.github.com/rest"
_GIT_PATH = re.compile(r"^/(?P<owner>[^/]+)/(?P<name>[^/]+?)\.git(?P<rest>/.*)$")
_PERMISSION_LEVELS = ("none", "read", "triage", "write", "maintain", "admin")


def error_body(status: int, message: str, docs: str = DOCS, **extra: Any) -> dict[str, Any]:
    return {"message": message, "documentation_url": docs, **extra, "status": str(status)}


class GitHubEmulator(Routes, ReviewRoutes):
    """A GitHub for tests. Start with `GitHubEmulator.start(tmp_dir)`; `close()` stops it."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.git_root = root / "git"
        self.git_root.mkdir(parents=True, exist_ok=True)
        self.tokens: dict[str, str] = {DEFAULT_TOKEN: BOT}
        self.push_allowed: dict[str, bool] = {DEFAULT_TOKEN: True}
        self.workflows_allowed: dict[str, bool] = {DEFAULT_TOKEN: False}
        self.token = DEFAULT_TOKEN
        self.users: dict[str, tuple[int, str | None]] = {}
        self.user_permissions: dict[str, str] = {}
        self.repos: dict[str, Repo] = {}
        self.runs: dict[int, Run] = {}
        self.jobs: dict[int, Job] = {}
        self.dispatches: list[Dispatch] = []
        self.reruns: list[Rerun] = []
        self.requests: list[RequestRecord] = []
        self.violations: list[openapi.Violation] = []
        self.faults: list[Fault] = []
        self.delays: list[Delay] = []
        self.denials: list[Denial] = []
        self.blobs: dict[str, tuple[str, bytes]] = {}
        self.rate_used = 0
        self._ids = itertools.count(1001)
        self._lock = threading.RLock()
        self.spec = openapi.load()
        self._api_server = Server(self._serve)
        self._blob_server = Server(self._serve_blob)
        self.server_url = self._api_server.url
        self.api_url = f"{self.server_url}/api/v3"
        self.blob_url = self._blob_server.url
        self.shapes = Shapes(self.api_url, self.server_url)
        self.add_user(BOT, permission="write")

    @classmethod
    def start(cls, root: Path | None = None) -> GitHubEmulator:
        return cls(root or Path(tempfile.mkdtemp(prefix="gh-emulator-")))

    def close(self) -> None:
        self._api_server.close()
        self._blob_server.close()

    def __enter__(self) -> GitHubEmulator:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def server_errors(self) -> list[Exception]:
        """Exceptions raised inside the emulator itself (bugs), answered as 500."""
        return self._api_server.errors + self._blob_server.errors

    def new_id(self) -> int:
        return next(self._ids)

    # ---- seeding ------------------------------------------------------------------------------
    def add_token(self, token: str, login: str, *, push: bool = True, workflows: bool = True) -> None:
        """Accept another token, acting as `login` (a PAT or App token: by default it may push and
        may change workflow files, unlike the default token, which plays `GITHUB_TOKEN`)."""
        self.tokens[token] = login
        self.push_allowed[token] = push
        self.workflows_allowed[token] = workflows
        if login not in self.users:
            self.add_user(login)

    def add_user(
        self, login: str, permission: str = "none", *, email: str | None = None, repo: str | None = None
    ) -> None:
        """A user; `permission` (admin|maintain|write|triage|read|none) applies to every repository,
        or to `repo` only. Commits authored with `email` are attributed to this user."""
        if permission not in _PERMISSION_LEVELS:
            raise ValueError(f"unknown permission {permission!r}")
        if login not in self.users or email:
            uid = self.users[login][0] if login in self.users else self.new_id()
            self.users[login] = (uid, email or f"{login}@users.noreply.github.com")
        if repo is None:
            self.user_permissions[login] = permission
        else:
            self.repos[repo].permissions[login] = permission

    def add_team(self, repo: str, team: str) -> None:
        """A team (`org/slug`) that may be requested for review on `repo`."""
        self.repos[repo].teams.add(team)

    def create_repo(
        self, full_name: str, *, source: Path | None = None, default_branch: str = "main"
    ) -> Repo:
        """A repository backed by a bare git repo; `source` (a local git repo) is pushed into it."""
        owner, name = full_name.split("/")
        bare = BareRepo.create(self.git_root / owner / f"{name}.git", default_branch)
        if source is not None:
            bare.push_from(source)
        if owner not in self.users:
            self.add_user(owner)
        repo = Repo(full_name, self.new_id(), bare, default_branch, self.users[owner][0])
        repo.permissions[owner] = "admin"
        self.repos[full_name] = repo
        return repo

    def add_workflow(
        self,
        repo: str,
        path: str = ".github/workflows/ci.yml",
        name: str = "CI",
        *,
        dispatch: bool = False,
        inputs: dict[str, dict[str, Any]] | None = None,
    ) -> Workflow:
        """A workflow. `dispatch`: whether it has a `workflow_dispatch` trigger; `inputs`: its
        dispatch inputs (`{"pull-request": {"required": True}}`)."""
        workflow = Workflow(self.new_id(), path, name, dispatch, inputs or {})
        self.repos[repo].workflows[path] = workflow
        return workflow

    def add_workflow_run(
        self,
        repo: str,
        workflow_path: str,
        head_branch: str,
        head_sha: str,
        conclusion: str | None = "failure",
        *,
        event: str = "push",
        actor: str = "alice",
        triggering_actor: str | None = None,
        run_attempt: int = 1,
        pull_requests: list[int] | None = None,
        jobs: list[JobSpec] | None = None,
        status: str = "completed",
        display_title: str = "",
        fork: str = "",
    ) -> Run:
        """A workflow run whose attempt `run_attempt` has `jobs` (earlier attempts have none);
        `fork`: the run is of a pull request from that repository (its `head_repository`)."""
        r = self.repos[repo]
        workflow = r.workflows.get(workflow_path) or self.add_workflow(repo, workflow_path)
        for login in (actor, triggering_actor):
            if login and login not in self.users:
                self.add_user(login)
        run_id = self.new_id()
        attempts: dict[int, list[Job]] = {n: [] for n in range(1, run_attempt)}
        conclusions: dict[int, str | None] = {n: "failure" for n in range(1, run_attempt)}
        run = Run(
            run_id,
            repo,
            workflow,
            head_branch,
            head_sha,
            event,
            actor,
            triggering_actor or actor,
            conclusions,
            status,
            run_id % 1000,
            list(pull_requests or []),
            attempts,
            display_title or f"Run {workflow.name}",
            fork,
        )
        self.runs[run_id] = run
        self.add_attempt(run, conclusion, jobs or [], attempt=run_attempt)
        return run

    def add_attempt(
        self, run: Run, conclusion: str | None, jobs: list[JobSpec], *, attempt: int | None = None
    ) -> list[Job]:
        """Another attempt of `run` (a re-run) with its jobs; returns the created jobs."""
        number = attempt or run.run_attempt + 1
        created = []
        for spec in jobs:
            job = Job(
                self.new_id(),
                run.id,
                number,
                spec.name,
                spec.conclusion,
                list(spec.steps),
                spec.log,
                list(spec.annotations),
            )
            self.jobs[job.id] = job
            created.append(job)
        run.attempts[number] = created
        run.conclusions[number] = conclusion
        return created

    def add_pull(
        self,
        repo: str,
        head: str,
        base: str,
        title: str = "A change",
        body: str | None = "",
        *,
        user: str = "alice",
        draft: bool = False,
        labels: list[str] | None = None,
        state: str = "open",
        fork: str = "",
    ) -> Pull:
        """A pull request from branch `head` into branch `base` (both must exist); `fork`: from
        that repository's branch of the same name and commit, as GitHub shows a fork's PR."""
        r = self.repos[repo]
        head_sha = r.bare.ref(f"refs/heads/{head}")
        if head_sha is None or r.bare.ref(f"refs/heads/{base}") is None:
            raise ValueError(f"branches {head!r} and {base!r} must exist in {repo}")
        if user not in self.users:
            self.add_user(user)
        pull = self._new_pull(r, head, head_sha, base, title, body, user, draft)
        pull.state = state
        pull.fork = fork
        for label in labels or []:
            self._label_id(r, label)
            pull.labels.append(label)
        return pull

    def add_status(
        self,
        repo: str,
        sha: str,
        *,
        context: str,
        state: str = "success",
        description: str | None = None,
        target_url: str | None = None,
        creator: str = BOT,
    ) -> Status:
        """A commit status on `sha`, as if the token of `creator` had created it."""
        r = self.repos[repo]
        if not r.bare.has_commit(sha):
            raise ValueError(f"{sha} is not a commit of {repo}")
        if creator not in self.users:
            self.add_user(creator)
        return self._new_status(r, sha, state, context, description, target_url, creator)

    def add_comment(self, repo: str, number: int, body: str, *, user: str = "alice") -> None:
        """A comment on PR #number, as if `user` had posted it."""
        r = self.repos[repo]
        if user not in self.users:
            self.add_user(user)
        self._comment(r, r.pulls[number], user, body)

    def expire_logs(self, job_id: int) -> None:
        """The job's log is gone: GET …/logs answers 410 with GitHub's body."""
        self.jobs[job_id].logs_expired = True

    def remove_logs(self, job_id: int) -> None:
        """The job has no log at all: GET …/logs answers 404."""
        self.jobs[job_id].logs_missing = True

    def fail(
        self,
        method: str,
        path_regex: str,
        status: int,
        body: Any = None,
        headers: dict[str, str] | None = None,
        times: int | None = 1,
    ) -> None:
        """The next `times` API requests matching (`re.search` on the path without `/api/v3`)
        answer `status` with `body` (default: a GitHub error body); `times=None`: until cleared."""
        if body is None:
            body = error_body(status, _REASONS.get(status, "Error"))
        self.faults.append(
            Fault(method.upper(), re.compile(path_regex), status, body, dict(headers or {}), times)
        )

    def rate_limit(
        self,
        method: str,
        path_regex: str,
        *,
        kind: str = "primary",
        status: int = 403,
        retry_after: int | None = None,
        reset_in: int = 3600,
        times: int | None = 1,
    ) -> None:
        """Rate-limit matching requests the way GitHub does. `kind`: `primary` (remaining 0,
        reset epoch) or `secondary` (`retry-after`, default 60)."""
        reset = int(time.time()) + reset_in
        headers = {
            "x-ratelimit-limit": str(RATE_LIMIT),
            "x-ratelimit-reset": str(reset),
            "x-ratelimit-resource": "core",
        }
        if kind == "primary":
            headers.update({"x-ratelimit-remaining": "0", "x-ratelimit-used": str(RATE_LIMIT)})
            message = "API rate limit exceeded for installation ID 12345678."
            docs = "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api"
        else:
            headers.update(
                {
                    "x-ratelimit-remaining": "4000",
                    "x-ratelimit-used": "1000",
                    "retry-after": str(60 if retry_after is None else retry_after),
                }
            )
            message = (
                "You have exceeded a secondary rate limit. Please wait a few minutes before you try "
                "again. If you reach out to GitHub Support for help, please include the request ID "
                "C0DE:1234:5678:9ABC:DEF0."
            )
            docs = (
                "https://docs.github.com/free-pro-team@latest/rest/overview/rate-limits-for-the-rest-api"
                "#about-secondary-rate-limits"
            )
        if kind == "primary" and retry_after is not None:
            headers["retry-after"] = str(retry_after)
        self.fail(method, path_regex, status, error_body(status, message, docs), headers, times)

    def forbid_push(self, token: str | None = None) -> None:
        """Pushes with `token` (default: the default token) fail with GitHub's 403, as without
        `contents: write`."""
        self.push_allowed[token or self.token] = False

    def deny(self, method: str, path_regex: str, permission: str = "pull_requests=write") -> None:
        """The token lacks `permission`: matching requests get GitHub's 403 for integrations."""
        self.denials.append(Denial(method.upper(), re.compile(path_regex), permission))

    def fail_git(
        self,
        method: str,
        path_regex: str,
        status: int,
        *,
        text: str | None = None,
        after: bool = False,
        times: int | None = 1,
    ) -> None:
        """The next `times` git smart-HTTP requests matching (`re.search` on the path as sent,
        `/owner/repo.git/git-receive-pack`) answer `status` with `text`. `after=True`: git first
        does the work (a push lands), then the answer is lost, as when GitHub's front end gives up
        (502/504) on a backend that finished."""
        body = text if text is not None else f"{_REASONS.get(status, 'Error')}\n"
        self.faults.append(
            Fault(method.upper(), re.compile(path_regex), status, body, {}, times, "git", after)
        )

    def fail_blob(self, status: int, *, path_regex: str = "", times: int | None = 1) -> None:
        """The next `times` requests to the signed-blob host answer `status` with the storage
        service's XML error (`503`: `ServerBusy`, as Azure Blob Storage says it)."""
        code = {500: "InternalError", 503: "ServerBusy"}.get(status, "Error")
        body = f'<?xml version="1.0" encoding="utf-8"?><Error><Code>{code}</Code></Error>'
        self.faults.append(Fault("GET", re.compile(path_regex), status, body, {}, times, "blob"))

    def delay(
        self, method: str, path_regex: str, seconds: float, *, server: str = "api", times: int | None = 1
    ) -> None:
        """The next `times` requests to `server` (`api`: the path without `/api/v3`; `git`: the
        path as sent; `blob`: `/_signed/<key>`) matching are answered `seconds` late. The request
        is carried out either way: a client that gave up has still made its change."""
        if server not in ("api", "git", "blob"):
            raise ValueError(f"unknown server {server!r}")
        self.delays.append(Delay(server, method.upper(), re.compile(path_regex), seconds, times))

    def protect_branch(self, repo: str, branch: str, *, rule: str | None = None) -> None:
        """`branch` is protected: every push to it is refused with GitHub's GH006 text."""
        ref = f"refs/heads/{branch}"
        lines = (
            "error: GH006: Protected branch update failed for {ref}.",
            f"error: {rule or 'Changes must be made through a pull request.'}",
        )
        self.repos[repo].push_rules.append(PushRule(f"^{re.escape(ref)}$", lines))

    def add_ruleset(
        self, repo: str, ref_regex: str, *, rule: str = "Changes must be made through a pull request."
    ) -> None:
        """A repository ruleset: pushes to refs matching `ref_regex` (`re.search` on the full ref
        name) are refused with GitHub's GH013 text; `rule` is the violated rule's message."""
        r = self.repos[repo]
        lines = (
            "error: GH013: Repository rule violations found for {ref}.",
            f"Review all repository rules at {self._repo_web(r)}/rules?ref={{ref_url}}",
            "",
            f"- {rule}",
            "",
        )
        r.push_rules.append(PushRule(ref_regex, lines))

    def clear_faults(self) -> None:
        self.faults.clear()
        self.delays.clear()
        self.denials.clear()

    # ---- events (what the runner writes to GITHUB_EVENT_PATH) ----------------------------------
    def workflow_run_event(self, run: Run, action: str = "completed") -> dict[str, Any]:
        r = self.repos[run.repo]
        body = self._run_json(run, run.run_attempt)
        body["path"] = run.workflow.path
        workflow = self.shapes.workflow(
            self._repo_api(r), self._repo_web(r), run.workflow.id, run.workflow.name, run.workflow.path
        )
        return {
            "action": action,
            "workflow_run": body,
            "workflow": workflow,
            "repository": self._repo_json(r),
            "sender": self._user_json(run.triggering_actor),
        }

    def workflow_dispatch_event(
        self,
        repo: str,
        workflow_path: str,
        ref: str,
        inputs: dict[str, Any] | None = None,
        sender: str = "alice",
    ) -> dict[str, Any]:
        r = self.repos[repo]
        return {
            "inputs": inputs,
            "ref": ref if ref.startswith("refs/") else f"refs/heads/{ref}",
            "repository": self._repo_json(r),
            "sender": self._user_json(sender),
            "workflow": workflow_path,
        }

    # ---- inspection ------------------------------------------------------------------------------
    def pulls(self, repo: str) -> list[Pull]:
        r = self.repos[repo]
        for pull in r.pulls.values():
            self._refresh_pull(r, pull)
        return sorted(r.pulls.values(), key=lambda p: p.number)

    def pull(self, repo: str, number: int) -> Pull:
        r = self.repos[repo]
        self._refresh_pull(r, r.pulls[number])
        return r.pulls[number]

    def statuses(self, repo: str, sha: str) -> list[Status]:
        """The commit statuses of `sha`, newest first (as GitHub lists them)."""
        return [s for s in reversed(self.repos[repo].statuses) if s.sha == sha]

    def comments(self, repo: str, number: int) -> list[str]:
        return [c.body for c in self.repos[repo].pulls[number].comments]

    def commit_comments(self, repo: str, sha: str) -> list[str]:
        return [c.body for c in self.repos[repo].commit_comments if c.commit_id == sha]

    def labels(self, repo: str, number: int) -> list[str]:
        return list(self.repos[repo].pulls[number].labels)

    def review_requests(self, repo: str, number: int) -> tuple[list[str], list[str]]:
        """(users, teams) requested for review."""
        pull = self.repos[repo].pulls[number]
        return list(pull.requested_reviewers), list(pull.requested_teams)

    def refs(self, repo: str, prefix: str = "refs/heads/") -> dict[str, str]:
        return self.repos[repo].bare.refs(prefix)

    def branch_sha(self, repo: str, branch: str) -> str | None:
        return self.repos[repo].bare.ref(f"refs/heads/{branch}")

    def bare_path(self, repo: str) -> Path:
        return self.repos[repo].path

    def clone_url(self, repo: str) -> str:
        return f"{self.server_url}/{repo}.git"

    def api_requests(self, method: str | None = None, path_regex: str = "") -> list[RequestRecord]:
        pattern = re.compile(path_regex)
        return [
            r
            for r in self.requests
            if r.server == "api" and (method is None or r.method == method) and pattern.search(r.path)
        ]

    def cleanup(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)

    # ---- the request pipeline -------------------------------------------------------------------
    def _serve(self, request: Request) -> Response:
        if request.path == "/api/v3" or request.path.startswith("/api/v3/"):
            late = self._delay_for("api", request.method, request.path.removeprefix("/api/v3") or "/")
            return self._late(late, self._serve_api(request))
        match = _GIT_PATH.match(request.path)
        if match:
            late = self._delay_for("git", request.method, request.path)
            return self._late(late, self._serve_git(request, match))
        self._record(request, 404, None, "api")
        return Response(404, b"Not Found", [("Content-Type", "text/plain")])

    def _delay_for(self, server: str, method: str, path: str) -> float:
        with self._lock:
            for delay in self.delays:
                if (
                    delay.server == server
                    and delay.method == method
                    and delay.pattern.search(path)
                    and delay.times != 0
                ):
                    if delay.times is not None:
                        delay.times -= 1
                    return delay.seconds
        return 0.0

    @staticmethod
    def _late(seconds: float, response: Response) -> Response:
        """The answer, `seconds` late (slept outside the lock: other requests go on meanwhile)."""
        if seconds > 0:
            time.sleep(seconds)
        return response

    def _fault_for(self, server: str, method: str, path: str, *, after: bool = False) -> Fault | None:
        with self._lock:
            for fault in self.faults:
                if (
                    fault.server == server
                    and fault.after == after
                    and fault.method == method
                    and fault.pattern.search(path)
                    and fault.times != 0
                ):
                    if fault.times is not None:
                        fault.times -= 1
                    return fault
        return None

    def _token_of(self, request: Request) -> str | None:
        value = request.headers.get("authorization", "")
        scheme, _, credential = value.partition(" ")
        if scheme.lower() in ("token", "bearer"):
            return credential.strip()
        if scheme.lower() == "basic":
            try:
                decoded = base64.b64decode(credential.strip()).decode()
            except ValueError:
                return None
            return decoded.partition(":")[2]
        return None

    def _serve_git(self, request: Request, match: re.Match[str]) -> Response:
        full = f"{match['owner']}/{match['name']}"
        token = self._token_of(request)
        if token not in self.tokens:
            self._record(request, 401, None, "git")
            return Response(
                401,
                b"Authentication required\n",
                [("WWW-Authenticate", 'Basic realm="GitHub"'), ("Content-Type", "text/plain")],
            )
        if full not in self.repos:
            self._record(request, 404, None, "git")
            return Response(404, b"Repository not found.\n", [("Content-Type", "text/plain")])
        pushing = "git-receive-pack" in request.path or "service=git-receive-pack" in request.query
        if pushing and not self.push_allowed.get(token, True):
            self._record(request, 403, None, "git")
            text = f"Permission to {full}.git denied to {self.tokens[token]}.\n"
            return Response(403, text.encode(), [("Content-Type", "text/plain")])
        if fault := self._fault_for("git", request.method, request.path):
            self._record(request, fault.status, None, "git")
            return Response(fault.status, str(fault.body).encode(), [("Content-Type", "text/plain")])
        workflows = "1" if self.workflows_allowed.get(token, True) else "0"
        rules = [{"ref": rule.ref, "lines": list(rule.lines)} for rule in self.repos[full].push_rules]
        with self._lock:
            cgi = http_backend(
                self.git_root,
                request.method,
                request.path,
                request.query,
                request.headers,
                request.body,
                {"GH_EMULATOR_WORKFLOWS": workflows, "GH_EMULATOR_PUSH_RULES": json.dumps(rules)},
            )
        if fault := self._fault_for("git", request.method, request.path, after=True):
            self._record(request, fault.status, None, "git")
            return Response(fault.status, str(fault.body).encode(), [("Content-Type", "text/plain")])
        self._record(request, cgi.status, None, "git")
        return Response(cgi.status, cgi.body, cgi.headers)

    def _record(self, request: Request, status: int, body: Any, server: str, path: str | None = None) -> None:
        sent = None
        if server == "api" and request.body:
            try:
                sent = json.loads(request.body)
            except ValueError:
                sent = None
        self.requests.append(
            RequestRecord(request.method, path or request.path, request.query, status, body, server, sent)
        )

    def _rate_headers(self) -> list[tuple[str, str]]:
        self.rate_used += 1
        return [
            ("x-ratelimit-limit", str(RATE_LIMIT)),
            ("x-ratelimit-remaining", str(RATE_LIMIT - self.rate_used)),
            ("x-ratelimit-reset", str(int(time.time()) + 3600)),
            ("x-ratelimit-used", str(self.rate_used)),
            ("x-ratelimit-resource", "core"),
            ("x-github-api-version-selected", "2022-11-28"),
        ]

    def _serve_api(self, request: Request) -> Response:
        path = request.path.removeprefix("/api/v3") or "/"
        method = request.method
        body: Any = None
        if request.body:
            try:
                body = json.loads(request.body)
            except ValueError:
                return self._finish(request, path, None, 400, error_body(400, "Problems parsing JSON"), [])
        with self._lock:
            op, problems = self.spec.check_request(method, path, body)
            self.violations.extend(problems)
            query = {k: v[-1] for k, v in parse_qs(request.query, keep_blank_values=True).items()}
            if op is not None:
                self.violations.extend(self.spec.check_query(op, path, query))
            token = self._token_of(request)
            if token is None:
                return self._finish(request, path, op, 401, error_body(401, "Requires authentication"), [])
            if token not in self.tokens:
                return self._finish(request, path, op, 401, error_body(401, "Bad credentials"), [])
            if fault := self._fault_for("api", method, path):
                return self._finish(
                    request,
                    path,
                    None,
                    fault.status,
                    fault.body,
                    list(fault.headers.items()),
                    rate_headers=not any(k.startswith("x-ratelimit") for k in fault.headers),
                )
            for denial in self.denials:
                if denial.method == method and denial.pattern.search(path):
                    docs = f"{DOCS}{_doc_anchor(op)}"
                    return self._finish(
                        request,
                        path,
                        op,
                        403,
                        error_body(403, "Resource not accessible by integration", docs),
                        [("X-Accepted-GitHub-Permissions", denial.permission)],
                    )
            try:
                status, out, headers = self.dispatch_route(method, path, query, body, self.tokens[token])
            except ApiError as err:
                status, out, headers = err.status, err.body, err.headers
            if status in (301, 302, 303, 307):
                return self._finish(request, path, op, status, None, headers, raw=b"")
            return self._finish(request, path, op, status, out, headers)

    def _finish(
        self,
        request: Request,
        path: str,
        op: openapi.Operation | None,
        status: int,
        body: Any,
        headers: list[tuple[str, str]],
        *,
        raw: bytes | None = None,
        rate_headers: bool = True,
    ) -> Response:
        if op is not None:
            self.violations.extend(self.spec.check_response(op, path, status, body))
        self._record(request, status, body, "api", path)
        out_headers = list(headers)
        if rate_headers:
            out_headers += self._rate_headers()
        if raw is not None:
            out_headers.append(("Content-Type", "text/html;charset=utf-8"))
            return Response(status, raw, out_headers)
        if body is None:
            return Response(status, b"", out_headers)
        out_headers.append(("Content-Type", "application/json; charset=utf-8"))
        return Response(status, json.dumps(body).encode(), out_headers)

    # ---- the signed blob host -------------------------------------------------------------------
    def sign_blob(self, content_type: str, data: bytes) -> str:
        key = secrets.token_hex(12)
        self.blobs[key] = (content_type, data)
        return (
            f"{self.blob_url}/_signed/{key}?se=2099-01-01T00%3A00%3A00Z&sp=r&sig={secrets.token_urlsafe(16)}"
        )

    def _serve_blob(self, request: Request) -> Response:
        return self._late(self._delay_for("blob", request.method, request.path), self._blob(request))

    def _blob(self, request: Request) -> Response:
        key = request.path.removeprefix("/_signed/")
        if fault := self._fault_for("blob", request.method, request.path):
            self._record(request, fault.status, None, "blob")
            return Response(fault.status, str(fault.body).encode(), [("Content-Type", "application/xml")])
        if "authorization" in request.headers:
            self._record(request, 403, None, "blob")
            body = (
                b'<?xml version="1.0" encoding="utf-8"?><Error><Code>InvalidAuthenticationInfo</Code>'
                b"<Message>Authentication information is not given in the correct format.</Message></Error>"
            )
            return Response(403, body, [("Content-Type", "application/xml")])
        if key not in self.blobs or request.method != "GET":
            self._record(request, 404, None, "blob")
            return Response(404, b"BlobNotFound", [("Content-Type", "application/xml")])
        content_type, data = self.blobs[key]
        self._record(request, 200, None, "blob")
        return Response(200, data, [("Content-Type", content_type)])

    # ---- helpers used by routes -------------------------------------------------------------------
    def _new_pull(
        self,
        r: Repo,
        head: str,
        head_sha: str,
        base: str,
        title: str,
        body: str | None,
        user: str,
        draft: bool,
    ) -> Pull:
        number = r.next_number
        r.next_number += 1
        from tests.testing.emulator.shapes import now

        pull = Pull(number, self.new_id(), head, head_sha, base, title, body, user, draft, created_at=now())
        r.pulls[number] = pull
        return pull

    def _new_status(
        self,
        r: Repo,
        sha: str,
        state: str,
        context: str,
        description: str | None,
        target_url: str | None,
        creator: str,
    ) -> Status:
        from tests.testing.emulator.shapes import now

        status = Status(self.new_id(), sha, state, context, description, target_url, creator, now())
        r.statuses.append(status)
        return status

    def _label_id(self, r: Repo, name: str) -> int:
        if name not in r.labels:
            r.labels[name] = self.new_id()
        return r.labels[name]

    def _comment(self, r: Repo, pull: Pull, user: str, body: str) -> Comment:
        comment = Comment(self.new_id(), user, body)
        pull.comments.append(comment)
        return comment

    def permission_of(self, r: Repo, login: str) -> str | None:
        """None when the user does not exist."""
        if login not in self.users:
            return None
        return r.permissions.get(login, self.user_permissions.get(login, "none"))


def _doc_anchor(op: openapi.Operation | None) -> str:
    if op is None:
        return ""
    url = str(op.spec.get("externalDocs", {}).get("url", ""))
    return url.removeprefix("https://docs.github.com/rest")


_REASONS = {
    400: "Bad Request",
    401: "Bad credentials",
    403: "Forbidden",
    404: "Not Found",
    409: "Conflict",
    410: "Gone",
    422: "Validation Failed",
    429: "Too Many Requests",
    500: "Server Error",
    502: "Server Error",
    503: "Service Unavailable",
    504: "We couldn't respond to your request in time.",
}
