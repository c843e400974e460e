"""The emulator's bare git repositories: refs, objects, and the smart-HTTP CGI bridge.

Refs are never cached: every API read asks git, so what `git push` wrote through the smart
HTTP endpoint and what `POST /git/refs` wrote with `git update-ref` are one state.
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from tests.testing.git import git_env

ZERO = "0" * 40


def _env() -> dict[str, str]:
    """The server's git reads no configuration of this machine either (`testing.git.git_env`)."""
    return git_env()


def git(
    cwd: Path, *args: str, check: bool = True, stdin: bytes | None = None
) -> subprocess.CompletedProcess[bytes]:
    result = subprocess.run(
        ["git", "-c", "core.hooksPath=/dev/null", *args],
        cwd=cwd,
        env=_env(),
        input=stdin,
        capture_output=True,
        timeout=60,
        check=False,
    )
    if check and result.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} failed: {result.stderr.decode(errors='replace')}")
    return result


@dataclass(frozen=True)
class CommitData:
    sha: str
    tree: str
    parents: tuple[str, ...]
    author_name: str
    author_email: str
    author_date: str
    committer_name: str
    committer_email: str
    committer_date: str
    message: str


class BareRepo:
    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def create(cls, path: Path, default_branch: str) -> BareRepo:
        path.mkdir(parents=True)
        git(path, "init", "--bare", "-q", f"--initial-branch={default_branch}", ".")
        git(path, "config", "http.receivepack", "true")
        git(path, "config", "receive.denyDeleteCurrent", "false")
        hook = path / "hooks" / "pre-receive"
        hook.parent.mkdir(exist_ok=True)
        hook.write_text(_PRE_RECEIVE.replace("PYTHON", sys.executable), encoding="utf-8")
        hook.chmod(0o755)
        return cls(path)

    def push_from(self, source: Path) -> None:
        """Copy every branch and tag of a local repository into this one."""
        git(source, "push", "-q", str(self.path), "+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*")

    def ref(self, name: str) -> str | None:
        """The sha a full ref name (`refs/heads/x`) points at, or None."""
        result = git(self.path, "rev-parse", "--verify", "--quiet", f"{name}^{{commit}}", check=False)
        return result.stdout.decode().strip() or None if result.returncode == 0 else None

    def refs(self, prefix: str = "refs/") -> dict[str, str]:
        out = git(self.path, "for-each-ref", "--format=%(refname) %(objectname)", prefix).stdout.decode()
        return dict(line.split(" ", 1) for line in out.splitlines() if line)  # type: ignore[misc]

    def update_ref(self, name: str, sha: str, old: str | None = None) -> bool:
        args = ["update-ref", name, sha] + ([old] if old is not None else [])
        return git(self.path, *args, check=False).returncode == 0

    def delete_ref(self, name: str) -> bool:
        return git(self.path, "update-ref", "-d", name, check=False).returncode == 0

    def has_commit(self, sha: str) -> bool:
        return git(self.path, "cat-file", "-e", f"{sha}^{{commit}}", check=False).returncode == 0

    def resolve(self, rev: str) -> str | None:
        result = git(self.path, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}", check=False)
        return result.stdout.decode().strip() or None if result.returncode == 0 else None

    def is_ancestor(self, ancestor: str, descendant: str) -> bool:
        return (
            git(self.path, "merge-base", "--is-ancestor", ancestor, descendant, check=False).returncode == 0
        )

    def commit(self, sha: str) -> CommitData:
        fmt = "%H%n%T%n%P%n%an%n%ae%n%aI%n%cn%n%ce%n%cI%n%B"
        out = git(self.path, "show", "-s", f"--format={fmt}", sha).stdout.decode()
        lines = out.split("\n", 9)
        return CommitData(
            sha=lines[0],
            tree=lines[1],
            parents=tuple(lines[2].split()),
            author_name=lines[3],
            author_email=lines[4],
            author_date=lines[5],
            committer_name=lines[6],
            committer_email=lines[7],
            committer_date=lines[8],
            message=lines[9].rstrip("\n"),
        )

    def file(self, rev: str, path: str) -> bytes | None:
        result = git(self.path, "show", f"{rev}:{path}", check=False)
        return result.stdout if result.returncode == 0 else None

    def blob_sha(self, rev: str, path: str) -> str:
        return git(self.path, "rev-parse", f"{rev}:{path}").stdout.decode().strip()


# GitHub refuses pushes that touch workflow files unless the token has the `workflows`
# permission (GITHUB_TOKEN never has it). The emulator tells the hook through the environment.
# Branch protection and rulesets (`GitHubEmulator.protect_branch`, `.add_ruleset`) come the same
# way, as JSON: GitHub's own `remote:` lines for each refused ref.
_PRE_RECEIVE = """#!PYTHON
import json, os, re, subprocess, sys

rules = json.loads(os.environ.get("GH_EMULATOR_PUSH_RULES") or "[]")
check_workflows = os.environ.get("GH_EMULATOR_WORKFLOWS") == "0"  # over HTTP with a GITHUB_TOKEN-like token
zero = "0" * 40
for line in sys.stdin:
    old, new, ref = line.split()
    for rule in rules:
        if re.search(rule["ref"], ref):
            for text in rule["lines"]:  # `{ref}`: the ref pushed to, `{ref_url}`: URL-quoted
                print(text.replace("{ref}", ref).replace("{ref_url}", ref.replace("/", "%2F")), file=sys.stderr)
            sys.exit(1)
    if new == zero or not check_workflows:
        continue
    span = [new, "--not", "--all"] if old == zero else [old + ".." + new]
    names = subprocess.run(["git", "log", "--format=", "--name-only", *span], capture_output=True,
                           text=True, check=False).stdout.split()
    for name in names:
        if name.startswith(".github/workflows/"):
            print("refusing to allow a GitHub App to create or update workflow `" + name
                  + "` without `workflows` permission", file=sys.stderr)
            sys.exit(1)
"""


@dataclass(frozen=True)
class CgiResponse:
    status: int
    headers: list[tuple[str, str]]
    body: bytes


def http_backend(
    project_root: Path,
    method: str,
    path_info: str,
    query: str,
    headers: dict[str, str],
    body: bytes,
    extra_env: dict[str, str] | None = None,
) -> CgiResponse:
    """Run `git http-backend` (CGI) for one smart-HTTP request."""
    env = _env()
    env.update(
        {
            "GIT_PROJECT_ROOT": str(project_root),
            "GIT_HTTP_EXPORT_ALL": "1",
            "REMOTE_USER": "x-access-token",
            "REMOTE_ADDR": "127.0.0.1",
            "REQUEST_METHOD": method,
            "PATH_INFO": path_info,
            "QUERY_STRING": query,
            "CONTENT_TYPE": headers.get("content-type", ""),
            "CONTENT_LENGTH": str(len(body)),
            "GATEWAY_INTERFACE": "CGI/1.1",
            "SERVER_PROTOCOL": "HTTP/1.1",
        }
    )
    env.update(extra_env or {})
    if "git-protocol" in headers:
        env["GIT_PROTOCOL"] = headers["git-protocol"]
    if "content-encoding" in headers:
        env["HTTP_CONTENT_ENCODING"] = headers["content-encoding"]
    result = subprocess.run(
        ["git", "-c", "http.receivepack=true", "http-backend"],
        input=body,
        env=env,
        capture_output=True,
        timeout=120,
        check=False,
    )
    raw = result.stdout
    head, _, payload = raw.partition(b"\r\n\r\n")
    if not _:
        head, _, payload = raw.partition(b"\n\n")
    status = 200
    out_headers = []
    for line in head.decode("latin-1").splitlines():
        if not line.strip():
            continue
        name, _, value = line.partition(":")
        if name.lower() == "status":
            status = int(value.strip().split()[0])
        else:
            out_headers.append((name.strip(), value.strip()))
    if result.returncode != 0 and not raw:
        return CgiResponse(500, [("Content-Type", "text/plain")], result.stderr)
    return CgiResponse(status, out_headers, payload)
