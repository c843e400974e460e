"""The one ending every Action flow gives a halt: the outcome, the kept work, the job summary."""

from __future__ import annotations

import io
from pathlib import Path

from ci_autofix.errors import AgentSpend, Halt, HaltReason, Kept
from ci_autofix.flows.ended import ended
from ci_autofix.outcome import Outcome
from ci_autofix.runner import Runner

DIFF = "--- a/calc.py\n+++ b/calc.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n"


def _runner(tmp_path: Path) -> tuple[Runner, io.StringIO]:
    stream = io.StringIO()
    (tmp_path / "out").touch()
    runner = Runner(
        in_actions=True, output_path=tmp_path / "out", summary_path=tmp_path / "summary", stream=stream
    )
    return runner, stream


def _summary(outcome: Outcome) -> str:
    return f"## the flow's own summary: {outcome.reason}\n"


def test_a_halt_after_the_agent_keeps_its_work_and_reports_what_it_spent(tmp_path: Path) -> None:
    runner, _ = _runner(tmp_path)
    temp = tmp_path / "runner_temp"
    temp.mkdir()
    halt = Halt(
        HaltReason.UNVERIFIED_FIX,
        "the fix did not pass",
        details={"step": "test"},
        spent=AgentSpend(cost_usd=0.25, turns=4),
        kept=Kept(diff=DIFF),
    )

    outcome = ended(halt, runner, keep_in=temp, name="run-7-1", summary=_summary, run_url="https://x/run/7")

    assert (outcome.status, outcome.reason, outcome.message) == (
        "halted",
        "unverified-fix",
        "the fix did not pass",
    )
    assert (outcome.cost_usd, outcome.agent_turns, outcome.run_url) == (0.25, 4, "https://x/run/7")
    assert outcome.details == {"step": "test"}
    assert Path(outcome.patch_path).read_text(encoding="utf-8") == DIFF
    assert Path(outcome.patch_path).is_relative_to(temp / "ci-autofix" / "run-7-1")
    summary = (tmp_path / "summary").read_text(encoding="utf-8")
    assert summary.startswith("## the flow's own summary: unverified-fix\n")
    assert "The change that was not proposed" in summary and "+x = 2" in summary


def test_a_halt_before_any_spend_or_change_has_neither(tmp_path: Path) -> None:
    runner, _ = _runner(tmp_path)
    halt = Halt(HaltReason.INFRA, "the runner lost its network")

    outcome = ended(halt, runner, keep_in=tmp_path, name="run-7-1", summary=_summary)

    assert (outcome.cost_usd, outcome.agent_turns, outcome.patch_path) == (None, None, "")
    assert not (tmp_path / "ci-autofix").exists()
    assert (tmp_path / "summary").read_text(encoding="utf-8").strip() == "## the flow's own summary: infra"


def test_work_that_cannot_be_written_is_still_in_the_summary(tmp_path: Path) -> None:
    runner, stream = _runner(tmp_path)
    not_a_directory = tmp_path / "runner_temp"
    not_a_directory.write_text("a file where RUNNER_TEMP should be", encoding="utf-8")
    halt = Halt(HaltReason.POLICY, "the patch policy refused it", kept=Kept(diff=DIFF))

    outcome = ended(halt, runner, keep_in=not_a_directory, name="review-3", summary=_summary)

    assert outcome.patch_path == ""
    assert "could not be kept in files" in stream.getvalue()
    assert "+x = 2" in (tmp_path / "summary").read_text(encoding="utf-8")
