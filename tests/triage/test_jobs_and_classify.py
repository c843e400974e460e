"""Several jobs merged (dedup across a matrix and retries), and infra vs code classification."""

from __future__ import annotations

import pytest

from ci_autofix.triage import Category, diagnose, diagnose_jobs, estimate_tokens
from tests.testing.logformat import github_log

PYTEST_OUT = (
    "=================================== FAILURES ===================================\n"
    "________________________________ test_add ______________________________________\n"
    ">       assert add(1, 2) == 3\n"
    "E       assert -1 == 3\n"
    "tests/test_calc.py:5: AssertionError\n"
    "=========================== short test summary info ============================\n"
    "FAILED tests/test_calc.py::test_add - assert -1 == 3\n"
    "1 failed, 1 passed in 0.05s"
)


def test_matrix_failures_are_listed_once_with_every_job() -> None:
    jobs = [(f"test ({v})", github_log("python -m pytest -q", PYTEST_OUT)) for v in ("3.11", "3.12", "3.13")]
    d = diagnose_jobs(jobs)
    assert d.jobs == ["test (3.11)", "test (3.12)", "test (3.13)"]
    assert d.category is Category.TEST
    assert d.log_commands == ["python -m pytest -q"]
    summary = [f for f in d.failures if f.test_id == "tests/test_calc.py::test_add"]
    assert len(summary) == 1
    assert summary[0].where == ["test (3.11)", "test (3.12)", "test (3.13)"]
    # one excerpt: the first job in full, the identical ones only named
    assert d.excerpt.count("E       assert -1 == 3") == 1
    assert "=== job: test (3.11) (same failures in: test (3.12), test (3.13)) ===" in d.excerpt


def test_distinct_jobs_share_the_budget() -> None:
    lint = github_log("ruff check .", "src/a.py:1:8: F401 [*] `os` imported but unused\nFound 1 error.")
    tests = github_log("python -m pytest -q", PYTEST_OUT)
    d = diagnose_jobs([("lint", lint), ("test", tests)], max_tokens=400)
    assert estimate_tokens(d.excerpt) <= 400
    assert "=== job: lint ===" in d.excerpt and "=== job: test ===" in d.excerpt
    assert {f.tool for f in d.failures} >= {"ruff", "pytest"}
    assert d.log_commands == ["ruff check .", "python -m pytest -q"]


def test_a_cancelled_sibling_does_not_hide_the_code_failure() -> None:
    cancelled = github_log(
        "python -m pytest -q", "collected 10 items\n##[error]The operation was canceled.", exit_code=0
    )
    failing = github_log("python -m pytest -q", PYTEST_OUT)
    alone = diagnose(cancelled)
    assert alone.category is Category.CANCELLED and alone.is_infra
    merged = diagnose_jobs([("test (3.11)", cancelled), ("test (3.12)", failing)])
    assert merged.category is Category.TEST and not merged.is_infra


def test_no_jobs() -> None:
    d = diagnose_jobs([])
    assert (d.failures, d.excerpt, d.category) == ([], "", Category.UNKNOWN)


@pytest.mark.parametrize(
    ("output", "category"),
    [
        (
            "fatal: unable to access 'https://github.com/o/r/': Could not resolve host: github.com",
            Category.NETWORK,
        ),
        ("npm error code ECONNRESET\nnpm error network aborted", Category.NETWORK),
        (
            "ERROR: failed to solve: received unexpected HTTP status: 503 Service Unavailable",
            Category.SERVICE,
        ),
        ("error: toomanyrequests: You have reached your pull rate limit.", Category.RATE_LIMIT),
        ("gh: API rate limit exceeded for installation ID 123. (HTTP 403)", Category.RATE_LIMIT),
        ("OSError: [Errno 28] No space left on device", Category.DISK_FULL),
        ("##[error]The runner has received a shutdown signal.", Category.RUNNER_LOST),
        (
            "##[error]The job running on runner GitHub Actions 3 has exceeded the maximum execution time of 360 minutes.",
            Category.TIMEOUT,
        ),
        ("FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory", Category.OOM),
    ],
)
def test_infra_is_recognised(output: str, category: Category) -> None:
    d = diagnose(github_log("make ci", output))
    assert d.category is category
    assert d.is_infra and d.infra_reason


def test_exit_137_is_an_oom_kill() -> None:
    d = diagnose(github_log("python -m pytest", "collected 3000 items\n....", exit_code=137))
    assert d.category is Category.OOM


def test_a_test_that_mentions_a_network_error_is_a_test_failure() -> None:
    out = PYTEST_OUT.replace("assert -1 == 3", "ConnectionError: Connection reset by peer")
    d = diagnose(github_log("python -m pytest -q", out))
    assert d.category is Category.TEST and not d.is_infra


def test_a_passing_test_named_after_an_error_code_is_not_an_outage() -> None:
    out = "ok 179 tls client econnreset\nnot ok 180 parses headers\n  expected: 1\n  actual: 2\n"
    d = diagnose(github_log("make test", out))
    assert not d.is_infra


def test_unknown_when_nothing_is_recognised() -> None:
    d = diagnose(github_log("./run.sh", "hello\nworld"))
    assert d.category is Category.UNKNOWN
    assert d.log_commands == ["./run.sh"]
