"""`git.configured_identity`: the identity your own git commits with, read in a checkout (real git)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ci_autofix.git import Identity, configured_identity
from tests.testing.git import git, init_repo


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A checkout, with HOME in tmp_path and no system config: only what a test writes is read."""
    home = tmp_path / "home"
    home.mkdir()
    for name in ("GIT_CONFIG_GLOBAL", "XDG_CONFIG_HOME", "GIT_DIR", "GIT_WORK_TREE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    root = tmp_path / "repo"
    init_repo(root, {"a.txt": "a\n"})
    return root


def test_the_checkout_config_names_the_identity(repo: Path) -> None:
    git(repo, "config", "user.name", "Robin Local")
    git(repo, "config", "user.email", "robin@example.invalid")
    assert configured_identity(repo) == Identity("Robin Local", "robin@example.invalid")


def test_the_global_config_names_it_when_the_checkout_does_not(repo: Path, tmp_path: Path) -> None:
    (tmp_path / "home" / ".gitconfig").write_text("[user]\n\tname = Sam\n\temail = sam@example.invalid\n")
    assert configured_identity(repo) == Identity("Sam", "sam@example.invalid")


@pytest.mark.parametrize("key", ["user.name", "user.email"])
def test_half_an_identity_is_none(repo: Path, key: str) -> None:
    git(repo, "config", key, "only this")
    assert configured_identity(repo) is None


def test_no_identity_and_a_multi_line_one_are_none(repo: Path) -> None:
    assert configured_identity(repo) is None
    git(repo, "config", "user.name", "two\nlines")
    git(repo, "config", "user.email", "x@example.invalid")
    assert configured_identity(repo) is None
