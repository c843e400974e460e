"""What the fix ladder hands the agent, and what it gets back."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from typing_extensions import TypedDict  # pydantic needs it for a schema on Python < 3.12

from ci_autofix.agent.pricing import Usage
from ci_autofix.errors import AgentSpend
from ci_autofix.triage.model import Diagnosis

if TYPE_CHECKING:
    from ci_autofix.settings import Settings

Confidence = Literal["high", "medium", "low"]
ThreadOutcome = Literal["fixed", "annotated", "declined"]


class ThreadReport(TypedDict):
    """How the agent ended one review thread (review mode's `finish`)."""

    thread: int
    outcome: ThreadOutcome
    note: str


@dataclass(frozen=True)
class UntrustedText:
    """A block of text from outside (a log, a review comment, a previous verification) given to
    the model as delimited data, never as instructions. `label` is ours and says what it is."""

    label: str
    text: str


@dataclass(frozen=True)
class AgentRequest:
    diagnosis: Diagnosis
    model: str
    setup_command: str = ""
    test_command: str = ""
    allow_shell: bool = False
    max_turns: int = 30
    max_cost_usd: float = 2.0
    max_minutes: float = 15.0
    command_timeout: float = 600.0
    # The failing command(s), from the workflow definition or the inputs (never from the log,
    # whose text is untrusted): the only commands besides setup/test that the agent may run.
    failing_commands: Sequence[str] = ()
    # Extra untrusted context: verification output of a previous try, review comments, ...
    context: Sequence[UntrustedText] = ()
    # Our own (trusted) words about the task, e.g. "address the review comments below".
    task: str = ""
    # Review mode (None: a CI failure): the ids of the review's threads, each ended in `finish`.
    threads: Sequence[int] | None = None
    effort: str = ""  # the Messages API's `output_config.effort`; "" leaves it to the model
    max_tokens: int = 16_000  # per model turn; ≤ 21,333 keeps the SDK's non-streaming guard quiet
    # Values masked in everything sent to the model, besides the usual secret patterns (the run's
    # tokens and keys: `from_settings` fills it). Never printed: kept out of repr.
    secrets: Sequence[str] = field(default=(), repr=False)

    @property
    def commands(self) -> list[str]:
        return list(dict.fromkeys(c.strip() for c in self.failing_commands if c.strip()))

    @property
    def allowed_commands(self) -> list[str]:
        """Commands the `run` tool accepts (when shell is not allowed)."""
        extra = [c.strip() for c in (self.setup_command, self.test_command) if c.strip()]
        return list(dict.fromkeys([*self.commands, *extra]))

    @classmethod
    def from_settings(
        cls,
        settings: Settings,
        diagnosis: Diagnosis,
        *,
        context: Sequence[UntrustedText] = (),
        task: str = "",
        failing_commands: Sequence[str] = (),
        threads: Sequence[int] | None = None,
    ) -> AgentRequest:
        return cls(
            diagnosis=diagnosis,
            model=settings.model,
            effort=settings.effort,
            setup_command=settings.setup_command,
            test_command=settings.test_command,
            allow_shell=settings.allow_shell,
            max_turns=settings.max_turns,
            max_cost_usd=settings.max_cost_usd,
            max_minutes=settings.max_minutes,
            command_timeout=settings.command_timeout,
            failing_commands=tuple(failing_commands),
            context=tuple(context),
            task=task,
            threads=None if threads is None else tuple(threads),
            secrets=tuple(settings.secrets()),
        )


@dataclass
class AgentResult:
    summary: str
    root_cause: str
    confidence: Confidence
    notes_left_as_is: list[str] = field(default_factory=list)
    threads: list[ThreadReport] = field(default_factory=list)  # review mode: one per thread
    usage: Usage = field(default_factory=Usage)
    cost_usd: float = 0.0
    turns: int = 0
    finished: bool = False  # the model called `finish`; False when it stopped without it
    model: str = ""
    transcript: tuple[dict[str, Any], ...] = ()  # the conversation (kept when a later check halts)

    def spent(self) -> AgentSpend:
        return AgentSpend(cost_usd=self.cost_usd, turns=self.turns)

    def to_json(self) -> dict[str, Any]:
        return {
            "summary": self.summary,
            "root_cause": self.root_cause,
            "confidence": self.confidence,
            "notes_left_as_is": list(self.notes_left_as_is),
            "threads": [dict(t) for t in self.threads],
            "usage": self.usage.to_json(),
            "cost_usd": round(self.cost_usd, 6),
            "turns": self.turns,
            "finished": self.finished,
            "model": self.model,
        }
