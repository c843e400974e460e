"""Python linters: ruff (full and concise output), flake8, pylint."""

from __future__ import annotations

import re

from ci_autofix.triage.logview import LogView
from ci_autofix.triage.model import Failure
from ci_autofix.triage.parsers.base import ARROW_RE, Found, Parser, follow, line_parser, text

RUFF_HEAD_RE = re.compile(r"^(?P<rule>[A-Z]{1,4}\d{2,4}) (?:\[\*\] )?(?P<msg>.+)$")
RUFF_STOP_RE = re.compile(r"^(?:[A-Z]{1,4}\d{2,4} |Found \d+ error)")


def _ruff_full(view: LogView, i: int, match: re.Match[str]) -> Found | None:
    if i + 1 >= len(view):
        return None
    arrow = ARROW_RE.match(text(view, i + 1))
    if not arrow:
        return None
    last = follow(view, i + 1, limit=25, stop=RUFF_STOP_RE, blank_ends=True)
    failure = Failure(
        tool="ruff",
        kind="lint",
        message=match.group("msg").strip(),
        file=arrow.group("file"),
        line=int(arrow.group("line")),
        column=int(arrow.group("col")),
        rule=match.group("rule"),
    )
    return Found(failure, i, last)


PARSERS = (
    Parser("ruff-full", RUFF_HEAD_RE, _ruff_full),
    line_parser(
        "pylint",
        "pylint",
        "lint",
        r"^(?P<file>[^\s:]+\.py):(?P<line>\d+):(?P<col>\d+): (?P<rule>[CRWEFI]\d{4}): (?P<msg>.+)$",
    ),
    line_parser(
        "ruff-concise",
        "ruff",
        "lint",
        r"^(?P<file>[^\s:]+\.pyi?):(?P<line>\d+):(?P<col>\d+): (?P<rule>[A-Z]{1,4}\d{2,4}) \[\*\] (?P<msg>.+)$",
    ),
    line_parser(
        "flake8",
        "flake8",
        "lint",
        r"^(?P<file>[^\s:]+\.pyi?):(?P<line>\d+):(?P<col>\d+): (?P<rule>[A-Z]{1,4}\d{2,4}) (?P<msg>.+)$",
    ),
)
