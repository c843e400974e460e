"""The propose flow with the agent: a real failing test, fixed by a scripted Claude session.

The action runs as a subprocess laid out like the runner; the real anthropic SDK talks to the
Messages API fake (a separate process, reached through ANTHROPIC_BASE_URL) and the real
PyGithub to the GitHub emulator. The tools really edit the checkout; verification really
re-runs the failing pytest; the suggestion PR carries the agent's explanation and its cost. Every ending after the agent ran
(a proposal or a halt: policy, failed verification, budget, model outage) reports what it cost,
in the outputs, in `result-json` and in the job summary.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ci_autofix.state.marker import parse
from tests.testing.calc_scenario import (
    API_KEY,
    BRANCH,
    CALC_OK,
    EDITOR,
    REPO,
    SUMMARY,
    fixing_turns,
    messages_process,
    propose,
    seed,
)
from tests.testing.emulator import GitHubEmulator
from tests.testing.fakes.messages import error, reply, tool_use
from tests.testing.git import git
from tests.testing.runner_sim import RunResult


def assert_cost_reported(result: RunResult, turns: int) -> None:
    """The agent's cost and turns are in the outputs, `result-json` and the job summary."""
    cost = float(result.outputs["cost-usd"])
    assert cost > 0, result.outputs
    ending = json.loads(result.outputs["result-json"])
    assert ending["cost_usd"] == pytest.approx(cost, abs=1e-4)
    assert ending["agent_turns"] == turns
    words = f"{turns} turn" + ("" if turns == 1 else "s")
    assert f"**Agent**: {words}, ${cost:.4f}" in result.summary, result.summary


@pytest.fixture
def messages_fake(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    with messages_process(fixing_turns(), tmp_path) as fake:
        yield fake


def test_the_agent_fixes_a_failing_test_through_the_whole_propose_flow(
    github_emulator: GitHubEmulator, messages_fake: tuple[str, Path], tmp_path: Path
) -> None:
    emu = github_emulator
    url, record = messages_fake
    broken = seed(emu, tmp_path)
    head_sha = broken.head_sha

    result = propose(emu, tmp_path, broken, url)
    assert result.exit_code == 0, result.stdout + result.stderr
    assert result.outputs["status"] == "proposed", result.summary
    assert_cost_reported(result, turns=4)

    [pull] = emu.pulls(REPO)
    fix_sha = result.outputs["fix-sha"]
    bare = emu.bare_path(REPO)
    assert git(bare, "diff", head_sha, fix_sha, "--", "calc.py").count("\n+    return a + b") == 1
    assert git(bare, "show", f"{fix_sha}:calc.py") == CALC_OK.rstrip("\n")
    assert git(bare, "diff", "--name-only", head_sha, fix_sha) == "calc.py"  # no pytest cache, no artefacts
    assert SUMMARY in pull.body
    assert "calc.py:3 returned a - b" in pull.body
    suggestion = parse(pull.body)
    assert suggestion is not None and suggestion.verification == "verified"
    assert not pull.draft

    sent = [json.loads(line) for line in record.read_text().splitlines()]
    assert len(sent) == 4
    assert emu.token not in json.dumps(sent)  # the GitHub token never reaches the model
    assert all(API_KEY not in json.dumps(r["body"]) for r in sent)  # the key only authenticates
    assert all(r["headers"].get("authorization") == f"Bearer {API_KEY}" for r in sent)


def test_an_agent_that_changes_nothing_halts_and_says_why(
    github_emulator: GitHubEmulator, tmp_path: Path
) -> None:
    emu = github_emulator
    broken = seed(emu, tmp_path)
    gives_up = [
        reply(
            tool_use(
                "finish",
                {
                    "summary": "The expected value in the test looks wrong to me.",
                    "root_cause": "unclear",
                    "confidence": "low",
                    "notes_left_as_is": [],
                },
            )
        )
    ]
    # the failing test still fails after its first try, so the agent gets one more turn with the output
    with messages_process(gives_up * 2, tmp_path) as (url, record):
        result = propose(emu, tmp_path, broken, url)
    assert (result.outputs["status"], result.outputs["reason"]) == ("halted", "agent-gave-up"), result.log
    assert "looks wrong to me" in result.summary
    assert len(record.read_text().splitlines()) == 2
    assert_cost_reported(result, turns=2)  # both runs of the attempt
    assert emu.pulls(REPO) == []
    assert set(emu.refs(REPO)) == {"refs/heads/main", f"refs/heads/{BRANCH}"}


def test_a_fix_that_skips_the_failing_test_is_never_proposed(
    github_emulator: GitHubEmulator, tmp_path: Path
) -> None:
    emu = github_emulator
    broken = seed(emu, tmp_path)
    cheat = [
        reply(
            tool_use(
                EDITOR,
                {
                    "command": "str_replace",
                    "path": "tests/test_calc.py",
                    "old_str": "from calc import add",
                    "new_str": "import pytest\n\nfrom calc import add",
                },
            )
        ),
        reply(
            tool_use(
                EDITOR,
                {
                    "command": "str_replace",
                    "path": "tests/test_calc.py",
                    "old_str": "def test_add():",
                    "new_str": '@pytest.mark.skip(reason="flaky")\ndef test_add():',
                },
            )
        ),
        reply(
            tool_use(
                "finish",
                {
                    "summary": "Skipped the flaky test.",
                    "root_cause": "flaky",
                    "confidence": "low",
                    "notes_left_as_is": [],
                },
            )
        ),
    ]
    with messages_process(cheat, tmp_path) as (url, _):
        result = propose(emu, tmp_path, broken, url)
    assert (result.outputs["status"], result.outputs["reason"]) == ("halted", "policy"), result.log
    assert "skip-marker-added" in result.summary
    assert_cost_reported(result, turns=3)
    assert emu.pulls(REPO) == []
    assert set(emu.refs(REPO)) == {"refs/heads/main", f"refs/heads/{BRANCH}"}  # nothing was pushed
    # the work is kept for a human: in the summary (collapsed) and in files under RUNNER_TEMP
    assert "<summary><code>The change that was not proposed</code></summary>" in result.summary
    assert '+@pytest.mark.skip(reason="flaky")' in result.summary
    patch = Path(result.outputs["patch-path"])
    assert patch.name == "fix.patch" and '+@pytest.mark.skip(reason="flaky")' in patch.read_text()
    transcript = json.loads(Path(result.outputs["transcript-path"]).read_text())
    assert [m["role"] for m in transcript][:2] == ["user", "assistant"]
    assert "Skipped the flaky test." in json.dumps(transcript)
    assert API_KEY not in patch.read_text() + json.dumps(transcript)
    runner_temp = patch.parents[2]
    assert patch.stat().st_uid == runner_temp.stat().st_uid  # the runner can clean it up


def wrong_fix() -> list[dict[str, Any]]:
    """An edit that does not make the test pass (2 * 3 is not 5), then finish."""
    return [
        reply(
            tool_use(
                EDITOR,
                {
                    "command": "str_replace",
                    "path": "calc.py",
                    "old_str": "return a - b",
                    "new_str": "return a * b",
                },
            )
        ),
        reply(tool_use("finish", {"summary": "s", "root_cause": "r", "confidence": "low"})),
    ]


def test_a_fix_that_fails_verification_halts_with_its_cost(
    github_emulator: GitHubEmulator, tmp_path: Path
) -> None:
    emu = github_emulator
    broken = seed(emu, tmp_path)
    retry = [reply(tool_use("finish", {"summary": "s", "root_cause": "r", "confidence": "low"}))]
    with messages_process(wrong_fix() + retry, tmp_path) as (url, _):
        result = propose(emu, tmp_path, broken, url)
    assert (result.outputs["status"], result.outputs["reason"]) == ("halted", "unverified-fix"), result.log
    assert_cost_reported(result, turns=3)
    assert emu.pulls(REPO) == []


def test_the_budget_halt_reports_its_cost_and_the_retry_gets_no_fresh_budget(
    github_emulator: GitHubEmulator, tmp_path: Path
) -> None:
    # max-cost-usd 1.20: the first run spends $1.00, its fix fails verification; the retry's one
    # turn costs another $0.50 and then nothing is left (a fresh budget would have run on)
    emu = github_emulator
    broken = seed(emu, tmp_path)
    dollars = {"input_tokens": 250_000, "output_tokens": 0}  # $0.50 at $2 per million input tokens
    first = [{**turn, "usage": dollars} for turn in wrong_fix()]
    retry = [reply(tool_use("list_files", {}), usage=dollars)] * 5
    with messages_process(first + retry, tmp_path) as (url, record):
        result = propose(emu, tmp_path, broken, url, inputs={"max-cost-usd": "1.2"})
    assert (result.outputs["status"], result.outputs["reason"]) == ("halted", "budget"), result.log
    assert len(record.read_text().splitlines()) == 3
    assert_cost_reported(result, turns=3)
    assert 1.2 <= float(result.outputs["cost-usd"]) <= 1.2 + 0.5 + 0.01  # the limit plus one turn


def test_a_model_outage_after_the_first_turn_halts_with_the_cost_so_far(
    github_emulator: GitHubEmulator, tmp_path: Path
) -> None:
    emu = github_emulator
    broken = seed(emu, tmp_path)
    outage = [error(529, "Overloaded", retry_after_ms=1)] * 10
    with messages_process(fixing_turns()[:1] + outage, tmp_path) as (url, _):
        result = propose(emu, tmp_path, broken, url)
    assert (result.outputs["status"], result.outputs["reason"]) == ("halted", "model-unavailable"), result.log
    assert_cost_reported(result, turns=1)
