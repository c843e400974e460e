"""The shared git helpers (`testing.git`) read none of this machine's git configuration."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.testing.git import ALICE, git, init_repo, try_git

TESTS = Path(__file__).resolve().parents[1]


@pytest.fixture
def machine_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A stand-in for this machine's HOME (in tmp_path): a global config and an attributes file."""
    home = tmp_path / "machine-home"
    (home / ".config" / "git").mkdir(parents=True)
    (home / ".gitconfig").write_text("[user]\n\tname = Machine\n\temail = machine@example.invalid\n")
    (home / ".config" / "git" / "attributes").write_text("* machine=yes\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(home / ".gitconfig"))
    return home


def test_the_helpers_read_no_global_config_or_attributes(machine_home: Path, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    init_repo(repo, {"a.txt": "a\n"})
    assert try_git(repo, "config", "--get", "user.name").returncode == 1
    assert git(repo, "check-attr", "machine", "--", "a.txt") == "a.txt: machine: unspecified"
    assert git(repo, "log", "-1", "--format=%an <%ae>") == f"{ALICE.name} <{ALICE.email}>"


def test_a_given_home_is_the_one_global_config(machine_home: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / ".gitconfig").write_text("[user]\n\tname = Given\n")
    assert git(tmp_path, "config", "--global", "--get", "user.name", home=home) == "Given"
