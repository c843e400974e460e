"""`Git.push` against the emulator's git smart HTTP, refused or failed every way GitHub and the
network fail it: the result is never `ok`, `stale` only when the lease refused, and
`push_error` names the cause (the server's text, redacted) and the remedy."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from ci_autofix.git import Git, PushResult, auth_env, push_error
from tests.testing.emulator import GitHubEmulator
from tests.testing.git import commit, git, init_repo

REPO = "acme/widgets"
AGAIN = "re-run this job"


@pytest.fixture
def ours(github_emulator: GitHubEmulator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Git, str]:
    """Our clone of `acme/widgets` with one new commit; returns it and that commit."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    source = tmp_path / "source"
    init_repo(source, {"app.py": "VALUE = 1\n"}, branch="main")
    github_emulator.create_repo(REPO, source=source)
    work = tmp_path / "work"
    git(
        tmp_path,
        "clone",
        "-q",
        github_emulator.clone_url(REPO),
        str(work),
        env=auth_env(github_emulator.server_url, github_emulator.token),
    )
    return Git(work), commit(work, {"app.py": "VALUE = 2\n"}, "Change it")


def push(
    emu: GitHubEmulator,
    git_: Git,
    sha: str,
    *,
    token: str | None = None,
    url: str | None = None,
    branch: str = "side",
) -> PushResult:
    return git_.push(
        url or emu.clone_url(REPO),
        f"{sha}:refs/heads/{branch}",
        token=token or emu.token,
        server_url=emu.server_url,
        lease=(f"refs/heads/{branch}", ""),
    )


def failed(result: PushResult) -> tuple[str, str]:
    assert not result.ok and not result.stale, result.output
    error = push_error(result, doing="push the branch `side`", again=AGAIN)
    assert error.cause.startswith("git could not push the branch `side`: ")
    assert AGAIN in error.remedy
    return error.cause, error.remedy


def test_the_lease_alone_is_stale(github_emulator: GitHubEmulator, ours: tuple[Git, str]) -> None:
    git_, sha = ours
    assert push(github_emulator, git_, sha).ok
    other = commit(git_.repo, {"app.py": "VALUE = 3\n"}, "Change it again")
    again = push(github_emulator, git_, other)  # the lease says `side` must not exist yet
    assert not again.ok and again.stale


def test_a_protected_branch(github_emulator: GitHubEmulator, ours: tuple[Git, str]) -> None:
    github_emulator.protect_branch(REPO, "side")
    cause, remedy = failed(push(github_emulator, *ours))
    assert "a branch protection rule refused it (GH006)" in cause
    assert "GH006: Protected branch update failed for refs/heads/side." in cause
    assert "[remote rejected]" in cause  # git's own line about the ref
    assert "protection rule" in remedy
    assert github_emulator.branch_sha(REPO, "side") is None


def test_a_ruleset_and_its_text_redacted(github_emulator: GitHubEmulator, ours: tuple[Git, str]) -> None:
    secret = "ghp_" + "r" * 36
    github_emulator.add_ruleset(REPO, r"^refs/heads/side$", rule=f"Names must match {secret}")
    cause, remedy = failed(push(github_emulator, *ours))
    assert "a repository ruleset refused it (GH013)" in cause
    assert "Names must match" in cause and secret not in cause
    assert "bypass list" in remedy


def test_push_protection_is_not_a_ruleset_to_bypass(
    github_emulator: GitHubEmulator, ours: tuple[Git, str]
) -> None:
    """GitHub's secret scanning answers with GH013 too; the remedy is not to add a bypass."""
    github_emulator.add_ruleset(
        REPO, r"^refs/heads/side$", rule="GITHUB PUSH PROTECTION: Push cannot contain secrets"
    )
    cause, remedy = failed(push(github_emulator, *ours))
    assert "push protection found what looks like a secret" in cause
    assert "do not bypass" in remedy and "bypass list" not in remedy


def test_a_workflow_change_with_the_github_token(
    github_emulator: GitHubEmulator, ours: tuple[Git, str]
) -> None:
    git_, _ = ours
    sha = commit(git_.repo, {".github/workflows/ci.yml": "on: push\n"}, "Touch CI")
    cause, remedy = failed(push(github_emulator, git_, sha))
    assert "touches a workflow file" in cause
    assert "`ci-token`" in remedy and "`workflow` scope" in remedy


def test_a_token_that_may_not_push(github_emulator: GitHubEmulator, ours: tuple[Git, str]) -> None:
    github_emulator.forbid_push()
    cause, remedy = failed(push(github_emulator, *ours))
    assert "GitHub refused the token (403)" in cause
    assert "`contents: write`" in remedy


def test_a_token_github_does_not_know(github_emulator: GitHubEmulator, ours: tuple[Git, str]) -> None:
    cause, remedy = failed(push(github_emulator, *ours, token="ghs_" + "x" * 36))
    assert "GitHub rejected the token (401)" in cause
    assert "valid token" in remedy


@pytest.mark.parametrize("status", [500, 502, 503])
def test_a_server_error(github_emulator: GitHubEmulator, ours: tuple[Git, str], status: int) -> None:
    github_emulator.fail_git("POST", r"/git-receive-pack$", status)
    cause, remedy = failed(push(github_emulator, *ours))
    assert f"GitHub's git service failed (HTTP {status})" in cause
    assert "githubstatus.com" in remedy


def test_no_server_at_all(github_emulator: GitHubEmulator, ours: tuple[Git, str]) -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    cause, remedy = failed(push(github_emulator, *ours, url=f"http://127.0.0.1:{port}/{REPO}.git"))
    assert "the git server could not be reached" in cause
    assert "network access" in remedy


def test_git_timing_out(github_emulator: GitHubEmulator, ours: tuple[Git, str]) -> None:
    git_, sha = ours
    github_emulator.delay("POST", r"/git-receive-pack$", 4, server="git")
    result = push(github_emulator, Git(git_.repo, timeout=1), sha)
    assert result.timed_out
    cause, remedy = failed(result)
    assert "git timed out after 1s" in cause
    assert "later" in remedy
