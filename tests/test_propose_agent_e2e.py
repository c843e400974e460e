"""The propose flow with the agent: a real failing test, fixed by a scripted Claude session.

The action runs as a subprocess laid out like the runner; the real anthropic SDK talks to the
Messages API fake (a separate process, reached through ANTHROPIC_BASE_URL) and the real
PyGithub to the GitHub emulator. The tools really edit the checkout; verification really
re-runs the failing pytest; the suggestion PR carries the agent's explanation and its cost.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from calc_scenario import (
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
from emulator import GitHubEmulator
from fakes.messages import reply, tool_use
from testing.git import git

from ci_autofix.state.marker import parse


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
    assert float(result.outputs["cost-usd"]) > 0

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
    assert emu.pulls(REPO) == []
    assert set(emu.refs(REPO)) == {"refs/heads/main", f"refs/heads/{BRANCH}"}  # nothing was pushed
