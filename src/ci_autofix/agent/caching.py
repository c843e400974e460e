"""Prompt-caching breakpoints: tools, system prompt, the failure excerpt, and the latest turn.

The API caches the prefix `tools → system → messages` up to each block marked with
`cache_control`, at most four per request. Our four: the last tool (the tools never change
within an attempt), the system prompt, the block holding the triage excerpt (written on the
first turn, read on every later one), and the last block of the newest user turn (so each
turn reads the conversation cached by the turn before and writes one turn more). The
history we keep is never marked; the marks are put on a copy for each request.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

MAX_BREAKPOINTS = 4
EPHEMERAL: dict[str, str] = {"type": "ephemeral"}
MARKABLE = frozenset({"text", "tool_use", "tool_result", "image", "document"})


def mark(block: dict[str, Any]) -> dict[str, Any]:
    return {**block, "cache_control": dict(EPHEMERAL)}


def with_breakpoints(
    tools: Sequence[dict[str, Any]],
    system: Sequence[dict[str, Any]],
    messages: Sequence[dict[str, Any]],
    *,
    pinned: tuple[int, int] | None = None,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """Copies of tools, system and messages with the breakpoints set.

    `pinned` is (message index, block index) of the excerpt block.
    """
    out_tools = [dict(t) for t in tools]
    out_system = [dict(s) for s in system]
    out_messages = [
        {**m, "content": list(m["content"])}
        if isinstance(m["content"], list)
        else {**m, "content": [{"type": "text", "text": m["content"]}]}
        for m in messages
    ]
    if out_tools:
        out_tools[-1] = mark(out_tools[-1])
    if out_system:
        out_system[-1] = mark(out_system[-1])
    if pinned is not None:
        m, b = pinned
        out_messages[m]["content"][b] = mark(out_messages[m]["content"][b])
    if newest := _newest_markable(out_messages):
        m, b = newest
        out_messages[m]["content"][b] = mark(copy.copy(out_messages[m]["content"][b]))
    assert count_breakpoints(out_tools, out_system, out_messages) <= MAX_BREAKPOINTS
    return out_tools, out_system, out_messages


def _newest_markable(messages: Sequence[dict[str, Any]]) -> tuple[int, int] | None:
    """The last block that may carry `cache_control` (thinking blocks may not)."""
    for m in range(len(messages) - 1, -1, -1):
        content = messages[m]["content"]
        for b in range(len(content) - 1, -1, -1):
            if content[b].get("type") in MARKABLE:
                return m, b
    return None


def count_breakpoints(
    tools: Sequence[dict[str, Any]], system: Sequence[dict[str, Any]], messages: Sequence[dict[str, Any]]
) -> int:
    blocks = [*tools, *system, *(b for m in messages if isinstance(m["content"], list) for b in m["content"])]
    return sum(1 for b in blocks if isinstance(b, dict) and "cache_control" in b)
