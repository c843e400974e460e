"""Which files a failure names, for the inherited-failure check: a finding's file, a test's file
from its id; the path-suffix rule that matches a log's path with a PR's changed file; and a file list
cut short at GitHub's limit."""

from __future__ import annotations

from typing import cast

from ci_autofix.github import PullFile
from ci_autofix.github.api import GitHubAPI
from ci_autofix.triage.model import Category, Diagnosis, Failure
from ci_autofix.workflow.inherited import PULL_FILES_LISTED, _same_file, failing_files, touched


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


class _ListedFiles:
    """GitHub's answer to `pulls/{n}/files`, and nothing else (the edge `touched` asks)."""

    def __init__(self, names: list[str]) -> None:
        self.files = [PullFile(name, "modified", None, "@@ -1 +1 @@\n-a\n+b") for name in names]

    def pull_files(self, number: int) -> list[PullFile]:
        return self.files


def test_a_pr_changing_the_failing_file_touched_it_and_one_leaving_it_did_not() -> None:
    failing = diagnosis(Failure("ruff", "lint", "unused", file="src/cache.py", line=3, rule="F401"))
    assert touched(cast(GitHubAPI, _ListedFiles(["README.md", "src/cache.py"])), 7, failing)
    assert not touched(cast(GitHubAPI, _ListedFiles(["README.md"])), 7, failing)


def test_a_file_list_as_long_as_github_ever_gives_counts_as_touched() -> None:
    # GitHub lists at most 3,000 of a PR's files: the failing one may be past the end of the list
    failing = diagnosis(Failure("ruff", "lint", "unused", file="src/cache.py", line=3, rule="F401"))
    listed = [f"docs/page{n}.md" for n in range(PULL_FILES_LISTED)]
    assert touched(cast(GitHubAPI, _ListedFiles(listed)), 7, failing)
    assert not touched(cast(GitHubAPI, _ListedFiles(listed[:-1])), 7, failing)
