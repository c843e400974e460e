"""`Git.push` with a lease, from a clone that has the whole history: only the lease refuses a
fix that would fast-forward a branch someone reset behind the commit the fix was made on."""

from __future__ import annotations

from pathlib import Path

import pytest

from ci_autofix.git import Git
from tests.testing.git import commit, git, init_repo


@pytest.fixture
def reset_behind(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Git, Path, str, str, str]:
    """(our full clone, the remote, the first commit, the failing head, the fix on the head), with
    the remote's `feature` reset to the first commit after the clone."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    source = tmp_path / "source"
    first = init_repo(source, {"app.py": "VALUE = 1\n"}, branch="feature")
    head = commit(source, {"app.py": "VALUE = 2\n"}, "Break it")
    remote = tmp_path / "remote.git"
    git(tmp_path, "clone", "-q", "--bare", str(source), str(remote))
    ours = tmp_path / "ours"
    git(tmp_path, "clone", "-q", str(remote), str(ours))  # full depth: `first` is known here
    fix = commit(ours, {"app.py": "VALUE = 3\n"}, "Fix it")
    git(remote, "update-ref", "refs/heads/feature", first)  # meanwhile: someone resets the branch
    return Git(ours), remote, first, head, fix


def test_the_lease_refuses_a_push_that_would_fast_forward(
    reset_behind: tuple[Git, Path, str, str, str],
) -> None:
    ours, remote, first, head, fix = reset_behind
    push = ours.push(
        str(remote),
        f"{fix}:refs/heads/feature",
        token="t",
        server_url="https://github.invalid",
        lease=("refs/heads/feature", head),
    )
    assert not push.ok
    assert "stale info" in push.output
    assert git(remote, "rev-parse", "refs/heads/feature") == first


def test_without_the_lease_the_same_push_lands(reset_behind: tuple[Git, Path, str, str, str]) -> None:
    """What the lease is for: the fix (a descendant of `first`) fast-forwards the reset branch."""
    ours, remote, _, _, fix = reset_behind
    push = ours.push(str(remote), f"{fix}:refs/heads/feature", token="t", server_url="https://github.invalid")
    assert push.ok
    assert git(remote, "rev-parse", "refs/heads/feature") == fix
