"""Class 6: untrusted text (a log line, the model's words) never becomes a workflow command on
stdout, and never renders as Markdown (mentions, images, links, HTML) in the PR body or the job
summary. End to end: the propose flow as the runner runs it, the real pytest log of a test that
prints runner commands, a scripted model that answers with commands in a tool name and in its
summary, the GitHub emulator's stored PR read through GitHub's Markdown renderer."""

from __future__ import annotations

import json
from pathlib import Path

from tests.security.workflow_commands_helpers import (
    COMMAND_LINES,
    MARKDOWN_PAYLOAD,
    REPO,
    assert_no_forged_commands,
    assert_only_as_code,
    propose,
    seed,
)
from tests.testing.calc_scenario import API_KEY, EDITOR, messages_process
from tests.testing.emulator import GitHubEmulator
from tests.testing.fakes.messages import reply, tool_use

COMMANDS = "\n".join(COMMAND_LINES)
# A failing test that prints runner commands, whose name and failure message carry Markdown.
TEST_SOURCE = f"""import pytest

from calc import add


@pytest.mark.parametrize("expected", [5], ids=[{"@org/team <img src=x> <details> [link](http://x/phish)"!r}])
def test_add(expected):
    print({COMMANDS!r})
    assert add(2, 3) == expected, {MARKDOWN_PAYLOAD!r}
"""
TOOL_NAME = "view\n" + COMMANDS  # a tool name with newlines and commands in it
SUMMARY = f"{MARKDOWN_PAYLOAD}\n{COMMANDS}\nadd() subtracts; it adds again."


def _finish(summary: str) -> dict[str, object]:
    return reply(
        tool_use(
            "finish",
            {
                "summary": summary,
                "root_cause": f"calc.py:3 {MARKDOWN_PAYLOAD}\n{COMMANDS}",
                "confidence": "high",
                "notes_left_as_is": [f"{MARKDOWN_PAYLOAD}\n{COMMANDS}"],
            },
        )
    )


def test_log_and_model_text_never_act_on_the_runner_nor_render_in_the_pr(
    github_emulator: GitHubEmulator, tmp_path: Path
) -> None:
    emu = github_emulator
    broken = seed(emu, tmp_path, TEST_SOURCE)
    turns = [
        reply(f"Looking.\n{COMMANDS}", tool_use(TOOL_NAME, {"command": "view", "path": "calc.py"})),
        reply(
            tool_use(
                EDITOR,
                {"command": "str_replace", "path": "calc.py", "old_str": "a - b", "new_str": "a + b"},
            )
        ),
        _finish(SUMMARY),
    ]
    with messages_process(turns, tmp_path) as (url, record):
        result = propose(emu, tmp_path, broken, url, {"anthropic-api-key": API_KEY})
    assert result.outputs["status"] == "proposed", result.log
    assert len(record.read_text().splitlines()) == 3  # the model really saw its three turns through

    untrusted = [TEST_SOURCE, TOOL_NAME, SUMMARY, *COMMAND_LINES]
    assert_no_forged_commands(result, untrusted, secrets=[emu.token, API_KEY])
    assert "turn 1:" in result.stdout and "view" in result.stdout  # the progress line is still shown

    [pull] = emu.pulls(REPO)
    assert "add() subtracts; it adds again." in pull.body  # the agent's words are there, as code
    assert "@org/team <img src=x>" in pull.body  # so is the test's name
    assert_only_as_code(pull.body)
    assert_only_as_code(pull.title)
    assert_only_as_code(result.summary)
    assert json.loads(result.outputs["result-json"])["status"] == "proposed"


def test_an_agent_that_gives_up_with_commands_in_its_words_forges_nothing(
    github_emulator: GitHubEmulator, tmp_path: Path
) -> None:
    emu = github_emulator
    broken = seed(emu, tmp_path, TEST_SOURCE)
    gives_up = _finish(f"{COMMANDS}\n{MARKDOWN_PAYLOAD}")
    with messages_process([gives_up, gives_up], tmp_path) as (url, _):
        result = propose(emu, tmp_path, broken, url, {"anthropic-api-key": API_KEY})
    assert (result.outputs["status"], result.outputs["reason"]) == ("halted", "agent-gave-up"), result.log
    assert "::set-output name=status::applied" in result.stdout  # shown, but inside a stop-commands block
    assert_no_forged_commands(result, [TEST_SOURCE, COMMANDS, MARKDOWN_PAYLOAD], secrets=[emu.token, API_KEY])
    assert "PWN" in result.summary
    assert_only_as_code(result.summary)
    assert emu.pulls(REPO) == []
