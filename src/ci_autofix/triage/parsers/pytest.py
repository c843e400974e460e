"""pytest: failure/error sections (assertion blocks, collection errors) and the short summary."""

from __future__ import annotations

import re

from ci_autofix.triage.logview import LogView
from ci_autofix.triage.model import Failure
from ci_autofix.triage.parsers.base import Found, Parser, line_parser, text

SECTION_RE = re.compile(r"^_{3,} (?P<test>\S.*?) _{3,}$")
BOUNDARY_RE = re.compile(
    r"^(?:_{3,} \S.*? _{3,}|={5,}.*={5,}|-{5,} .* -{5,}|\d+ (?:failed|passed|error).* in [\d.]+s.*)$"
    r"|^##\[(?:group|endgroup)\]|^##\[error\]Process completed|^Post job cleanup"
)
LOCATION_RE = re.compile(r"^(?P<file>[^\s:]+\.py):(?P<line>\d+): (?P<exc>[\w.]+)$")
E_LINE_RE = re.compile(r"^E\s+(?P<msg>.+)$")
MAX_BLOCK = 120


def _section(view: LogView, i: int, match: re.Match[str]) -> Found | None:
    name = match.group("test")
    collecting = name.startswith("ERROR collecting ")
    last, message, file, line = i, None, None, None
    for j in range(i + 1, min(len(view), i + MAX_BLOCK)):
        current = text(view, j)
        if BOUNDARY_RE.match(current.strip()):
            break
        last = j
        e_line = E_LINE_RE.match(current)
        if e_line and message is None:
            message = e_line.group("msg").strip()
        location = LOCATION_RE.match(current.strip())
        if location:
            file, line = location.group("file"), int(location.group("line"))
            message = message or location.group("exc")
    if last == i:
        return None
    test_id = None if collecting else name
    if collecting:
        file = name.removeprefix("ERROR collecting ").strip()
    failure = Failure(
        tool="pytest",
        kind="test",
        message=message or name,
        file=file,
        line=line,
        test_id=test_id,
        rule="collection-error" if collecting else None,
    )
    return Found(failure, i, last)


PARSERS = (
    Parser("pytest-section", SECTION_RE, _section),
    line_parser(
        "pytest-summary",
        "pytest",
        "test",
        r"^(?P<rule>FAILED|ERROR) (?P<test>(?P<file>[^\s:]+\.py)(?:::\S+)?)(?: - (?P<msg>.+))?$",
    ),
)
