"""The circuit breaker on the failure signature, through the entrypoint against the emulator and
the Messages fake: CI fails on an applied fix with the same failing test as the run it was made
for: stuck at once (below `max-attempts`), no model request, both runs in the stuck report. A
different failure on the fix goes on to the next attempt."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.testing.emulator import GitHubEmulator
from tests.testing.loop import Loop, editing


def pytest_log(test: str) -> bytes:
    return (
        b"2026-12-01T10:00:00.0000000Z ##[group]Run python check.py\n"
        b"2026-12-01T10:00:00.0000000Z python check.py\n"
        b"2026-12-01T10:00:00.0000000Z ##[endgroup]\n"
        b"2026-12-01T10:00:01.0000000Z FAILED test_cache.py::" + test.encode() + b" - AssertionError: stale\n"
        b"2026-12-01T10:00:01.0000000Z ========================= 1 failed in 0.12s =========================\n"
        b"2026-12-01T10:00:01.0000000Z ##[error]Process completed with exit code 1.\n"
    )


@pytest.mark.slow
def test_the_same_failure_on_an_applied_fix_stops_the_loop(
    github_emulator: GitHubEmulator, tmp_path: Path
) -> None:
    loop = Loop(github_emulator, tmp_path, inputs={"attempt-unreproduced": "true"})
    first_run = loop.ci(log=pytest_log("test_widget"))
    first, _ = loop.propose(first_run, editing(1))
    assert (first.outputs["status"], first.outputs["attempt"]) == ("proposed", "1"), first.log
    loop.apply(first.outputs["pull-request"])

    # another failure on the fix: a new try
    other = loop.ci(log=pytest_log("test_gadget"))
    second, calls = loop.propose(other, editing(2))
    assert (second.outputs["status"], second.outputs["attempt"], calls) == ("proposed", "2", 2), second.log
    loop.apply(second.outputs["pull-request"])

    # the fix for test_gadget fails test_gadget again: stuck at once
    again = loop.ci(log=pytest_log("test_gadget"))
    stuck, calls = loop.propose(again, editing(3))
    out = stuck.outputs
    assert (out["status"], out["reason"], calls) == ("halted", "same-failure-again", 0), stuck.log
    (report,) = loop.stuck_comments()
    assert f"/actions/runs/{other.id})" in report and f"/actions/runs/{again.id})" in report
    assert "same failure" in report
    assert f"run {other.id}" in stuck.summary
