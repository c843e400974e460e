"""One suggestion per failure per commit, through the entrypoint against the emulator and the
Messages fake: a CI workflow on `[push, pull_request]` fails twice on one commit (two run ids).
The first run's suggestion stands for the second: the same PR in the outputs, no model request,
no second branch, the attempt not counted twice."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.testing.emulator import GitHubEmulator
from tests.testing.loop import REPO, Loop, editing

# Fails here as in CI until ATTEMPTS is set: the fix reproduces and verifies.
FAILING = "import sys\n\n\nATTEMPTS = 0\n\nsys.exit(0 if ATTEMPTS else 1)\n"


@pytest.mark.slow
def test_a_second_run_failing_the_same_way_on_the_commit_reuses_the_suggestion(
    github_emulator: GitHubEmulator, tmp_path: Path
) -> None:
    emu = github_emulator
    loop = Loop(emu, tmp_path, {"check.py": FAILING}, on="[push, pull_request]")
    push, pull = loop.ci(event="push"), loop.ci(event="pull_request")

    first, calls = loop.propose(push, editing(1))
    out = first.outputs
    assert (out["status"], out["attempt"]) == ("proposed", "1"), first.log
    assert calls == 2
    branches = emu.refs(REPO)

    second, calls = loop.propose(pull, editing(1))
    again = second.outputs
    assert (again["status"], again["reason"]) == ("proposed", "same-failure"), second.log
    assert (again["pull-request"], again["fix-branch"], again["fix-sha"], again["attempt"]) == (
        out["pull-request"],
        out["fix-branch"],
        out["fix-sha"],
        "1",
    )
    assert calls == 0  # nothing spent
    assert again["cost-usd"] == ""
    assert emu.refs(REPO) == branches  # no second side branch
    assert len([p for p in emu.pulls(REPO) if p.state == "open"]) == 2  # the failing PR and one suggestion
    assert f"run {push.id}" in second.summary

    # the pushed run again: idempotent as before, the same PR
    rerun, calls = loop.propose(push, [])
    assert (rerun.outputs["reason"], rerun.outputs["pull-request"], calls) == (
        "already-proposed",
        out["pull-request"],
        0,
    )
