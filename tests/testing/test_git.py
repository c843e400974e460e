"""The shared git helpers (`testing.git`) read none of this machine's git configuration, and the
test tree is one package, so no two test files share a module name."""

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


def test_every_folder_of_tests_is_a_package() -> None:
    """pytest imports a test file by its package's dotted name (`tests.fixers.test_run`) when every
    folder above it is a package (has an `__init__.py`); a folder without one makes its files
    top-level modules, and two files of one name in two such folders clash."""
    folders = {path.parent for path in TESTS.rglob("*.py")} - {
        path.parent for path in TESTS.rglob("__init__.py")
    }
    assert sorted(str(folder.relative_to(TESTS)) for folder in folders) == ["ladder/outputs"]
