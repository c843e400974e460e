"""What a parser is: a trigger on one cleaned line and an extractor that returns a `Found`.

Each tool family is a small module exporting `PARSERS`, a tuple of `Parser` table entries.
`line_parser` builds the common case (one regex with named groups `file`, `line`, `col`,
`rule`, `msg`, `test`) so most entries are a single line of table.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from ci_autofix.triage.logview import LogView
from ci_autofix.triage.model import Failure
from ci_autofix.triage.normalize import without_marker

ARROW_RE = re.compile(r"^\s*--> (?P<file>[^\s:]+):(?P<line>\d+):(?P<col>\d+)")


@dataclass
class Found:
    failure: Failure
    first: int  # evidence span, inclusive line indexes
    last: int


Extract = Callable[[LogView, int, "re.Match[str]"], Found | None]


@dataclass(frozen=True)
class Parser:
    name: str
    trigger: re.Pattern[str]  # matched against the cleaned line without its `##[...]` marker
    extract: Extract


DEPENDENCY_RE = re.compile(
    r"could not be resolved|Could not resolve (?:dependencies|all (?:files|dependencies))|"
    r"Failed to collect dependencies|Non-resolvable (?:parent )?POM|Could not find artifact|"
    r"Could not find a version that satisfies|No matching distribution found|ResolutionImpossible|"
    r"No matching version found|ERESOLVE|ETARGET|E404|version solving failed|failed to select a version|"
    r"no matching package named|unsatisfiable constraints|Unable to locate package|"
    r"Couldn't find any versions|Couldn't find package",
    re.I,
)


def dependency_or(kind: str, message: str) -> str:
    """`dependency` when the message is a resolution failure, else `kind`."""
    return "dependency" if DEPENDENCY_RE.search(message) else kind


def text(view: LogView, i: int) -> str:
    """The cleaned line `i` without a GitHub marker."""
    return without_marker(view.clean(i))


def to_int(value: str | None) -> int | None:
    return int(value) if value and value.isdigit() else None


def group(match: re.Match[str], name: str) -> str | None:
    try:
        value = match.group(name)
    except IndexError:
        return None
    return value.strip() if isinstance(value, str) and value.strip() else None


def failure_from(match: re.Match[str], tool: str, kind: str, message: str | None = None) -> Failure:
    return Failure(
        tool=tool,
        kind=kind,
        message=message or group(match, "msg") or match.group(0).strip(),
        file=group(match, "file"),
        line=to_int(group(match, "line")),
        column=to_int(group(match, "col")),
        test_id=group(match, "test"),
        rule=group(match, "rule"),
    )


def indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def follow(
    view: LogView, i: int, *, limit: int, stop: re.Pattern[str] | None = None, blank_ends: bool = True
) -> int:
    """The last line of the block that starts at `i`: up to a blank line, `stop`, or `limit` lines."""
    last = i
    end = min(len(view), i + 1 + limit)
    for j in range(i + 1, end):
        line = text(view, j)
        if blank_ends and not line.strip():
            break
        if stop is not None and stop.search(line):
            break
        last = j
    return last


def indented_after(view: LogView, i: int, *, limit: int = 30) -> int:
    """The last line of the lines after `i` that are indented more than line `i`."""
    base = indent(text(view, i))
    last = i
    for j in range(i + 1, min(len(view), i + 1 + limit)):
        line = text(view, j)
        if not line.strip() or indent(line) <= base:
            break
        last = j
    return last


def line_parser(
    name: str,
    tool: str,
    kind: str,
    pattern: str,
    *,
    after: int = 0,
    indented: bool = False,
    resolution: bool = False,
) -> Parser:
    """A parser for one-line diagnostics, keeping `after` following lines (or the indented block).

    With `resolution`, a message that reads as a dependency-resolution failure gets kind `dependency`.
    """
    regex = re.compile(pattern)

    def extract(view: LogView, i: int, match: re.Match[str]) -> Found:
        last = i
        if indented:
            last = indented_after(view, i)
        elif after:
            last = follow(view, i, limit=after)
        failure = failure_from(match, tool, kind)
        if resolution:
            failure.kind = dependency_or(kind, failure.message)
        return Found(failure, i, last)

    return Parser(name, regex, extract)
