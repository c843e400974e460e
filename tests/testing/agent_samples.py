"""Helpers for the agent tests: a small broken repository and its diagnosis."""

from __future__ import annotations

import sys
from pathlib import Path

from ci_autofix.triage.model import Category, Diagnosis, Failure
from tests.testing.git import Author, commit, init

CALC = '''\
def add(a, b):
    """The sum of a and b."""
    return a - b


def mul(a, b):
    return a * b
'''
TEST_CALC = """\
from calc import add, mul


def test_add():
    assert add(2, 3) == 5


def test_mul():
    assert mul(2, 3) == 6
"""


def failing_command() -> str:
    return f"{sys.executable} -m pytest -q -p no:cacheprovider tests/test_calc.py"


def diagnosis(command: str | None = None, excerpt: str | None = None) -> Diagnosis:
    failure = Failure(
        tool="pytest",
        kind="test",
        message="assert -1 == 5",
        file="tests/test_calc.py",
        line=5,
        test_id="tests/test_calc.py::test_add",
    )
    text = (
        excerpt
        if excerpt is not None
        else (
            "tests/test_calc.py F.\n>       assert add(2, 3) == 5\nE       assert -1 == 5\n"
            "FAILED tests/test_calc.py::test_add - assert -1 == 5\n1 failed, 1 passed"
        )
    )
    return Diagnosis(
        failures=[failure],
        log_commands=[command or failing_command()],
        category=Category.TEST,
        excerpt=text,
        excerpt_tokens=len(text) // 4,
        budget_tokens=6000,
    )


def make_broken_repo(tmp_path: Path) -> Path:
    """A git repository whose test_add fails: add() subtracts."""
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "calc.py").write_text(CALC)
    (repo / "tests").mkdir()
    (repo / "tests" / "test_calc.py").write_text(TEST_CALC)
    (repo / ".gitignore").write_text("build/\n*.log\n")
    (repo / "build").mkdir()
    (repo / "build" / "generated.py").write_text("def add(a, b): return a - b  # ignored copy\n")
    (repo / ".github" / "workflows").mkdir(parents=True)
    (repo / ".github" / "workflows" / "ci.yml").write_text("on: push\n")
    init(repo)
    commit(repo, {}, "init", Author("t", "t@example.com"))
    return repo


def quick_command() -> str:
    """A cheap check of the same bug (no pytest start-up), for tests about the loop rather than the fix."""
    return f"{sys.executable} -c 'import calc, sys; sys.exit(calc.add(2, 3) != 5)'"
