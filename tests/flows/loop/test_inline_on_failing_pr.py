"""Inline suggestions on the failing PR, through the entrypoint against the emulator and the
Messages fake: the PR broke a line of `check.py`; the fix changes that line (inside the PR's
diff) and a line of `util.py` (a file the PR does not change). Beside the suggestion PR, the
failing PR gets one review with one ```suggestion on the PR's line, the verdict and the link
beside it; the other hunk stays in the suggestion PR only. A flagged fix gets none, nor an
unverified draft, nor a branch without an open PR, nor a run with `inline-suggestions: false`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.testing.calc_scenario import EDITOR
from tests.testing.emulator import GitHubEmulator
from tests.testing.fakes.messages import reply, tool_use
from tests.testing.loop import CHECK, REPO, Loop, editing

WORKING = "import sys\n\n\nATTEMPTS = 1\n\nsys.exit(0 if ATTEMPTS else 1)\n"
BROKEN = WORKING.replace("ATTEMPTS = 1", "ATTEMPTS = 0")
FILES = {"check.py": WORKING, "util.py": "VALUE = 1\n", "requirements.txt": "requests==2.31.0\n"}


def fixing(also: tuple[str, str, str]) -> list[dict[str, Any]]:
    """The model: ATTEMPTS back to 1 (the PR's line), one more edit `also` (path, old, new), finish."""
    edits = [("check.py", "ATTEMPTS = 0", "ATTEMPTS = 1"), also]
    turns = [
        reply(tool_use(EDITOR, {"command": "str_replace", "path": p, "old_str": old, "new_str": new}))
        for p, old, new in edits
    ]
    done = {
        "summary": "ATTEMPTS back to 1",
        "root_cause": "check.py:4",
        "confidence": "high",
        "notes_left_as_is": [],
    }
    return [*turns, reply(tool_use("finish", done))]


def broken_pr(emu: GitHubEmulator, tmp_path: Path) -> Loop:
    loop = Loop(emu, tmp_path, FILES)
    loop.human_commit({"check.py": BROKEN, "requirements.txt": "requests==2.32.0\n"})
    return loop


@pytest.mark.slow
def test_the_hunks_inside_the_prs_lines_are_suggested_on_it(
    github_emulator: GitHubEmulator, tmp_path: Path
) -> None:
    emu = github_emulator
    loop = broken_pr(emu, tmp_path)
    run = loop.ci()
    proposed, calls = loop.propose(run, fixing(("util.py", "VALUE = 1", "VALUE = 2")))
    out = proposed.outputs
    assert (out["status"], calls) == ("proposed", 3), proposed.log
    details = json.loads(out["result-json"])["details"]
    assert (
        details["inline"] == "1 inline suggestion(s) posted in 1 review(s); 1 hunk(s) only in the side branch"
    )

    [review] = emu.reviews_of(REPO, loop.failing_pr)
    assert (review.state, review.commit_id) == ("COMMENTED", loop.head)
    [comment] = emu.review_comments_of(REPO, loop.failing_pr)
    assert (comment.path, comment.line, comment.side, comment.start_line) == ("check.py", 4, "RIGHT", None)
    assert comment.body.startswith("```suggestion\nATTEMPTS = 1\n```\n")
    assert f"/pull/{out['pull-request']}" in comment.body and "Verification: verified" in comment.body
    assert emu.review_comments_of(REPO, int(out["pull-request"])) == []  # none on the suggestion PR

    again, calls = loop.propose(run, [])
    assert (again.outputs["reason"], calls) == ("already-proposed", 0), again.log
    assert len(emu.review_comments_of(REPO, loop.failing_pr)) == 1  # a re-run posts nothing again


@pytest.mark.slow
def test_a_flagged_fix_gets_no_inline_suggestion(github_emulator: GitHubEmulator, tmp_path: Path) -> None:
    emu = github_emulator
    loop = broken_pr(emu, tmp_path)
    pin = ("requirements.txt", "requests==2.32.0", "requests==2.31.0")  # in the PR's lines, flagged
    proposed, calls = loop.propose(loop.ci(), fixing(pin))
    out = proposed.outputs
    assert (out["status"], calls) == ("proposed", 3), proposed.log
    details = json.loads(out["result-json"])["details"]
    assert details["inline"] == "no inline suggestions: the patch policy flagged the fix", details
    assert emu.reviews_of(REPO, loop.failing_pr) == []


@pytest.mark.slow
def test_inline_suggestions_can_be_turned_off(github_emulator: GitHubEmulator, tmp_path: Path) -> None:
    emu = github_emulator
    loop = broken_pr(emu, tmp_path)
    fix = fixing(("util.py", "VALUE = 1", "VALUE = 2"))
    proposed, _ = loop.propose(loop.ci(), fix, **{"inline-suggestions": "false"})
    assert proposed.outputs["status"] == "proposed", proposed.log
    details = json.loads(proposed.outputs["result-json"])["details"]
    assert details["inline"] == "no inline suggestions: `inline-suggestions` is off"
    assert emu.reviews_of(REPO, loop.failing_pr) == []


@pytest.mark.slow
def test_an_unverified_draft_gets_no_inline_suggestion(
    github_emulator: GitHubEmulator, tmp_path: Path
) -> None:
    emu = github_emulator
    loop = Loop(emu, tmp_path, {"check.py": CHECK.replace("ATTEMPTS = 0", "ATTEMPTS = 5")})
    loop.human_commit({"check.py": CHECK})  # the PR's line 4, which the draft changes
    drafted, calls = loop.propose(loop.ci(), editing(1), **{"attempt-unreproduced": "true"})
    assert (drafted.outputs["status"], calls) == ("proposed", 2), drafted.log
    details = json.loads(drafted.outputs["result-json"])["details"]
    assert (details["verification"], details["inline"]) == (
        "unverified",
        "no inline suggestions: the fix is not verified",
    )
    assert emu.reviews_of(REPO, loop.failing_pr) == []


@pytest.mark.slow
def test_a_branch_without_an_open_pr_gets_none(github_emulator: GitHubEmulator, tmp_path: Path) -> None:
    emu = github_emulator
    loop = broken_pr(emu, tmp_path)
    emu.pull(REPO, loop.failing_pr).state = "closed"  # a push to a branch without an open PR
    proposed, _ = loop.propose(loop.ci(), fixing(("util.py", "VALUE = 1", "VALUE = 2")))
    assert proposed.outputs["status"] == "proposed", proposed.log
    details = json.loads(proposed.outputs["result-json"])["details"]
    assert (
        details["inline"]
        == "no inline suggestions: the failing commit is not the head of an open pull request"
    )
    assert emu.reviews_of(REPO, loop.failing_pr) == []


@pytest.mark.slow
def test_when_github_cannot_list_the_prs_files_the_suggestion_still_stands(
    github_emulator: GitHubEmulator, tmp_path: Path
) -> None:
    emu = github_emulator
    loop = broken_pr(emu, tmp_path)
    emu.fail("GET", r"/pulls/\d+/files", 502, times=None)
    proposed, _ = loop.propose(loop.ci(), fixing(("util.py", "VALUE = 1", "VALUE = 2")))
    out = proposed.outputs
    assert out["status"] == "proposed" and out["pull-request"], proposed.log
    details = json.loads(out["result-json"])["details"]
    assert details["inline"].startswith("no inline suggestions: GitHub"), details["inline"]
    assert "No inline suggestions on" in proposed.log
    assert emu.reviews_of(REPO, loop.failing_pr) == []
