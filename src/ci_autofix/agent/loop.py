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
    from ci_autofix.agent.llm import Model

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
    deadline: float  # on the run's clock
    spend: Spend

    @classmethod
    def start(cls, request: AgentRequest, clock: Callable[[], float] = time.monotonic) -> Budget:
        return cls(
            max_turns=request.max_turns,
            max_cost_usd=request.max_cost_usd,
            max_minutes=request.max_minutes,
            deadline=clock() + request.max_minutes * 60,
            spend=Spend(price_for(request.model)),
        )

    def exhausted(self, now: float) -> str | None:
        """Which limit is used up (the words of the halt), or None while some of each is left."""
        if self.spend.turns >= self.max_turns:
            return f"the agent used all {self.max_turns} turns (`max-turns`)"
        if self.spend.cost_usd >= self.max_cost_usd:
            return f"the agent reached the ${self.max_cost_usd:.2f} cost limit (`max-cost-usd`)"
        if now >= self.deadline:
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
    secrets: Sequence[str] = (),
    clock: Callable[[], float] = time.monotonic,
    on_turn: Callable[[int, float, list[str]], None] | None = None,
    budget: Budget | None = None,
    logs: JobLogs | None = None,
) -> AgentResult:
    """Run the agent to a result or a typed halt. `on_turn(turns, cost_usd, tool_names)` is told
    after each model turn, for progress reports. `budget` is the attempt's, when an earlier run
    of the same attempt spent part of it: this run gets only what is left, and its result (or
    halt) reports the attempt's spend so far. Without it the run starts a budget of its own
    from `request`'s limits. `logs`, the failed jobs' stored logs, gives the agent the `logs` tool."""
    secrets = (*request.secrets, *secrets)
    budget = budget if budget is not None else Budget.start(request, clock)
    toolbox = Toolbox(
        sandbox,
        allowed_commands=request.allowed_commands,
        allow_shell=request.allow_shell,
        command_timeout=request.command_timeout,
        secrets=secrets,
        threads=request.threads,
        logs=logs,
        deadline=Deadline(budget.deadline, clock),
    )
    tools = toolbox.definitions()
    system = [{"type": "text", "text": prompts.load("agent_system")}]
    messages: list[dict[str, Any]] = [first_message(request, secrets, logs)]
    spend = budget.spend
    cut_offs = 0
    streak = _ErrorStreak()

    def halt(reason: HaltReason, message: str, extra: dict[str, object] | None = None) -> Halt:
        details = {**spend.details(), **(extra or {})}
        kept = Kept(transcript=tuple(messages))  # the conversation so far, for a human
        return Halt(reason, f"{message}; {spend.describe()}", details=details, spent=spend.spent(), kept=kept)

    def result(finished: bool, summary: str = "") -> AgentResult:
        done = toolbox.finished
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
            model=request.model,
            transcript=tuple(messages),
        )

    while True:
        if used_up := budget.exhausted(clock()):
            raise halt(HaltReason.BUDGET, used_up)

        marked_tools, marked_system, marked_messages = with_breakpoints(
            tools, system, messages, pinned=(0, 1)
        )
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
            raise halt(exc.reason, exc.message) from None
        spend.add(reply.usage)
        messages.append({"role": "assistant", "content": reply.content})
        calls = [b for b in reply.content if b.get("type") == "tool_use"]
        if on_turn is not None:
            on_turn(spend.turns, spend.cost_usd, [str(c.get("name")) for c in calls])

        if reply.stop_reason == "tool_use" and calls:
            cut_offs = 0
            results = []
            for call in calls:
                if toolbox.finished is None and toolbox.deadline.passed():
                    raise halt(HaltReason.BUDGET, budget.out_of_minutes())
                try:
                    block = _run_tool(toolbox, call)
                except OutOfTime as exc:
                    raise halt(HaltReason.BUDGET, budget.out_of_minutes(exc.tool)) from None
                results.append(block)
                looping = streak.record(call, str(block["content"]), bool(block.get("is_error")))
                if looping and toolbox.finished is None:
                    raise halt(HaltReason.TOOL_ERROR_LOOP, streak.describe(secrets), streak.details(secrets))
            if toolbox.finished is not None:
                return result(finished=True)
            messages.append({"role": "user", "content": results})
        elif reply.stop_reason in ("end_turn", "stop_sequence", "tool_use"):
            return result(
                finished=toolbox.finished is not None, summary=redact(_text_of(reply.content), secrets)
            )
        elif reply.stop_reason == "pause_turn":
            continue  # the model paused a long turn: send the conversation back as it is
        elif reply.stop_reason == "max_tokens":
            cut_offs += 1
            if cut_offs >= MAX_CUT_OFFS:
                raise halt(
                    HaltReason.BUDGET,
                    f"the model's replies were cut at the output limit "
                    f"({request.max_tokens} tokens) {MAX_CUT_OFFS} times in a row",
                )
            # A tool call at the end of a cut-off reply may be truncated: never run it.
            kept = [b for b in reply.content if b.get("type") != "tool_use"]
            messages[-1] = {"role": "assistant", "content": kept or [{"type": "text", "text": "(cut off)"}]}
            what = "its tool call was not run." if calls else "nothing was run."
            messages.append(
                {"role": "user", "content": [{"type": "text", "text": CUT_OFF_NOTE.format(what=what)}]}
            )
        elif reply.stop_reason == "refusal":
            details = reply.stop_details or {}
            category = details.get("category") or "unspecified"
            raise halt(HaltReason.REFUSAL, f"the model declined to continue (category: {category})")
        elif reply.stop_reason == "model_context_window_exceeded":
            raise halt(HaltReason.CONTEXT_EXCEEDED, "the conversation outgrew the model's context window")
        else:
            return result(
                finished=False,
                summary=f"The model stopped for an unexpected reason "
                f"({reply.stop_reason!r}). " + redact(_text_of(reply.content), secrets),
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
