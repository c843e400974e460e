"""Unreproduced failures, through the entrypoint against the emulator and the Messages fake: a
check that fails only with an environment variable CI sets passes when ci-autofix re-runs it.
Without `attempt-unreproduced` the attempt halts `not-reproduced` with what ran and what passed,
before any model request; `rerun-flaky` re-runs the failed jobs once, on the run's first attempt;
with `attempt-unreproduced` the agent tries from the log and its fix is an unverified draft."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ci_autofix.state import attempts
from tests.testing.emulator import GitHubEmulator
from tests.testing.loop import REPO, Loop, editing


@pytest.mark.slow
def test_a_failure_that_passes_here_halts_before_the_model(
    github_emulator: GitHubEmulator, tmp_path: Path
) -> None:
    emu = github_emulator
    loop = Loop(emu, tmp_path)  # check.py fails only where LOOP_CI is set: in CI
    run = loop.ci()

    halted, calls = loop.propose(run, editing(1))
    out = halted.outputs
    assert (out["status"], out["reason"]) == ("halted", "not-reproduced"), halted.log
    assert calls == 0  # the Messages fake received no request
    assert out["cost-usd"] == ""
    assert "`python check.py`: exit 0" in halted.summary
    details = json.loads(out["result-json"])["details"]
    assert details["reproduction"] == [{"command": "python check.py", "result": "exit 0"}]
    assert emu.api_requests("POST", "rerun-failed-jobs") == []
    assert not [
        s for s in emu.statuses(REPO, loop.head) if s.context.startswith(attempts.PREFIX)
    ]  # not an attempt

    # rerun-flaky: the failed jobs are re-run once, on the run's first attempt only
    flaky, calls = loop.propose(run, editing(1), **{"rerun-flaky": "true"})
    assert (flaky.outputs["reason"], calls) == ("not-reproduced", 0), flaky.log
    assert "re-run once" in flaky.summary
    assert len(emu.api_requests("POST", f"/actions/runs/{run.id}/rerun-failed-jobs")) == 1
    loop.rerun(run)
    again, calls = loop.propose(run, editing(1), **{"rerun-flaky": "true"})
    assert (again.outputs["reason"], calls) == ("not-reproduced", 0), again.log
    assert len(emu.api_requests("POST", "rerun-failed-jobs")) == 1

    # attempt-unreproduced: the agent tries from the log; the fix is an unverified draft
    drafted, calls = loop.propose(run, editing(1), **{"attempt-unreproduced": "true"})
    out = drafted.outputs
    assert (out["status"], out["attempt"], calls) == ("proposed", "1", 2), drafted.log
    assert json.loads(out["result-json"])["details"]["verification"] == "unverified"
    assert emu.pull(REPO, int(out["pull-request"])).draft
