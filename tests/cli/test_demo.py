"""`ci-autofix demo`: it never writes into a directory that holds anything, its sample installs the
way `fix` installs a project by default, and a fix that settles only part of the failure is
called partial (exit 1), through the real entrypoint."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.test_mistakes import assert_told, ci_autofix
from tests.testing.git import git


@pytest.mark.parametrize("existing", ["ci.log", "statskit/notes.txt", ".hidden"])
def test_demo_refuses_a_directory_that_is_not_empty(tmp_path: Path, existing: str) -> None:
    target = tmp_path / "mine"
    (target / existing).parent.mkdir(parents=True, exist_ok=True)
    (target / existing).write_text("keep me\n")
    before = sorted(p.relative_to(target).as_posix() for p in target.rglob("*"))
    result = ci_autofix("demo", "--dir", str(target), cwd=tmp_path)
    assert_told(result, 2, f"{target} is not empty")
    assert "--dir" in result.stderr
    assert (target / existing).read_text() == "keep me\n"
    assert sorted(p.relative_to(target).as_posix() for p in target.rglob("*")) == before


@pytest.mark.slow
def test_the_sample_installs_by_default_and_a_partial_fix_is_called_partial(tmp_path: Path) -> None:
    """Without a model key the fixer settles the formatting and the test still fails: exit 1 and
    the word "partial", the setup it ran (the default install of the sample) shown and passing; and
    `fix` run by hand on the demo's own sample and log, as the README shows, verifies the same way."""
    result = ci_autofix("demo", "--dir", str(tmp_path / "d"), cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert "its setup, as `fix` sets up any Python project by default: pip install -e .\n" in result.stderr
    assert "running pip install -e ." in result.stderr
    assert "could not be prepared" not in result.stdout  # the install worked: the checks were re-run
    assert "A partial fix is commit" in result.stdout
    assert "The fix is commit" not in result.stdout
    assert "Verification: failed" in result.stdout and "python -m unittest -v: still fails" in result.stdout
    project = tmp_path / "d" / "statskit"
    assert git(project, "show", "ci-autofix/demo:statskit.py").startswith(
        "def total(values):\n    return sum(values)"
    )

    again = ci_autofix(
        "fix", str(tmp_path / "d" / "ci.log"), "--repo", str(project), "--branch", "by-hand", cwd=tmp_path
    )
    assert again.returncode == 1, again.stderr
    assert "A partial fix is commit" in again.stdout
    assert "Verification: failed" in again.stdout and "ruff format --check .: passes now" in again.stdout
    assert "could not be prepared" not in again.stdout and "--setup-command" not in again.stdout
