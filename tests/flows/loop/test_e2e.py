"""The bounded loop across runs, through the entrypoint as the runner starts it, against the emulator
and the Messages fake: fix → apply → CI fails on the fix → fix, three times; then the stuck report;
a human commit starts a new lineage and supersedes the suggestions for older commits; a green run on
an applied fix ends in `success`.

The failure is one that passes in the action's re-run and fails in CI (it depends on the CI
environment); with `attempt-unreproduced` each suggestion is an unverified draft that a human
applies, as in the issue."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ci_autofix.deliver.stuck import STUCK_LABEL
from tests.testing.calc_scenario import EDITOR
from tests.testing.emulator import BOT, GitHubEmulator
from tests.testing.fakes.messages import reply, tool_use
from tests.testing.loop import APPLY, REPO, Loop, editing


@pytest.mark.slow
def test_the_loop_is_bounded_reported_restarted_and_ends_in_success(
    github_emulator: GitHubEmulator, tmp_path: Path
) -> None:
    emu = github_emulator
    loop = Loop(emu, tmp_path, inputs={"attempt-unreproduced": "true"})
    outcomes = []

    # fail → propose (n) → apply → fail on the fix, three times: attempts 1, 2, 3
    for attempt in (1, 2, 3):
        proposed, _ = loop.propose(loop.ci(), editing(attempt))
        assert proposed.outputs["status"] == "proposed", proposed.log
        assert proposed.outputs["attempt"] == str(attempt)
        outcomes.append(json.loads(proposed.outputs["result-json"]))
        loop.apply(proposed.outputs["pull-request"])

    # the fourth failure: the cap; no model call, a stuck report on the failing PR, its label
    failing = loop.ci()
    halted, calls = loop.propose(failing, editing(4))
    assert (halted.outputs["status"], halted.outputs["reason"]) == ("halted", "attempts-exhausted"), (
        halted.log
    )
    assert calls == 0
    (report,) = loop.stuck_comments()
    assert report.count("\n| ") == 4  # the header and a row per attempt
    assert "the widget cache is stale" in report
    assert f"/actions/runs/{failing.id}" in report
    assert STUCK_LABEL in emu.labels(REPO, loop.failing_pr)
    assert "stuck report" in halted.summary
    outcomes.append(json.loads(halted.outputs["result-json"]))

    # a re-run updates the report in place
    again, _ = loop.propose(failing, [])
    assert again.outputs["reason"] == "attempts-exhausted"
    assert len(loop.stuck_comments()) == 1

    # a human commit: a new lineage (attempt 1), the stuck label goes
    loop.human_commit({"notes.txt": "the cache, by hand\n"})
    first, _ = loop.propose(loop.ci(), editing(4))
    assert (first.outputs["status"], first.outputs["attempt"]) == ("proposed", "1"), first.log
    assert STUCK_LABEL not in emu.labels(REPO, loop.failing_pr)
    older = int(first.outputs["pull-request"])

    # another human commit fails: the suggestion for the older commit is superseded, not counted
    loop.human_commit({"notes.txt": "the cache, by hand, again\n"})
    newer, _ = loop.propose(loop.ci(), editing(4))
    assert (newer.outputs["status"], newer.outputs["attempt"]) == ("proposed", "1"), newer.log
    assert emu.pull(REPO, older).state == "closed"
    assert f"Superseded by #{newer.outputs['pull-request']}" in emu.comments(REPO, older)[-1]

    # applied, and CI is green on it: the loop ends in success
    loop.apply(newer.outputs["pull-request"])
    docs, _ = loop.propose(loop.ci("success", workflow=".github/workflows/docs.yml"), [])
    assert (docs.outputs["status"], docs.outputs["reason"]) == ("halted", "not-a-failure"), docs.log
    assert "made for a failure of `.github/workflows/ci.yml`" in docs.summary  # another workflow's green
    green, calls = loop.propose(loop.ci("success"), [])
    assert green.outputs["status"] == "success", green.log
    assert green.outputs["attempt"] == "1"
    assert green.outputs["run-url"].endswith(f"/actions/runs/{emu.runs[max(emu.runs)].id}")
    assert calls == 0
    applied_pr = int(newer.outputs["pull-request"])
    assert "CI passed on this fix" in emu.comments(REPO, applied_pr)[-1]
    outcomes.append(json.loads(green.outputs["result-json"]))
    print(json.dumps([{k: o[k] for k in ("status", "reason", "attempt")} for o in outcomes]))


# The unattended loop's failure reproduces here and each fix passes here, so every suggestion is
# verified and clean, and auto-apply dispatches apply for it; CI (which sets LOOP_CI) still fails
# on every fix. The check passes once `stamp.txt` names the commit it runs on: each fix stamps
# the commit it was made for, so the fix's own commit fails again.
STAMPED = (
    "import os\nimport subprocess\nimport sys\n\n"
    'head = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()\n'
    'stamp = open("stamp.txt").read().strip()\n'
    'sys.exit(1 if os.environ.get("LOOP_CI") or stamp != head else 0)\n'
)


def stamping(old: str, new: str) -> list[dict[str, Any]]:
    """The model's attempt: stamp the commit it is fixing, then finish."""
    edit = {"command": "str_replace", "path": "stamp.txt", "old_str": old, "new_str": new}
    done = {"summary": "stamp", "root_cause": "stamp.txt", "confidence": "high", "notes_left_as_is": []}
    return [reply(tool_use(EDITOR, edit)), reply(tool_use("finish", done))]


@pytest.mark.slow
def test_the_cap_holds_in_unattended_mode(github_emulator: GitHubEmulator, tmp_path: Path) -> None:
    """auto-apply with an apply environment without reviewers: fix → apply → CI fails → fix, by
    itself, until `max-attempts`; then the stuck report, and no further model call or dispatch."""
    emu = github_emulator
    loop = Loop(emu, tmp_path, {"check.py": STAMPED, "stamp.txt": "nothing yet\n"})
    emu.add_workflow(
        REPO, APPLY, "ci-autofix apply", dispatch=True, inputs={"pull-request": {"required": True}}
    )
    stamp = "nothing yet"
    for attempt in (1, 2, 3):
        made_for = loop.head
        proposed, _ = loop.propose(loop.ci(), stamping(stamp, made_for), **{"auto-apply": "true"})
        out = proposed.outputs
        assert (out["status"], out["attempt"], out["auto-apply"]) == (
            "proposed",
            str(attempt),
            "dispatched",
        ), proposed.summary
        assert json.loads(out["result-json"])["details"]["verification"] == "verified"
        [dispatch] = emu.dispatches[attempt - 1 :]
        assert (dispatch.workflow, dispatch.inputs) == (APPLY, {"pull-request": out["pull-request"]})
        loop.apply(dispatch.inputs["pull-request"], actor=BOT)  # the run the dispatch started
        stamp = made_for

    halted, calls = loop.propose(loop.ci(), stamping(stamp, loop.head), **{"auto-apply": "true"})
    assert (halted.outputs["status"], halted.outputs["reason"]) == ("halted", "attempts-exhausted"), (
        halted.log
    )
    assert calls == 0
    assert len(emu.dispatches) == 3
    (report,) = loop.stuck_comments()
    assert report.count("\n| ") == 4  # the header and a row per attempt
