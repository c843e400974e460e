"""Pattern occurrences that a diff adds: more on the `+` side of a file than on its `-` side.

Counting per file and per kind means that a line that is only moved or re-indented, or a
marker that is rewritten on the same line, is not new; a line whose text is exactly a removed
line's text is never reported.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from ci_autofix.policy.diff import FileDiff, Hunk, Line
from ci_autofix.policy.source import View

ViewOf = Callable[[View], str]


def code(view: View) -> str:
    return view.code


def comment(view: View) -> str:
    return view.comment


def bare(view: View) -> str:
    return view.bare


@dataclass(frozen=True)
class Occurrence:
    line: Line
    kind: str  # the name of the pattern that matched


def new_occurrences(
    file: FileDiff,
    patterns: Mapping[str, re.Pattern[str]],
    view_of: ViewOf,
    hunks: Iterable[Hunk] | None = None,
) -> list[Occurrence]:
    """Added occurrences of each named pattern, when the file gains more than it loses."""
    chosen = list(file.hunks if hunks is None else hunks)
    added = [line for hunk in chosen for line in hunk.added]
    removed = [line for hunk in chosen for line in hunk.removed]
    gained: Counter[str] = Counter()
    lost: Counter[str] = Counter()
    hits: list[Occurrence] = []
    for kind, pattern in patterns.items():
        for line in added:
            count = len(pattern.findall(view_of(line.view)))
            if count:
                gained[kind] += count
                hits.append(Occurrence(line, kind))
        for line in removed:
            lost[kind] += len(pattern.findall(view_of(line.view)))
    moved = Counter(" ".join(line.text.split()) for line in removed)
    result: list[Occurrence] = []
    for hit in hits:
        if gained[hit.kind] <= lost[hit.kind]:
            continue
        key = " ".join(hit.line.text.split())
        if moved[key]:
            moved[key] -= 1
            continue
        result.append(hit)
    return sorted(result, key=lambda o: o.line.number)
