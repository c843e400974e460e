"""Paths in logs are mapped onto the checkout, or dropped."""

from __future__ import annotations

from pathlib import Path

import pytest

from ci_autofix.triage.locate import locate_failures, repo_path
from ci_autofix.triage.model import Category, Diagnosis, Failure


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    (tmp_path / "src" / "pkg" / "a.py").write_text("x = 1\n")
    (tmp_path / "b.py").write_text("y = 2\n")
    return tmp_path


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("src/pkg/a.py", "src/pkg/a.py"),
        ("./b.py", "b.py"),
        ("/home/runner/work/widgets/widgets/src/pkg/a.py", "src/pkg/a.py"),
        ("/github/workspace/b.py", "b.py"),
        ("D:\\a\\widgets\\widgets\\src\\pkg\\a.py", "src/pkg/a.py"),
        ("/usr/lib/python3.11/site-packages/x.py", None),
        ("../outside.py", None),
        ("src/pkg", None),
        ("", None),
    ],
)
def test_repo_path(root: Path, raw: str, expected: str | None) -> None:
    assert repo_path(raw, root) == expected


def test_symlinks_out_of_the_checkout_are_not_files_of_it(
    root: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    outside = tmp_path_factory.mktemp("outside") / "secret.py"
    outside.write_text("s = 1\n")
    (root / "link.py").symlink_to(outside)
    assert repo_path("link.py", root) is None


def test_locate_failures_rewrites_and_drops(root: Path) -> None:
    diagnosis = Diagnosis(
        failures=[
            Failure(tool="pytest", kind="test", message="boom", file=str(root / "src/pkg/a.py"), line=3),
            Failure(tool="mypy", kind="type", message="x", file="/opt/other/lib.py", line=9, column=2),
        ],
        log_commands=[],
        category=Category.TEST,
        excerpt="",
        excerpt_tokens=0,
        budget_tokens=100,
    )
    locate_failures(diagnosis, root)
    assert (diagnosis.failures[0].file, diagnosis.failures[0].line) == ("src/pkg/a.py", 3)
    assert (diagnosis.failures[1].file, diagnosis.failures[1].line) == (None, None)
