"""The agent's own loops: the same failing tool call again and again, and one budget for an attempt.

`tool-error-loop` halts the Nth identical failing call in a row (`MAX_REPEATED_ERRORS`); a
`Budget` handed to a second run of the same attempt gives it only what the first run left.
"""

from __future__ import annotations

import pytest

from ci_autofix.agent import AgentRequest, run_agent
from ci_autofix.agent.llm import LLM
from ci_autofix.agent.loop import MAX_REPEATED_ERRORS, Budget
from ci_autofix.errors import Halt, HaltReason
from ci_autofix.sandbox import Sandbox
from tests.testing.agent_samples import diagnosis, quick_command
from tests.testing.fakes.messages import FakeMessagesAPI, reply, tool_use

EDITOR = "str_replace_based_edit_tool"
FINISH = {"summary": "s", "root_cause": "r", "confidence": "medium"}


def request(**overrides: object) -> AgentRequest:
    values: dict[str, object] = {
        "diagnosis": diagnosis(quick_command()),
        "model": "claude-sonnet-5-5",
        "max_turns": 20,
        "failing_commands": [quick_command()],
    }
    values.update(overrides)
    return AgentRequest(**values)  # type: ignore[arg-type]


def missing(old: str) -> dict[str, object]:
    """An edit whose `old_str` is not in calc.py: it fails every time."""
    return tool_use(EDITOR, {"command": "str_replace", "path": "calc.py", "old_str": old, "new_str": "x"})


def costing(dollars: float) -> dict[str, int]:
    """Usage that costs `dollars` on claude-sonnet-5-5 ($2 per million input tokens)."""
    tokens = round(dollars * 500_000)
    return {
        "input_tokens": tokens,
        "output_tokens": 0,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }


# ---- tool-error-loop --------------------------------------------------------------------------------
def test_the_same_failing_call_made_again_and_again_halts_tool_error_loop(
    sandbox: Sandbox, llm: LLM, messages_api: FakeMessagesAPI
) -> None:
    messages_api.push(*[reply(missing("return nothing"))] * 12)
    with pytest.raises(Halt) as caught:
        run_agent(request(), llm=llm, sandbox=sandbox)
    halt = caught.value
    assert halt.reason is HaltReason.TOOL_ERROR_LOOP
    assert len(messages_api.bodies) == MAX_REPEATED_ERRORS == 3  # not on to max-turns
    assert f"same failing tool call {MAX_REPEATED_ERRORS} times in a row" in halt.message
    assert f"`{EDITOR}`" in halt.message and "return nothing" in halt.message  # the tool and its input
    assert "was not found in calc.py" in halt.message  # the error
    loop = halt.details["tool_error_loop"]
    assert isinstance(loop, dict) and loop["tool"] == EDITOR and loop["count"] == 3
    assert halt.spent is not None and halt.spent.turns == 3


def test_identical_failing_calls_in_one_reply_count_too(
    sandbox: Sandbox, llm: LLM, messages_api: FakeMessagesAPI
) -> None:
    messages_api.push(reply(*[missing("nope")] * 3), reply(tool_use("finish", FINISH)))
    with pytest.raises(Halt) as caught:
        run_agent(request(), llm=llm, sandbox=sandbox)
    assert caught.value.reason is HaltReason.TOOL_ERROR_LOOP
    assert len(messages_api.bodies) == 1


def test_a_different_input_resets_the_count(
    sandbox: Sandbox, llm: LLM, messages_api: FakeMessagesAPI
) -> None:
    a, b = missing("first guess"), missing("second guess")
    messages_api.push(reply(a), reply(a), reply(b), reply(a), reply(a), reply(tool_use("finish", FINISH)))
    result = run_agent(request(), llm=llm, sandbox=sandbox)
    assert result.finished and result.turns == 6


def test_a_success_in_between_resets_the_count(
    sandbox: Sandbox, llm: LLM, messages_api: FakeMessagesAPI
) -> None:
    a = missing("first guess")
    messages_api.push(
        reply(a),
        reply(a),
        reply(tool_use("list_files", {})),
        reply(a),
        reply(a),
        reply(tool_use("finish", FINISH)),
    )
    result = run_agent(request(), llm=llm, sandbox=sandbox)
    assert result.finished and result.turns == 6


def test_the_looping_input_is_masked_and_cut_short(
    sandbox: Sandbox, llm: LLM, messages_api: FakeMessagesAPI
) -> None:
    secret = "hunter2-" + "s" * 24
    call = missing(f"{secret} " + "y" * 2_000)
    messages_api.push(*[reply(call)] * 3)
    with pytest.raises(Halt) as caught:
        run_agent(request(secrets=[secret]), llm=llm, sandbox=sandbox)
    halt = caught.value
    assert secret not in halt.message and secret not in str(halt.details)
    assert "more characters" in halt.message
    assert "y" * 600 not in halt.message


# ---- one budget per attempt ---------------------------------------------------------------------------
def test_a_second_run_on_the_same_budget_gets_only_what_is_left_of_the_cost(
    sandbox: Sandbox, llm: LLM, messages_api: FakeMessagesAPI
) -> None:
    limited = request(max_cost_usd=1.2)
    budget = Budget.start(limited)
    messages_api.push(
        reply(tool_use("list_files", {}), usage=costing(0.5)), reply(tool_use("finish", FINISH))
    )
    first = run_agent(limited, llm=llm, sandbox=sandbox, budget=budget)
    assert first.finished and first.cost_usd >= 0.5
    messages_api.push(*[reply(tool_use("list_files", {}), usage=costing(0.5))] * 5)
    with pytest.raises(Halt) as caught:
        run_agent(limited, llm=llm, sandbox=sandbox, budget=budget)
    halt = caught.value
    assert halt.reason is HaltReason.BUDGET and "$1.20 cost limit" in halt.message
    assert len(messages_api.bodies) == 4  # two turns of the first run, two of the second, not a fresh $1.20
    assert halt.spent is not None and 1.2 <= halt.spent.cost_usd <= 1.2 + 0.5  # at most one turn over


def test_a_second_run_on_the_same_budget_gets_only_what_is_left_of_the_turns(
    sandbox: Sandbox, llm: LLM, messages_api: FakeMessagesAPI
) -> None:
    limited = request(max_turns=3)
    budget = Budget.start(limited)
    messages_api.push(reply(tool_use("list_files", {})), reply(tool_use("finish", FINISH)))
    run_agent(limited, llm=llm, sandbox=sandbox, budget=budget)
    messages_api.push(*[reply(tool_use("list_files", {}))] * 5)
    with pytest.raises(Halt) as caught:
        run_agent(limited, llm=llm, sandbox=sandbox, budget=budget)
    assert caught.value.reason is HaltReason.BUDGET and "all 3 turns" in caught.value.message
    assert len(messages_api.bodies) == 3


def test_a_second_run_on_the_same_budget_gets_only_what_is_left_of_the_minutes(
    sandbox: Sandbox, llm: LLM, messages_api: FakeMessagesAPI
) -> None:
    now = [0.0]
    limited = request(max_minutes=1)
    budget = Budget.start(limited, clock=lambda: now[0])
    messages_api.push(reply(tool_use("finish", FINISH)))
    now[0] = 50.0
    run_agent(limited, llm=llm, sandbox=sandbox, budget=budget)
    now[0] = 61.0  # the first run, its verification and the rest took 61 s of the attempt's minute
    messages_api.push(reply(tool_use("finish", FINISH)))
    with pytest.raises(Halt) as caught:
        run_agent(limited, llm=llm, sandbox=sandbox, budget=budget)
    assert caught.value.reason is HaltReason.BUDGET and "1 minutes" in caught.value.message
    assert len(messages_api.bodies) == 1


def test_without_a_budget_each_run_starts_its_own(
    sandbox: Sandbox, llm: LLM, messages_api: FakeMessagesAPI
) -> None:
    limited = request(max_turns=2)
    for _ in range(2):
        messages_api.push(reply(tool_use("list_files", {})), reply(tool_use("finish", FINISH)))
        assert run_agent(limited, llm=llm, sandbox=sandbox).turns == 2
