"""The excerpt: chosen spans of lines, in log order, with elision markers, under a token budget.

Spans carry a priority (0 = failure evidence and the failing command, 1 = their close context,
2 = error lines no parser claimed, 3 = the tail of the failed step). Spans are taken by
priority then rank until the budget is spent; priorities 2 and 3 stop earlier, at a soft size,
because past that point more context costs the reader more than it explains.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ci_autofix.redact import redact
from ci_autofix.triage.tokens import estimate_tokens, token_bytes

MARKER = "… [{n} lines omitted] …"
MARKER_COST = 32
SOFT_SHARE = 1.0  # priorities >= 2 fill up to this share of the budget
MIN_SOFT_BYTES = 6000
SMALL_BYTES = 11000  # priority 4 (wide context) only fills an excerpt up to this size


@dataclass
class Span:
    first: int
    last: int  # inclusive
    priority: int
    rank: int = 0


def elision(n: int) -> str:
    return MARKER.format(n=n)


def _cost(lines: Callable[[int], str], i: int) -> int:
    return len(lines(i).encode("utf-8", "replace")) + 1


def choose(spans: list[Span], line_at: Callable[[int], str], n_lines: int, budget_tokens: int) -> set[int]:
    """The set of line indexes the excerpt keeps."""
    limit = token_bytes(budget_tokens)
    soft = max(MIN_SOFT_BYTES, int(limit * SOFT_SHARE))
    chosen: set[int] = set()
    used = 0
    for span in sorted(spans, key=lambda s: (s.priority, s.rank, s.first)):
        first, last = max(0, span.first), min(n_lines - 1, span.last)
        if first > last:
            continue
        cap = limit if span.priority < 2 else min(limit, soft)
        if span.priority >= 4:
            cap = min(cap, SMALL_BYTES)
        if used >= cap:
            if span.priority >= 2:
                continue
            break
        new = [i for i in range(first, last + 1) if i not in chosen]
        if not new:
            continue
        cost = sum(_cost(line_at, i) for i in new) + MARKER_COST
        if used + cost <= cap:
            chosen.update(new)
            used += cost
            continue
        # keep what fits: the head of the span and, for evidence, its last lines too
        room = cap - used - MARKER_COST * 2
        head: list[int] = []
        tail: list[int] = []
        tail_room = room // 3 if span.priority == 0 else 0
        for i in reversed(new):
            c = _cost(line_at, i)
            if c > tail_room:
                break
            tail.append(i)
            tail_room -= c
            room -= c
        for i in new:
            if i in tail:
                break
            c = _cost(line_at, i)
            if c > room:
                break
            head.append(i)
            room -= c
        chosen.update(head)
        chosen.update(tail)
        used = cap - max(0, room)
    return chosen


def render(
    chosen: set[int], line_at: Callable[[int], str], n_lines: int, extra_secrets: tuple[str, ...] = ()
) -> str:
    """The kept lines in log order; every gap becomes one elision marker line."""
    out: list[str] = []
    previous = -1
    for i in sorted(chosen):
        if i - previous > 1:
            out.append(elision(i - previous - 1))
        out.append(line_at(i))
        previous = i
    if chosen and previous < n_lines - 1:
        out.append(elision(n_lines - 1 - previous))
    return redact("\n".join(out), extra_secrets)


def fit(text: str, budget_tokens: int) -> str:
    """`text` cut at a line boundary so that it is within the budget (a last-resort guard)."""
    if estimate_tokens(text) <= budget_tokens:
        return text
    limit = token_bytes(budget_tokens)
    data = text.encode("utf-8")[:limit]
    cut = data.rfind(b"\n")
    data = data[:cut] if cut > 0 else data
    return data.decode("utf-8", "ignore")


def build(
    spans: list[Span],
    line_at: Callable[[int], str],
    n_lines: int,
    budget_tokens: int,
) -> str:
    """The redacted excerpt of `spans` within `budget_tokens` by `estimate_tokens`."""
    budget = budget_tokens
    for _ in range(4):
        text = render(choose(spans, line_at, n_lines, budget), line_at, n_lines)
        if estimate_tokens(text) <= budget_tokens:
            return text
        budget = int(budget * 0.85)
    return fit(text, budget_tokens)
