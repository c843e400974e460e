"""Small local git repositories to seed the emulator with (real git, no network)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

from emulator.state import JobSpec, Run, StepSpec

if TYPE_CHECKING:
    from emulator.core import GitHubEmulator

ALICE = ("Alice Example", "alice@example.com")


def git(cwd: Path, *args: str, env: dict[str, str] | None = None) -> str:
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    full_env.update({"GIT_TERMINAL_PROMPT": "0", "GIT_CONFIG_NOSYSTEM": "1", "LC_ALL": "C"})
    full_env.update(env or {})
    result = subprocess.run(
        ["git", *args], cwd=cwd, env=full_env, capture_output=True, text=True, timeout=60, check=False
    )
    if result.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} failed ({result.returncode}): {result.stderr}")
    return result.stdout.strip()


def commit(repo: Path, files: dict[str, str], message: str, author: tuple[str, str] = ALICE) -> str:
    """Write `files` (path → text), commit them, return the new sha."""
    for name, text in files.items():
        target = repo / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    git(repo, "add", "-A")
    name, email = author
    git(repo, "-c", f"user.name={name}", "-c", f"user.email={email}", "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


def init_repo(
    path: Path,
    files: dict[str, str],
    *,
    branch: str = "main",
    message: str = "Initial commit",
    author: tuple[str, str] = ALICE,
) -> str:
    """A new repository at `path` with one commit on `branch`; returns its sha."""
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", f"--initial-branch={branch}")
    return commit(path, files, message, author)


def publish_failure(
    emu: GitHubEmulator,
    repo: str,
    source: Path,
    branch: str,
    head_sha: str,
    command: str,
    log: bytes,
    workspace: Path,
    *,
    job: str = "test",
) -> Run:
    """`source` as `repo` in the emulator with alice as a writer, a CI run of
    `.github/workflows/ci.yml` whose one job failed at the step `Run <command>` with `log`, and
    `workspace` as the propose job's checkout: the failing commit, detached."""
    emu.create_repo(repo, source=source)
    emu.add_user("alice", permission="write", email=ALICE[1])
    run = emu.add_workflow_run(
        repo,
        ".github/workflows/ci.yml",
        branch,
        head_sha,
        "failure",
        jobs=[JobSpec(job, "failure", [StepSpec(f"Run {command}", "failure")], log=log)],
    )
    subprocess.run(["git", "clone", "-q", str(source), str(workspace)], check=True)
    git(workspace, "checkout", "-q", "--detach", head_sha)
    return run
