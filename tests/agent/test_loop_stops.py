"""How the loop ends: stop reasons, cut-off tool calls, malformed input, budgets, and API errors."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from ci_autofix.agent import AgentRequest, run_agent
from ci_autofix.agent.llm import LLM, build_client
from ci_autofix.agent.loop import Budget
from ci_autofix.errors import Halt, HaltReason, UserError
from ci_autofix.sandbox import Sandbox
from ci_autofix.settings import Settings
from tests.testing.agent_samples import CALC, diagnosis, quick_command
from tests.testing.fakes.messages import FakeMessagesAPI, error, reply, text, tool_use
from tests.testing.fakes.messages_fixtures import TEST_KEY, make_llm

EDITOR = "str_replace_based_edit_tool"
FIX = {"command": "str_replace", "path": "calc.py", "old_str": "return a - b", "new_str": "return a + b"}
FINISH = {"summary": "s", "root_cause": "r", "confidence": "medium"}


def request(**overrides: object) -> AgentRequest:
    values: dict[str, object] = {
        "diagnosis": diagnosis(quick_command()),
        "model": "claude-sonnet-5-5",
        "max_turns": 10,
        "failing_commands": [quick_command()],
    }
    values.update(overrides)
    return AgentRequest(**values)  # type: ignore[arg-type]


def test_end_turn_without_finish_returns_an_unfinished_result(
    sandbox: Sandbox, llm: LLM, messages_api: FakeMessagesAPI
) -> None:
    messages_api.push(reply("I could not find the cause."))
    result = run_agent(request(), llm=llm, sandbox=sandbox)
    assert not result.finished and result.summary == "I could not find the cause."
    assert result.turns == 1 and result.confidence == "low"


def test_pause_turn_sends_the_conversation_back_unchanged(
    sandbox: Sandbox, llm: LLM, messages_api: FakeMessagesAPI
) -> None:
    messages_api.push(reply("Thinking about it", stop_reason="pause_turn"), reply(tool_use("finish", FINISH)))
    result = run_agent(request(), llm=llm, sandbox=sandbox)
    assert result.finished and result.turns == 2
    second = messages_api.bodies[1]["messages"]
    assert [m["role"] for m in second] == ["user", "assistant"]
    assert second[1]["content"][0]["text"] == "Thinking about it"


def test_a_tool_call_cut_off_at_max_tokens_is_not_run(
    broken_repo: Path, sandbox: Sandbox, llm: LLM, messages_api: FakeMessagesAPI
) -> None:
    messages_api.push(
        reply("Fixing", tool_use(EDITOR, FIX), stop_reason="max_tokens"), reply(tool_use("finish", FINISH))
    )
    result = run_agent(request(), llm=llm, sandbox=sandbox)
    assert (broken_repo / "calc.py").read_text() == CALC  # the cut-off edit never happened
    assert result.finished and result.turns == 2
    second = messages_api.bodies[1]["messages"]
    assert [b["type"] for b in second[1]["content"]] == ["text"]  # the truncated tool_use is dropped
    assert "cut off" in second[2]["content"][0]["text"] and "not run" in second[2]["content"][0]["text"]


def test_replies_cut_off_again_and_again_halt_on_budget(
    sandbox: Sandbox, llm: LLM, messages_api: FakeMessagesAPI
) -> None:
    messages_api.push(*[reply("a very long", stop_reason="max_tokens")] * 3)
    with pytest.raises(Halt) as caught:
        run_agent(request(), llm=llm, sandbox=sandbox)
    assert caught.value.reason is HaltReason.BUDGET and "3 times" in caught.value.message


def test_refusal_halts_with_the_category(sandbox: Sandbox, llm: LLM, messages_api: FakeMessagesAPI) -> None:
    messages_api.push(
        reply(
            "",
            stop_reason="refusal",
            stop_details={"type": "refusal", "category": "cyber", "explanation": "no"},
        )
    )
    with pytest.raises(Halt) as caught:
        run_agent(request(), llm=llm, sandbox=sandbox)
    assert caught.value.reason is HaltReason.REFUSAL
    assert "cyber" in caught.value.message and "spent 1 turns" in caught.value.message


def test_context_window_exceeded_halts(sandbox: Sandbox, llm: LLM, messages_api: FakeMessagesAPI) -> None:
    messages_api.push(reply("partial", stop_reason="model_context_window_exceeded"))
    with pytest.raises(Halt) as caught:
        run_agent(request(), llm=llm, sandbox=sandbox)
    assert caught.value.reason is HaltReason.CONTEXT_EXCEEDED
    assert caught.value.details["turns"] == 1


def test_an_unknown_stop_reason_stops(sandbox: Sandbox, messages_api: FakeMessagesAPI) -> None:
    # A stop reason newer than the SDK's list passes only without strict validation (as in production).
    loose = build_client(Settings(anthropic_api_key=TEST_KEY), base_url=messages_api.url, max_retries=0)
    messages_api.push(reply("done?", stop_reason="compaction"))
    result = run_agent(request(), llm=loose, sandbox=sandbox)
    assert not result.finished and "'compaction'" in result.summary and "done?" in result.summary


def test_malformed_tool_input_returns_an_error_the_model_can_act_on(
    broken_repo: Path, sandbox: Sandbox, llm: LLM, messages_api: FakeMessagesAPI
) -> None:
    messages_api.push(
        reply(
            tool_use("search", {"regex": "add"}),  # wrong parameter name
            tool_use("search", {"pattern": 5}),  # wrong type
            tool_use("list_files", {"max_depth": True}),  # a bool is not an integer
            tool_use("nope", {}),  # no such tool
            tool_use(EDITOR, {"command": "undo_edit", "path": "calc.py"}),
            tool_use(EDITOR, {"command": "str_replace", "path": "calc.py"}),
            tool_use("finish", {"summary": "s", "root_cause": "r", "confidence": "certain"}),
        ),
        reply(tool_use(EDITOR, FIX)),
        reply(tool_use("finish", FINISH)),
    )
    result = run_agent(request(), llm=llm, sandbox=sandbox)
    assert result.finished and "a + b" in (broken_repo / "calc.py").read_text()
    results = messages_api.bodies[1]["messages"][2]["content"]
    assert all(r["is_error"] for r in results)
    texts = [r["content"] for r in results]
    assert "unknown parameter(s) regex" in texts[0] and "pattern" in texts[0]
    assert "`pattern` must be a string, got int" in texts[1]
    assert "`max_depth` must be an integer, got bool" in texts[2]
    assert "no tool named 'nope'" in texts[3] and "search" in texts[3]
    assert "unknown command 'undo_edit'" in texts[4]
    assert "`old_str` is required" in texts[5]
    assert "must be one of high, medium, low" in texts[6]


def test_the_turn_budget_halts_with_what_was_spent(
    sandbox: Sandbox, llm: LLM, messages_api: FakeMessagesAPI
) -> None:
    messages_api.push(*[reply(tool_use("list_files", {}))] * 3)
    with pytest.raises(Halt) as caught:
        run_agent(request(max_turns=2), llm=llm, sandbox=sandbox)
    assert caught.value.reason is HaltReason.BUDGET
    assert "all 2 turns" in caught.value.message and "spent 2 turns" in caught.value.message
    assert len(messages_api.bodies) == 2


def test_the_cost_budget_halts_once_spent(sandbox: Sandbox, llm: LLM, messages_api: FakeMessagesAPI) -> None:
    usage = {
        "input_tokens": 400_000,
        "output_tokens": 20_000,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }
    messages_api.push(reply(tool_use("list_files", {}), usage=usage), reply(tool_use("finish", FINISH)))
    with pytest.raises(Halt) as caught:
        run_agent(request(max_cost_usd=1.0), llm=llm, sandbox=sandbox)
    # 400k × $2 + 20k × $10 per million = $1.00 on claude-sonnet-5-5
    assert caught.value.reason is HaltReason.BUDGET and "$1.00 cost limit" in caught.value.message
    assert caught.value.details["cost_usd"] == pytest.approx(1.0)
    assert len(messages_api.bodies) == 1


def test_the_wall_clock_budget_halts(sandbox: Sandbox, llm: LLM, messages_api: FakeMessagesAPI) -> None:
    # the minute passes while the model writes its second reply: that reply's tool calls are not run
    messages_api.push(*[reply(tool_use("list_files", {}))] * 2, reply(tool_use("finish", FINISH)))
    clock = lambda: 61.0 if len(messages_api.bodies) >= 2 else 0.0  # noqa: E731
    limited = request(max_minutes=1)
    with pytest.raises(Halt) as caught:
        run_agent(limited, llm=llm, sandbox=sandbox, budget=Budget.start(limited, clock))
    assert caught.value.reason is HaltReason.BUDGET and "1 minutes" in caught.value.message
    assert "inside" not in caught.value.message and len(messages_api.bodies) == 2


def test_a_tool_call_that_runs_into_the_deadline_ends_the_attempt_naming_the_tool(
    broken_repo: Path, sandbox: Sandbox, llm: LLM, messages_api: FakeMessagesAPI
) -> None:
    started = broken_repo / "started"
    clock = lambda: 61.0 if started.exists() else 0.0  # noqa: E731  (the minute passes while the command runs)
    messages_api.push(
        reply(
            tool_use("run", {"command": "touch started && sleep 600"}),
            tool_use("run", {"command": "touch second"}),
        ),
        reply(tool_use("finish", FINISH)),
    )
    limited = request(max_minutes=1, allow_shell=True, command_timeout=2)
    with pytest.raises(Halt) as caught:
        run_agent(limited, llm=llm, sandbox=sandbox, budget=Budget.start(limited, clock))
    assert caught.value.reason is HaltReason.BUDGET, caught.value
    assert "1 minutes" in caught.value.message and "inside a call of the `run` tool" in caught.value.message
    assert started.exists() and not (broken_repo / "second").exists()  # the turn's next call never ran
    assert len(messages_api.bodies) == 1


# ---- API errors ------------------------------------------------------------------------------------------
@pytest.fixture
def retrying(messages_api: FakeMessagesAPI) -> Iterator[LLM]:
    yield make_llm(messages_api, max_retries=2)


def test_429_then_529_then_success(sandbox: Sandbox, retrying: LLM, messages_api: FakeMessagesAPI) -> None:
    messages_api.push(
        error(429, retry_after_ms=1),
        error(529, "Overloaded", retry_after_ms=1),
        reply(tool_use("finish", FINISH)),
    )
    result = run_agent(request(), llm=retrying, sandbox=sandbox)
    assert result.finished and result.turns == 1
    retries = [r.headers.get("x-stainless-retry-count") for r in messages_api.message_requests]
    assert retries == ["0", "1", "2"]
    assert messages_api.bodies[0] == messages_api.bodies[2]


def test_persistent_529_halts_model_unavailable(
    sandbox: Sandbox, retrying: LLM, messages_api: FakeMessagesAPI
) -> None:
    messages_api.push(*[error(529, "Overloaded", retry_after_ms=1)] * 3)
    with pytest.raises(Halt) as caught:
        run_agent(request(), llm=retrying, sandbox=sandbox)
    assert caught.value.reason is HaltReason.MODEL_UNAVAILABLE
    assert "HTTP 529" in caught.value.message and "Overloaded" in caught.value.message
    assert "spent 0 turns" in caught.value.message
    assert len(messages_api.message_requests) == 3  # the first try and two retries, no more


def test_an_authentication_error_names_the_key_input(
    sandbox: Sandbox, retrying: LLM, messages_api: FakeMessagesAPI
) -> None:
    messages_api.push(error(401, "invalid x-api-key"))
    with pytest.raises(UserError) as caught:
        run_agent(request(), llm=retrying, sandbox=sandbox)
    assert "anthropic-api-key" in caught.value.remedy and "401" in caught.value.cause
    assert len(messages_api.message_requests) == 1  # not retried


def test_an_unknown_model_halts_model_unavailable(
    sandbox: Sandbox, retrying: LLM, messages_api: FakeMessagesAPI
) -> None:
    messages_api.push(error(404, "model: claude-nope"))
    with pytest.raises(Halt) as caught:
        run_agent(request(model="claude-nope"), llm=retrying, sandbox=sandbox)
    assert caught.value.reason is HaltReason.MODEL_UNAVAILABLE and "`model` input" in caught.value.message


def test_an_unreachable_api_halts_model_unavailable(sandbox: Sandbox, messages_api: FakeMessagesAPI) -> None:
    llm = make_llm(messages_api, max_retries=1)
    messages_api.close()  # nothing listens there any more
    with pytest.raises(Halt) as caught:
        run_agent(request(), llm=llm, sandbox=sandbox)
    assert caught.value.reason is HaltReason.MODEL_UNAVAILABLE and "could not reach" in caught.value.message


def test_text_blocks_in_tool_turns_are_kept_in_history(
    sandbox: Sandbox, llm: LLM, messages_api: FakeMessagesAPI
) -> None:
    messages_api.push(
        reply(text("Looking."), tool_use("list_files", {"path": "."})), reply(tool_use("finish", FINISH))
    )
    run_agent(request(), llm=llm, sandbox=sandbox)
    history = messages_api.bodies[1]["messages"]
    assert history[1]["content"][0] == {"type": "text", "text": "Looking."}
    listing = history[2]["content"][0]["content"]
    assert "calc.py" in listing and "build/" not in listing and ".git/" not in listing


def test_thinking_blocks_go_back_unchanged_and_never_carry_a_breakpoint(
    sandbox: Sandbox, llm: LLM, messages_api: FakeMessagesAPI
) -> None:
    thinking = {"type": "thinking", "thinking": "Maybe the sign.", "signature": "sig-abc"}
    messages_api.push(reply(thinking, stop_reason="pause_turn"), reply(tool_use("finish", FINISH)))
    run_agent(request(), llm=llm, sandbox=sandbox)
    second = messages_api.bodies[1]["messages"]
    assert second[1]["content"] == [thinking]
    assert "cache_control" in second[0]["content"][-1]  # the newest block that may carry one
