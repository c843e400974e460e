"""The two ways a run ends without a fix.

`Halt` is an expected outcome with a typed reason (not a failure, not a fix: the job
summary explains it and the job exits 0 unless `fail-on-halt`). `UserError` is a real
error the user must act on: it names the cause and the remedy, and the job fails.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any


class HaltReason(StrEnum):
    NOT_A_FAILURE = "not-a-failure"
    OWN_BRANCH = "own-branch"
    FORK = "fork"
    BRANCH_FILTERED = "branch-filtered"
    LOGS_EXPIRED = "logs-expired"
    LOGS_UNAVAILABLE = "logs-unavailable"
    NO_FAILED_JOBS = "no-failed-jobs"
    NO_CI_RUN = "no-ci-run"
    INFRA = "infra"
    NOT_REPRODUCED = "not-reproduced"
    FAILING_ON_BASE = "failing-on-base"
    NO_CHANGES = "no-changes"
    AGENT_DISABLED = "agent-disabled"
    AGENT_GAVE_UP = "agent-gave-up"
    BUDGET = "budget"
    REFUSAL = "refusal"
    CONTEXT_EXCEEDED = "context-exceeded"
    MODEL_UNAVAILABLE = "model-unavailable"
    TOOL_ERROR_LOOP = "tool-error-loop"
    UNVERIFIED_FIX = "unverified-fix"
    POLICY = "policy"
    ATTEMPTS_EXHAUSTED = "attempts-exhausted"
    LINEAGE_BUDGET = "lineage-budget"
    SAME_FAILURE_AGAIN = "same-failure-again"
    REVIEW_CYCLES_EXHAUSTED = "review-cycles-exhausted"
    BRANCH_MOVED = "branch-moved"
    AWAITING_APPROVAL = "awaiting-approval"
    REFUSED = "refused"
    ALREADY_APPLIED = "already-applied"
    UNSAFE_COPY = "unsafe-copy"


@dataclass(frozen=True)
class AgentSpend:
    """What the agent spent on an attempt before it halted: the cost every outcome reports."""

    cost_usd: float
    turns: int


@dataclass(frozen=True)
class Kept:
    """The work a halted attempt leaves for a human; nothing of it is proposed. The change so far
    against the failing commit (a diff, and a commit in the work area's git directory that a local
    run fetches onto a branch), the verification evidence (Markdown) and the agent's conversation."""

    diff: str = ""
    commit: str = ""
    evidence: str = ""
    transcript: tuple[dict[str, Any], ...] = ()


class Halt(Exception):
    """A run that ends without a fix, for a reason the user can read. `spent` is set on every halt
    that comes after the agent ran (the agent's own halts and those of the checks after it);
    `kept` on every halt that comes after a change or a conversation exists."""

    def __init__(
        self,
        reason: HaltReason,
        message: str,
        *,
        details: dict[str, object] | None = None,
        spent: AgentSpend | None = None,
        kept: Kept | None = None,
    ) -> None:
        super().__init__(f"{reason}: {message}")
        self.reason = reason
        self.message = message
        self.details = details or {}
        self.spent = spent
        self.kept = kept

    def keeping(self, kept: Kept | None, *, message: str | None = None) -> Halt:
        """The same halt, with `kept` (and another message, when given)."""
        return Halt(self.reason, message or self.message, details=self.details, spent=self.spent, kept=kept)


class UserError(Exception):
    """An error with its cause and what to do about it."""

    def __init__(self, cause: str, remedy: str, *, docs: str | None = None) -> None:
        text = f"{cause}\n  What to do: {remedy}"
        if docs:
            text += f"\n  More: {docs}"
        super().__init__(text)
        self.cause = cause
        self.remedy = remedy
        self.docs = docs
