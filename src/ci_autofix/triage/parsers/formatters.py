"""Formatter checks: black, ruff format, isort, prettier ("would reformat")."""

from __future__ import annotations

import re

from ci_autofix.triage.logview import LogView
from ci_autofix.triage.model import Failure
from ci_autofix.triage.parsers.base import ARROW_RE, Found, Parser, follow, line_parser, text


def _ruff_format(view: LogView, i: int, match: re.Match[str]) -> Found | None:
    if i + 1 >= len(view):
        return None
    arrow = ARROW_RE.match(text(view, i + 1))
    if not arrow:
        return None
    last = follow(view, i + 1, limit=30)
    failure = Failure(
        tool="ruff-format",
        kind="format",
        message="would be reformatted",
        file=arrow.group("file"),
        line=int(arrow.group("line")),
    )
    return Found(failure, i, last)


PARSERS = (
    line_parser("black", "black", "format", r"^would reformat (?P<file>.+)$"),
    line_parser("ruff-format", "ruff-format", "format", r"^Would reformat: (?P<file>.+)$"),
    Parser("ruff-format-full", re.compile(r"^unformatted: File would be reformatted$"), _ruff_format),
    line_parser(
        "isort",
        "isort",
        "format",
        r"^ERROR: (?P<file>.+?) Imports are incorrectly sorted and/or formatted\.?$",
    ),
    line_parser("prettier", "prettier", "format", r"^\[warn\] (?P<file>(?!Code style issues)\S+\.\w+)$"),
)
