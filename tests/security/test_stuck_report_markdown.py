"""The stuck report is built from suggestion records that sit in PR bodies anyone with write access
can edit, and from the log excerpt: none of it may render as Markdown (links, mentions, HTML)."""

from __future__ import annotations

from functools import partial

from ci_autofix.deliver.report import run_link
from ci_autofix.deliver.stuck import MARKER, Limits, render
from ci_autofix.github import PullInfo
from ci_autofix.state.ledger import Applied, Lineage, Suggested
from ci_autofix.state.marker import Suggestion
from tests.security.workflow_commands_helpers import assert_only_as_code

HOSTILE = "x` | @alice [PWN](http://x) <img src=x> <details><summary>pwned ``` |"
SHA = [f"{n}" * 40 for n in "abcd"]


def suggested(number: int, fix: str, head: str, run_id: int, state: str = "closed") -> Suggested:
    record = Suggestion(
        run_id=run_id,
        failing_branch="feature",
        head_sha=head,
        fix_sha=fix,
        fix_branch=f"ci-autofix/feature/{run_id}",
        attempt=number,
        verification="unverified",
        failed=HOSTILE,
        files=[HOSTILE, "src/app.py"],
    )
    pull = PullInfo(
        number,
        f"https://example.invalid/pull/{number}",
        state,
        False,
        "t",
        record.render(),
        "h",
        fix,
        "feature",
        "bot",
    )
    return Suggested(pull, record)


def test_every_field_from_a_record_or_the_log_renders_as_code() -> None:
    line = Lineage(
        head_sha=SHA[2],
        applied=[Applied(SHA[2], SHA[1], 12), Applied(SHA[1], SHA[0], 11)],
        open_for_head=[suggested(3, SHA[3], SHA[2], 13, "open")],
        stale=[],
        suggestions=[suggested(2, SHA[2], SHA[1], 12), suggested(1, SHA[1], SHA[0], 11)],
    )
    body = render(
        line,
        Limits(max_attempts=3),
        run_id=14,
        run_link=partial(run_link, "https://github.example", "o/r"),
        excerpt=f"FAILED {HOSTILE}\n",
    )
    assert body.startswith(MARKER)
    assert_only_as_code(body)
    rows = [row for row in body.splitlines() if row.startswith("| ") and "Attempt" not in row]
    assert [row.split(" | ")[0] for row in rows] == ["| 1", "| 2", "| 3"]
    assert "[run 11](https://github.example/o/r/actions/runs/11)" in rows[0]
    assert (
        "failed ([run 12]" in rows[0]
        and "failed ([this run](https://github.example/o/r/actions/runs/14))" in rows[1]
    )
    assert "not applied yet" in rows[2]
    assert all(row.count(" | ") == 6 for row in rows)  # a `|` in a record cannot add a column
