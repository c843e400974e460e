"""`ci-autofix check-diff` never calls "clean" a diff it did not receive: an empty input (the
output of `git diff` on a mistyped ref, or on a range without changes) is exit 3 with the cause
and the remedy, through the real entrypoint."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.test_mistakes import TRACEBACK, ci_autofix
from tests.testing.git import git, init_repo


def assert_no_input(stderr: str, stdout: str) -> None:
    assert TRACEBACK not in stderr
    assert "is empty" in stderr and "What to do:" in stderr
    assert "clean" not in stdout and "clean" not in stderr


@pytest.mark.parametrize("data", [b"", b"\n", b"  \n\t\n\r\n"], ids=["nothing", "a newline", "blanks"])
def test_nothing_on_standard_input_is_no_input(tmp_path: Path, data: bytes) -> None:
    result = ci_autofix("check-diff", "-", cwd=tmp_path, stdin=data)
    assert result.returncode == 3, (result.stdout, result.stderr)
    assert_no_input(result.stderr, result.stdout)
    assert "The diff on standard input is empty" in result.stderr


@pytest.mark.parametrize("fmt", ["text", "json", "markdown"])
def test_an_empty_diff_file_is_no_input_in_every_format(tmp_path: Path, fmt: str) -> None:
    (tmp_path / "fix.diff").write_bytes(b"")
    result = ci_autofix("check-diff", "--format", fmt, str(tmp_path / "fix.diff"), cwd=tmp_path)
    assert result.returncode == 3, (result.stdout, result.stderr)
    assert_no_input(result.stderr, result.stdout)
    assert result.stdout == ""


def test_git_diff_of_a_mistyped_ref_piped_in(tmp_path: Path) -> None:
    """`git diff origin/mian... | ci-autofix check-diff -`: git fails on its stderr, the pipe is empty."""
    repo = tmp_path / "repo"
    init_repo(repo, {"app.py": "x = 1\n"})
    (repo / "app.py").write_text("x = 2\n")
    diff = git(repo, "diff", "--", "no-such-path")  # what the pipe carries when git printed nothing
    result = ci_autofix("check-diff", "-", cwd=tmp_path, stdin=diff.encode())
    assert result.returncode == 3
    assert_no_input(result.stderr, result.stdout)
    assert "git diff" in result.stderr and "ref" in result.stderr  # the likely cause, and what to check


def test_a_real_diff_is_still_checked(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    init_repo(repo, {"app.py": "x = 1\n"})
    (repo / "app.py").write_text("x = 2\n")
    result = ci_autofix("check-diff", "-", cwd=tmp_path, stdin=git(repo, "diff").encode() + b"\n")
    assert (result.returncode, result.stderr) == (0, "")
    assert "patch policy: clean" in result.stdout
