"""The ask-first question renders everything from the log and the workflow as code: a failing
test prints what it likes, and a workflow names its jobs and steps (GitHub's renderer decides)."""

from __future__ import annotations

from ci_autofix.deliver.ask import MARKER, Ask, render
from ci_autofix.github import JobInfo
from ci_autofix.github.models import StepInfo
from ci_autofix.triage.model import Category, Diagnosis, Failure
from tests.security.workflow_commands_helpers import assert_only_as_code, outside_code

HOSTILE = "x` | @alice [PWN](http://x) <img src=x> <details><summary>pwned ``` | ::set-output name=a::b"


def test_every_field_from_the_log_or_the_workflow_renders_as_code() -> None:
    failure = Failure(
        tool=f"pytest{HOSTILE}",
        kind="test",
        message=HOSTILE,
        file=f"src/{HOSTILE}.py",
        line=3,
        test_id=f"tests/test_x.py::test_{HOSTILE}",
        evidence=[f"E   {HOSTILE}", f"```\n{HOSTILE}\n{MARKER}"],
    )
    ask = Ask(
        run_id=7,
        run_url="https://github.com/o/r/actions/runs/7",
        branch=f"feature{HOSTILE}",
        head_sha="a" * 40,
        attempt=1,
        max_attempts=3,
        repository="o/r",
        workflow_file="ci-autofix-propose.yml",
        workflow_url="https://github.com/o/r/actions/workflows/ci-autofix-propose.yml",
        failing_workflow=f".github/workflows/{HOSTILE}.yml",
        dispatchable=False,
        max_cost_usd=2.0,
        max_turns=30,
        max_minutes=15,
    )
    job = JobInfo(1, f"lint {HOSTILE}", "failure", "", 1, [StepInfo(2, f"Run {HOSTILE}", "failure")])
    body = render(ask, Diagnosis([failure], [], Category.TEST, "", 0, 0), [job])
    assert body.startswith(MARKER)
    assert "PWN" in body  # shown, as code
    assert_only_as_code(body)
    assert outside_code(body).count("ci-autofix:ask-first") <= 1  # only our own marker, first
    rows = [row for row in body.splitlines() if row.startswith("| ") and "Failed step" not in row]
    assert all(row.count(" | ") == 1 for row in rows)  # a `|` in a name cannot add a column
