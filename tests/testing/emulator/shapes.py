"""JSON bodies the emulator returns, built from the REST description's own examples.

Each builder deep-copies an example of the vendored OpenAPI subset, overrides the fields the
emulator's state decides, and rewrites every `https://api.github.com` / `https://github.com`
URL to the emulator's own `http://127.0.0.1:P/api/v3` / `http://127.0.0.1:P` (PyGithub refuses
to follow a URL on another host or outside its base path).
"""

from __future__ import annotations

import copy
import json
from datetime import UTC, datetime
from functools import cache
from typing import Any

from tests.testing.emulator.openapi import SUBSET


@cache
def _examples() -> dict[str, Any]:
    return json.loads(SUBSET.read_text(encoding="utf-8"))["components"]["examples"]  # type: ignore[no-any-return]


def example(name: str) -> Any:
    return copy.deepcopy(_examples()[name]["value"])


def now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def node_id(kind: str, number: int) -> str:
    return f"{kind}_kwDO{number:08d}"


class Shapes:
    def __init__(self, api: str, web: str) -> None:
        self.api = api
        self.web = web

    def rewrite(self, value: Any) -> Any:
        if isinstance(value, str):
            if value.startswith("https://api.github.com"):
                return self.api + value.removeprefix("https://api.github.com")
            if value.startswith("https://github.com"):
                return self.web + value.removeprefix("https://github.com")
            return value
        if isinstance(value, list):
            return [self.rewrite(v) for v in value]
        if isinstance(value, dict):
            return {k: self.rewrite(v) for k, v in value.items()}
        return value

    def _renamed(self, value: Any, pairs: list[tuple[str, str]]) -> Any:
        text = json.dumps(value)
        for old, new in pairs:
            text = text.replace(old, new)
        return json.loads(text)

    # ---- users and repositories -------------------------------------------------------------
    def user(self, login: str, uid: int) -> dict[str, Any]:
        user = self._renamed(example("pull-request")["user"], [("octocat", login)])
        user.update(
            id=uid, node_id=node_id("U", uid), login=login, type="Bot" if login.endswith("[bot]") else "User"
        )
        return self.rewrite(user)  # type: ignore[no-any-return]

    def repository(self, full_name: str, rid: int, default_branch: str, owner_id: int) -> dict[str, Any]:
        owner, name = full_name.split("/")
        repo = self._renamed(
            example("full-repository-default-response"),
            [("octocat/Hello-World", full_name), ("Hello-World", name), ("octocat", owner)],
        )
        repo.update(
            id=rid,
            node_id=node_id("R", rid),
            name=name,
            full_name=full_name,
            private=False,
            fork=False,
            default_branch=default_branch,
            description=None,
            homepage=None,
            language=None,
            archived=False,
            disabled=False,
        )
        repo["owner"].update(id=owner_id, login=owner)
        repo["clone_url"] = f"{self.web}/{full_name}.git"
        repo["svn_url"] = f"{self.web}/{full_name}"
        for key in ("parent", "source", "organization", "template_repository", "license"):
            repo.pop(key, None)
        repo["license"] = None
        repo["permissions"] = {"admin": False, "maintain": False, "push": True, "triage": True, "pull": True}
        return self.rewrite(repo)  # type: ignore[no-any-return]

    def minimal_repository(self, full: dict[str, Any]) -> dict[str, Any]:
        keep = set(example("workflow-run")["repository"])
        return {k: v for k, v in full.items() if k in keep}

    def repo_lite(self, full: dict[str, Any]) -> dict[str, Any]:
        return {"id": full["id"], "url": full["url"], "name": full["name"]}

    # ---- actions -------------------------------------------------------------------------------
    def workflow(self, repo_api: str, repo_web: str, wid: int, name: str, path: str) -> dict[str, Any]:
        return {
            "id": wid,
            "node_id": node_id("W", wid),
            "name": name,
            "path": path,
            "state": "active",
            "created_at": "2026-01-01T00:00:00Z",
            "updated_at": "2026-01-01T00:00:00Z",
            "url": f"{repo_api}/actions/workflows/{wid}",
            "html_url": f"{repo_web}/blob/main/{path}",
            "badge_url": f"{repo_web}/workflows/{name}/badge.svg",
        }

    def job(self, repo_api: str, repo_web: str, **fields: Any) -> dict[str, Any]:
        job = self.rewrite(example("job"))
        jid, run_id = fields["id"], fields["run_id"]
        job.update(fields)
        job.update(
            node_id=node_id("J", jid),
            url=f"{repo_api}/actions/jobs/{jid}",
            run_url=f"{repo_api}/actions/runs/{run_id}",
            html_url=f"{repo_web}/actions/runs/{run_id}/job/{jid}",
            check_run_url=f"{repo_api}/check-runs/{jid}",
            status="completed",
            labels=["ubuntu-latest"],
            runner_name="GitHub Actions 1",
            runner_group_name="GitHub Actions",
        )
        return job  # type: ignore[no-any-return]

    def run(self, repo_api: str, repo_web: str, **fields: Any) -> dict[str, Any]:
        run = self.rewrite(example("workflow-run"))
        rid = fields["id"]
        run.update(fields)
        base = f"{repo_api}/actions/runs/{rid}"
        run.update(
            node_id=node_id("WR", rid),
            url=base,
            html_url=f"{repo_web}/actions/runs/{rid}",
            jobs_url=f"{base}/jobs",
            logs_url=f"{base}/logs",
            cancel_url=f"{base}/cancel",
            rerun_url=f"{base}/rerun",
            artifacts_url=f"{base}/artifacts",
            check_suite_url=f"{repo_api}/check-suites/{rid}",
            check_suite_id=rid,
            check_suite_node_id=node_id("CS", rid),
            workflow_url=f"{repo_api}/actions/workflows/{fields['workflow_id']}",
            referenced_workflows=[],
            previous_attempt_url=f"{base}/attempts/{fields['run_attempt'] - 1}"
            if fields["run_attempt"] > 1
            else None,
        )
        return run  # type: ignore[no-any-return]

    # ---- git -------------------------------------------------------------------------------------
    def git_ref(self, repo_api: str, name: str, sha: str) -> dict[str, Any]:
        return {
            "ref": name,
            "node_id": node_id("REF", abs(hash(name)) % 10**8),
            "url": f"{repo_api}/git/{name}",
            "object": {"type": "commit", "sha": sha, "url": f"{repo_api}/git/commits/{sha}"},
        }

    # ---- issues and pulls ------------------------------------------------------------------------
    def label(self, repo_api: str, lid: int, name: str) -> dict[str, Any]:
        return {
            "id": lid,
            "node_id": node_id("LA", lid),
            "url": f"{repo_api}/labels/{name}",
            "name": name,
            "description": "",  # `pull-request-simple` requires a string here
            "color": "ededed",
            "default": False,
        }

    def comment(
        self, repo_api: str, repo_web: str, cid: int, number: int, body: str, user: dict[str, Any]
    ) -> dict[str, Any]:
        comment = self.rewrite(example("issue-comment"))
        comment.update(
            id=cid,
            node_id=node_id("IC", cid),
            body=body,
            user=user,
            url=f"{repo_api}/issues/comments/{cid}",
            html_url=f"{repo_web}/pull/{number}#issuecomment-{cid}",
            issue_url=f"{repo_api}/issues/{number}",
            author_association="CONTRIBUTOR",
            created_at=now(),
            updated_at=now(),
        )
        comment.pop("performed_via_github_app", None)
        comment.pop("reactions", None)
        return comment  # type: ignore[no-any-return]

    def commit_comment(
        self, repo_api: str, repo_web: str, cid: int, sha: str, body: str, user: dict[str, Any]
    ) -> dict[str, Any]:
        comment = self.rewrite(example("commit-comment"))
        comment.update(
            id=cid,
            node_id=node_id("CC", cid),
            body=body,
            user=user,
            commit_id=sha,
            url=f"{repo_api}/comments/{cid}",
            html_url=f"{repo_web}/commit/{sha}#commitcomment-{cid}",
            path=None,
            position=None,
            line=None,
            author_association="CONTRIBUTOR",
            created_at=now(),
            updated_at=now(),
        )
        comment.pop("reactions", None)
        return comment  # type: ignore[no-any-return]

    def team(self, org: str, tid: int, slug: str) -> dict[str, Any]:
        team = self.rewrite(example("pull-request")["requested_teams"][0])
        team.update(
            id=tid,
            node_id=node_id("T", tid),
            slug=slug,
            name=slug,
            url=f"{self.api}/orgs/{org}/teams/{slug}",
            html_url=f"{self.web}/orgs/{org}/teams/{slug}",
            members_url=f"{self.api}/orgs/{org}/teams/{slug}/members{{/member}}",
            repositories_url=f"{self.api}/orgs/{org}/teams/{slug}/repos",
            type="organization",
            parent=None,
        )
        return team  # type: ignore[no-any-return]
