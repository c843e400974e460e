"""Which files a failure names, for the inherited-failure check: a finding's file, a test's file
from its id; and the path-suffix rule that matches a log's path with a PR's changed file."""

from __future__ import annotations

from ci_autofix.triage.model import Category, Diagnosis, Failure
from ci_autofix.workflow.inherited import _same_file, failing_files


def diagnosis(*failures: Failure) -> Diagnosis:
    return Diagnosis(list(failures), [], Category.TEST, "", 0, 0)


def test_the_files_a_failure_names() -> None:
    found = diagnosis(
        Failure("pytest", "test", "stale", test_id="tests/test_cache.py::test_widget[1]"),
        Failure("ruff", "lint", "unused", file="./src/cache.py", line=3, rule="F401"),
        Failure("generic", "error", "Process completed with exit code 1."),
    )
    assert failing_files(found) == {"tests/test_cache.py", "src/cache.py"}
    assert failing_files(diagnosis(Failure("generic", "error", "boom"))) == set()


def test_a_path_matches_at_a_slash_only() -> None:
    assert _same_file("/home/runner/work/cache/cache/src/cache.py", "src/cache.py")  # absolute in the log
    assert _same_file("test_cache.py", "tests/test_cache.py")  # relative to the step's directory
    assert not _same_file("src/mycache.py", "cache.py")
    assert not _same_file("src/cache.py", "src/cache.pyi")
