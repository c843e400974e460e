"""The agent loop: build the request, call the model, run the tools it asked for, repeat.

Exits are typed: `finish` (or an `end_turn`) returns an `AgentResult`; a budget, a refusal,
an exhausted context window, an unreachable model or the same failing tool call made
`MAX_REPEATED_ERRORS` times in a row raise `Halt` with what was spent (`Halt.spent`).
The minutes bound every tool call, not only the turns: the tools get the attempt's deadline,
and a call that runs into it ends the attempt (`budget`, naming the tool).
One `Budget` covers one attempt: a second run of the same attempt (the retry after a failed
verification) is given the first run's `Budget` and gets only what is left of it.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ci_autofix.agent import prompts
from ci_autofix.agent.caching import with_breakpoints
from ci_autofix.agent.deadline import Deadline, OutOfTime
from ci_autofix.agent.joblogs import JobLogs
from ci_autofix.agent.model import AgentRequest, AgentResult
from ci_autofix.agent.pricing import Price, Usage, cost_usd, price_for
from ci_autofix.agent.tools import Toolbox
from ci_autofix.errors import AgentSpend, Halt, HaltReason, Kept
from ci_autofix.redact import redact
from ci_autofix.sandbox import Sandbox
from ci_autofix.triage.model import Diagnosis, Failure

if TYPE_CHECKING:
    from ci_autofix.agent.llm import Model, Reply

MAX_CUT_OFFS = 3  # consecutive replies cut at max_tokens before we give up
MAX_REPEATED_ERRORS = 3  # the same tool call (name and input) failing this many times in a row halts
MAX_QUOTED_CHARS = 500  # of a looping call's input and error, in the halt's message
CUT_OFF_NOTE = (
    "Your previous reply hit the output token limit and was cut off; {what} Continue with shorter "
    "steps: one tool call at a time, and short text."
)


@dataclass
class Spend:
    price: Price
    usage: Usage = field(default_factory=Usage)
    cost_usd: float = 0.0
    turns: int = 0

    def add(self, usage: Usage) -> None:
        self.usage = self.usage + usage
        self.cost_usd += cost_usd(usage, self.price)
        self.turns += 1

    def describe(self) -> str:
        u = self.usage
        return (
            f"spent {self.turns} turns and ${self.cost_usd:.4f} (tokens: {u.input} input, {u.output} output, "
            f"{u.cache_write} cache write, {u.cache_read} cache read)"
        )

    def details(self) -> dict[str, object]:
        return {"usage": self.usage.to_json(), "cost_usd": round(self.cost_usd, 6), "turns": self.turns}

    def spent(self) -> AgentSpend:
        return AgentSpend(cost_usd=self.cost_usd, turns=self.turns)


@dataclass
class Budget:
    """One attempt's limits (`max-turns`, `max-cost-usd`, `max-minutes`) and what its agent runs
    have spent of them: every run of the attempt draws on the same one."""

    max_turns: int
    max_cost_usd: float
    max_minutes: float
    deadline: float  # on `clock`
    spend: Spend
    clock: Callable[[], float] = time.monotonic  # the attempt's clock: the turns' and the tools' deadline

    @classmethod
    def start(cls, request: AgentRequest, clock: Callable[[], float] = time.monotonic) -> Budget:
        return cls(
            max_turns=request.max_turns,
            max_cost_usd=request.max_cost_usd,
            max_minutes=request.max_minutes,
            deadline=clock() + request.max_minutes * 60,
            spend=Spend(price_for(request.model)),
            clock=clock,
        )

    def exhausted(self) -> str | None:
        """Which limit is used up (the words of the halt), or None while some of each is left."""
        if self.spend.turns >= self.max_turns:
            return f"the agent used all {self.max_turns} turns (`max-turns`)"
        if self.spend.cost_usd >= self.max_cost_usd:
            return f"the agent reached the ${self.max_cost_usd:.2f} cost limit (`max-cost-usd`)"
        if self.clock() >= self.deadline:
            return self.out_of_minutes()
        return None

    def out_of_minutes(self, tool: str | None = None) -> str:
        """The halt's words when the minutes are used up (inside the tool call `tool`, when given)."""
        inside = f" inside a call of the `{tool}` tool, which was stopped there" if tool else ""
        return f"the agent ran out of its {self.max_minutes:g} minutes (`max-minutes`){inside}"


@dataclass
class _ErrorStreak:
    """The same tool call failing again and again: its name, input and last error."""

    key: str = ""
    count: int = 0
    name: str = ""
    arguments: str = ""
    error: str = ""

    def record(self, call: dict[str, Any], text: str, is_error: bool) -> bool:
        """Count one call's result; True once the same call has failed `MAX_REPEATED_ERRORS` times in a row."""
        if not is_error:
            self.key, self.count = "", 0
            return False
        arguments = json.dumps(call.get("input"), sort_keys=True, default=str)
        key = f"{call.get('name')}\0{arguments}"
        self.count = self.count + 1 if key == self.key else 1
        self.key, self.name, self.arguments, self.error = key, str(call.get("name", "")), arguments, text
        return self.count >= MAX_REPEATED_ERRORS

    def describe(self, secrets: Sequence[str]) -> str:
        return (
            f"the agent made the same failing tool call {self.count} times in a row "
            f"(tool {_quoted(self.name, secrets)}; input: {_quoted(self.arguments, secrets)}; "
            f"error: {_quoted(self.error, secrets)})"
        )

    def details(self, secrets: Sequence[str]) -> dict[str, object]:
        """The looping call for `result-json`: untrusted text (the model's input, a tool's output)."""
        return {
            "tool_error_loop": {
                "tool": self.name,
                "input": _clipped(self.arguments, secrets),
                "error": _clipped(self.error, secrets),
                "count": self.count,
            }
        }


def run_agent(
    request: AgentRequest,
    *,
    llm: Model,
    sandbox: Sandbox,
    on_turn: Callable[[int, float, list[str]], None] | None = None,
    budget: Budget | None = None,
    logs: JobLogs | None = None,
) -> AgentResult:
    """Run the agent to a result or a typed halt. `on_turn(turns, cost_usd, tool_names)` is told
    after each model turn, for progress reports. `budget` is the attempt's, when an earlier run
    of the same attempt spent part of it: this run gets only what is left, and its result (or
    halt) reports the attempt's spend so far. Without it the run starts a budget of its own
    from `request`'s limits. `logs`, the failed jobs' stored logs, gives the agent the `logs` tool.
    The request's secrets are masked in everything sent to the model and everything reported."""
    budget = budget if budget is not None else Budget.start(request)
    toolbox = Toolbox(
        sandbox,
        allowed_commands=request.allowed_commands,
        allow_shell=request.allow_shell,
        command_timeout=request.command_timeout,
        secrets=request.secrets,
        threads=request.threads,
        logs=logs,
        deadline=Deadline(budget.deadline, budget.clock),
    )
    tools = toolbox.definitions()
    system = [{"type": "text", "text": prompts.load("agent_system")}]
    talk = _Conversation(request, toolbox, budget, [first_message(request, request.secrets, logs)])
    spend = budget.spend
    while True:
        if used_up := budget.exhausted():
            raise talk.halt(HaltReason.BUDGET, used_up)
        reply = talk.ask(llm, tools, system)
        calls = [b for b in reply.content if b.get("type") == "tool_use"]
        if on_turn is not None:
            on_turn(spend.turns, spend.cost_usd, [str(c.get("name")) for c in calls])
        if (result := talk.answer(reply, calls)) is not None:
            return result


@dataclass
class _Conversation:
    """One run's conversation with the model: the messages so far, and what the stop reasons count
    (replies cut off in a row, the same tool call failing in a row)."""

    request: AgentRequest
    toolbox: Toolbox
    budget: Budget
    messages: list[dict[str, Any]]
    cut_offs: int = 0
    streak: _ErrorStreak = field(default_factory=_ErrorStreak)

    def ask(self, llm: Model, tools: list[dict[str, Any]], system: list[dict[str, Any]]) -> Reply:
        """The model's next reply, its usage added to the spend and its content to the conversation."""
        marked_tools, marked_system, marked_messages = with_breakpoints(
            tools, system, self.messages, pinned=(0, 1)
        )
        request = self.request
        try:
            reply = llm.create(
                model=request.model,
                max_tokens=request.max_tokens,
                system=marked_system,
                tools=marked_tools,
                messages=marked_messages,
                **({"output_config": {"effort": request.effort}} if request.effort else {}),
            )
        except Halt as exc:
            raise self.halt(exc.reason, exc.message) from None
        self.budget.spend.add(reply.usage)
        self.messages.append({"role": "assistant", "content": reply.content})
        return reply

    def answer(self, reply: Reply, calls: list[dict[str, Any]]) -> AgentResult | None:
        """What the reply's stop reason calls for: the run's result, a halt (raised), or None to
        send the conversation back for another turn."""
        secrets = self.request.secrets
        if reply.stop_reason == "tool_use" and calls:
            self.cut_offs = 0
            return self._run_tools(calls)
        if reply.stop_reason in ("end_turn", "stop_sequence", "tool_use"):
            finished = self.toolbox.finished is not None
            return self.result(finished=finished, summary=redact(_text_of(reply.content), secrets))
        if reply.stop_reason == "pause_turn":
            return None  # the model paused a long turn: send the conversation back as it is
        if reply.stop_reason == "max_tokens":
            self._cut_off(reply, calls)
            return None
        if reply.stop_reason == "refusal":
            details = reply.stop_details or {}
            category = details.get("category") or "unspecified"
            raise self.halt(HaltReason.REFUSAL, f"the model declined to continue (category: {category})")
        if reply.stop_reason == "model_context_window_exceeded":
            raise self.halt(
                HaltReason.CONTEXT_EXCEEDED, "the conversation outgrew the model's context window"
            )
        return self.result(
            finished=False,
            summary=f"The model stopped for an unexpected reason "
            f"({reply.stop_reason!r}). " + redact(_text_of(reply.content), secrets),
        )

    def _run_tools(self, calls: list[dict[str, Any]]) -> AgentResult | None:
        """Run the turn's tool calls in order: the result once `finish` was called, else None with
        the tools' results added to the conversation."""
        toolbox, budget, secrets = self.toolbox, self.budget, self.request.secrets
        results = []
        for call in calls:
            if toolbox.finished is None and toolbox.deadline.passed():
                raise self.halt(HaltReason.BUDGET, budget.out_of_minutes())
            try:
                block = _run_tool(toolbox, call)
            except OutOfTime as exc:
                raise self.halt(HaltReason.BUDGET, budget.out_of_minutes(exc.tool)) from None
            results.append(block)
            looping = self.streak.record(call, str(block["content"]), bool(block.get("is_error")))
            if looping and toolbox.finished is None:
                raise self.halt(
                    HaltReason.TOOL_ERROR_LOOP, self.streak.describe(secrets), self.streak.details(secrets)
                )
        if toolbox.finished is not None:
            return self.result(finished=True)
        self.messages.append({"role": "user", "content": results})
        return None

    def _cut_off(self, reply: Reply, calls: list[dict[str, Any]]) -> None:
        """A reply cut at the output limit: drop its tool calls and ask for shorter steps, or halt
        when `MAX_CUT_OFFS` replies in a row were cut."""
        self.cut_offs += 1
        if self.cut_offs >= MAX_CUT_OFFS:
            raise self.halt(
                HaltReason.BUDGET,
                f"the model's replies were cut at the output limit "
                f"({self.request.max_tokens} tokens) {MAX_CUT_OFFS} times in a row",
            )
        # A tool call at the end of a cut-off reply may be truncated: never run it.
        kept = [b for b in reply.content if b.get("type") != "tool_use"]
        self.messages[-1] = {"role": "assistant", "content": kept or [{"type": "text", "text": "(cut off)"}]}
        what = "its tool call was not run." if calls else "nothing was run."
        self.messages.append(
            {"role": "user", "content": [{"type": "text", "text": CUT_OFF_NOTE.format(what=what)}]}
        )

    def halt(self, reason: HaltReason, message: str, extra: dict[str, object] | None = None) -> Halt:
        spend = self.budget.spend
        details = {**spend.details(), **(extra or {})}
        kept = Kept(transcript=tuple(self.messages))  # the conversation so far, for a human
        return Halt(reason, f"{message}; {spend.describe()}", details=details, spent=spend.spent(), kept=kept)

    def result(self, finished: bool, summary: str = "") -> AgentResult:
        done, spend = self.toolbox.finished, self.budget.spend
        return AgentResult(
            summary=done.summary if done else summary,
            root_cause=done.root_cause if done else "",
            confidence=done.confidence if done else "low",
            notes_left_as_is=done.notes_left_as_is if done else [],
            threads=done.threads if done else [],
            usage=spend.usage,
            cost_usd=spend.cost_usd,
            turns=spend.turns,
            finished=finished,
            model=self.request.model,
            transcript=tuple(self.messages),
        )


def _run_tool(toolbox: Toolbox, call: dict[str, Any]) -> dict[str, Any]:
    text, is_error = toolbox.dispatch(str(call.get("name", "")), call.get("input"))
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": call["id"], "content": text}
    if is_error:
        block["is_error"] = True
    return block


def _clipped(text: str, secrets: Sequence[str]) -> str:
    """The model's input or a tool's output, masked, on one line, cut short."""
    text = " ".join(redact(text, secrets).split())
    if len(text) > MAX_QUOTED_CHARS:
        text = text[:MAX_QUOTED_CHARS] + f"… ({len(text) - MAX_QUOTED_CHARS} more characters)"
    return text


def _quoted(text: str, secrets: Sequence[str]) -> str:
    """`_clipped` as a code span (the halt's message is shown as untrusted text)."""
    return "`" + _clipped(text, secrets).replace("`", "'") + "`"


def _text_of(content: list[dict[str, Any]]) -> str:
    return "\n".join(b["text"] for b in content if b.get("type") == "text" and b.get("text")).strip()


def first_message(
    request: AgentRequest, secrets: Sequence[str] = (), logs: JobLogs | None = None
) -> dict[str, Any]:
    """The task (ours), then the excerpt (untrusted, cached), then any extra untrusted context.
    With `logs`, the task says the `logs` tool has the whole logs, and the excerpt block opens
    with the jobs it covers."""
    diagnosis = request.diagnosis
    commands = (
        "\n".join(f"- `{c}`" for c in request.commands)
        or "- (none: no command of the workflow's failed step can be re-run here)"
    )
    task = request.task.strip() + "\n\n" if request.task.strip() else ""
    if (
        request.threads is not None
    ):  # review mode: the findings are the context; a CI excerpt only when CI fails
        checks = "\n".join(f"- `{c}`" for c in request.allowed_commands) or "- (none is configured)"
        intro = prompts.render("review_task", commands=checks, task=task)
    else:
        intro = prompts.render(
            "agent_task",
            category=diagnosis.category.value,
            commands=commands,
            task=task,
            logs=_logs_note(logs),
        )
    blocks = [{"type": "text", "text": redact(intro, secrets)}]
    if request.threads is None or diagnosis.excerpt.strip():
        covered = (
            f"Whole logs the `logs` tool reads:\n{logs.listing()}\n\n"
            if logs is not None and logs.jobs
            else ""
        )
        blocks.append(
            {
                "type": "text",
                "text": prompts.untrusted("ci-log", redact(covered + _failure_text(diagnosis), secrets)),
            }
        )
    for item in request.context:
        blocks.append({"type": "text", "text": prompts.untrusted(item.label, redact(item.text, secrets))})
    return {"role": "user", "content": blocks}


def _logs_note(logs: JobLogs | None) -> str:
    """Our words about the `logs` tool for the task (the job names, the repository's, stay in the log block)."""
    if logs is None or not logs.jobs:
        return ""
    count = len(logs.jobs)
    return (
        f"The excerpt is a starting point, not the whole story: the `logs` tool lists, reads by line range and "
        f"searches the whole log of {'the failed job' if count == 1 else f'each of the {count} failed jobs'} "
        "(named at the top of the log block below). Use it when the excerpt leaves the cause unclear.\n\n"
    )


def _failure_text(diagnosis: Diagnosis) -> str:
    lines = [_describe(f) for f in diagnosis.failures]
    parts = ["Failures:\n" + "\n".join(lines)] if lines else []
    parts.append("Log excerpt:\n" + diagnosis.excerpt.strip())
    return "\n\n".join(parts)


def _describe(failure: Failure) -> str:
    where = failure.file or ""
    if where and failure.line:
        where += f":{failure.line}"
    label = " ".join(x for x in (failure.tool, failure.test_id or failure.rule or "", where) if x)
    return f"- [{label}] {failure.message}"
