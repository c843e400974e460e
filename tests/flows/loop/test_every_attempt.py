"""Every attempt counts, through the entrypoint against the emulator and the Messages fake: an
attempt that reached the model and halted leaves a record on the failing commit that only
ci-autofix's identity can write; re-running the failed job makes further attempts until
`max-attempts`, then the stuck report lists the halted attempts and the model is not called.
The spend of a lineage is capped by `max-lineage-cost-usd` likewise."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ci_autofix.state import attempts
from tests.testing.emulator import BOT, GitHubEmulator
from tests.testing.fakes.messages import reply, tool_use
from tests.testing.loop import REPO, Loop

# Fails here as in CI: the failure reproduces; the model gives up on it.
FAILING = "import sys\n\n\nATTEMPTS = 0\n\nsys.exit(0 if ATTEMPTS else 1)\n"
USAGE = {"input_tokens": 20_000, "output_tokens": 500}


def giving_up() -> list[dict[str, Any]]:
    done = {"summary": "no idea", "root_cause": "unknown", "confidence": "low", "notes_left_as_is": []}
    return [reply(tool_use("finish", done), usage=USAGE)] * 2  # and again, on its retry


def recorded(emu: GitHubEmulator, sha: str) -> list[tuple[str, str, str]]:
    return [
        (s.context, s.description or "", s.creator)
        for s in emu.statuses(REPO, sha)
        if s.context.startswith(attempts.PREFIX)
    ]


@pytest.mark.slow
def test_halted_attempts_count_until_the_cap(github_emulator: GitHubEmulator, tmp_path: Path) -> None:
    emu = github_emulator
    loop = Loop(emu, tmp_path, {"check.py": FAILING})
    run = loop.ci()
    # a forged record by someone with write access counts for nothing
    emu.add_status(
        REPO,
        loop.head,
        context=attempts.context(run.id, 9),
        state="failure",
        description=f"halted policy for run {run.id}; spent 9.0000 USD",
        creator="alice",
    )
    spent = []
    for number in (1, 2, 3):
        halted, calls = loop.propose(run, giving_up())
        out = halted.outputs
        assert (out["status"], out["reason"], calls) == ("halted", "agent-gave-up", 2), halted.log
        assert f"attempt {number} of 3 on this lineage" in halted.log
        spent.append(float(out["cost-usd"]))
        assert (
            attempts.context(run.id, number),
            f"halted agent-gave-up for run {run.id}; spent {spent[-1]:.4f} USD",
            BOT,
        ) in recorded(emu, loop.head)
        assert not [b for b in emu.refs(REPO) if b.startswith("refs/heads/ci-autofix/")]  # nothing proposed
        loop.rerun(run)

    stuck, calls = loop.propose(run, giving_up())
    assert (stuck.outputs["status"], stuck.outputs["reason"], calls) == ("halted", "attempts-exhausted", 0), (
        stuck.log
    )
    (report,) = loop.stuck_comments()
    assert report.count("halted `agent-gave-up`") == 3
    assert f"(attempt {run.run_attempt - 1})" in report
    # a fourth attempt of the failed run halted before the model: nothing more is recorded
    assert len(recorded(emu, loop.head)) == 4  # three of ours, alice's


@pytest.mark.slow
def test_the_lineage_budget_caps_the_spend_of_halted_attempts(
    github_emulator: GitHubEmulator, tmp_path: Path
) -> None:
    emu = github_emulator
    loop = Loop(emu, tmp_path, {"check.py": FAILING})
    run = loop.ci()
    first, calls = loop.propose(run, giving_up(), **{"max-lineage-cost-usd": "0.05"})
    assert (first.outputs["reason"], calls) == ("agent-gave-up", 2), first.log
    assert float(first.outputs["cost-usd"]) >= 0.05  # the fake's usage: one attempt spends it all

    loop.rerun(run)
    capped, calls = loop.propose(run, giving_up(), **{"max-lineage-cost-usd": "0.05"})
    assert (capped.outputs["reason"], calls) == ("lineage-budget", 0), capped.log
    (report,) = loop.stuck_comments()
    assert "`max-lineage-cost-usd` (0.05)" in report
    assert report.count("halted `agent-gave-up`") == 1
