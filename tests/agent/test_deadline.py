"""`Deadline`: the sooner of a tool's own limit and the attempt's, and what a tool call does at it."""

from __future__ import annotations

from pathlib import Path

import pytest

from ci_autofix.agent.deadline import Deadline, OutOfTime
from ci_autofix.agent.failure import ToolFailure
from ci_autofix.agent.files import SearchLimits, search
from ci_autofix.agent.matcher import Matcher, TooSlow
from ci_autofix.agent.tools import Toolbox
from ci_autofix.sandbox import Sandbox


def test_within_is_the_sooner_of_the_two_limits() -> None:
    now = [100.0]
    attempt = Deadline(130.0, lambda: now[0])
    assert attempt.within(5).at == 105.0  # the tool's own limit comes first
    assert attempt.within(60).at == 130.0  # the attempt's deadline comes first
    assert Deadline.never().within(5).remaining() <= 5
    now[0] = 130.0
    assert attempt.passed() and attempt.within(5).passed()


def _toolbox(root: Path, deadline: Deadline) -> Toolbox:
    (root / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    return Toolbox(
        Sandbox(root), allowed_commands=["true"], allow_shell=False, command_timeout=30, deadline=deadline
    )


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("search", {"pattern": "add"}),
        ("list_files", {}),
        ("str_replace_based_edit_tool", {"command": "str_replace", "path": "calc.py", "old_str": "a * b"}),
        ("run", {"command": "true"}),
    ],
)
def test_a_tool_call_that_ends_past_the_attempts_deadline_ends_the_attempt(
    tmp_path: Path, name: str, arguments: dict[str, object]
) -> None:
    tools = _toolbox(tmp_path, Deadline(0.0, lambda: 1.0))
    with pytest.raises(OutOfTime) as caught:
        tools.dispatch(name, arguments)
    assert caught.value.tool == name


def test_an_unknown_tools_name_is_never_put_in_a_halt(tmp_path: Path) -> None:
    tools = _toolbox(tmp_path, Deadline(0.0, lambda: 1.0))
    text, is_error = tools.dispatch("run`\n# injected", {})
    assert is_error and "there is no tool named" in text  # the loop's next check ends the attempt


def test_finishing_at_the_deadline_still_finishes(tmp_path: Path) -> None:
    tools = _toolbox(tmp_path, Deadline(0.0, lambda: 1.0))
    _, is_error = tools.dispatch("finish", {"summary": "s", "root_cause": "r", "confidence": "low"})
    assert not is_error and tools.finished is not None


def test_before_the_deadline_a_tool_answers_as_usual(tmp_path: Path) -> None:
    tools = _toolbox(tmp_path, Deadline(1000.0, lambda: 1.0))
    text, is_error = tools.dispatch("search", {"pattern": "return"})
    assert not is_error and "calc.py:2:" in text


def test_a_search_stops_at_the_attempts_deadline_before_its_own_limit(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("needle\n")
    with pytest.raises(ToolFailure, match="deadline"):
        search(
            Sandbox(tmp_path), "needle", limits=SearchLimits(seconds=600), deadline=Deadline(0.0, lambda: 1.0)
        )
    with pytest.raises(TooSlow):  # each match, too
        Matcher("needle", seconds=600, deadline=Deadline(0.0, lambda: 1.0)).search("needle")


def test_a_command_is_stopped_at_the_attempts_deadline_not_at_its_own_timeout(tmp_path: Path) -> None:
    tools = Toolbox(
        Sandbox(tmp_path),
        allowed_commands=[],
        allow_shell=True,
        command_timeout=600,
        deadline=Deadline.never().within(1),
    )
    with pytest.raises(OutOfTime, match="`run`"):
        tools.dispatch("run", {"command": "sleep 30 && touch finished"})
    assert not (tmp_path / "finished").exists()  # killed at the deadline, not left to run on
