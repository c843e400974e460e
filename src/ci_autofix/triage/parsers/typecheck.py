"""Python type checkers: mypy and pyright."""

from __future__ import annotations

import re

from ci_autofix.triage.logview import LogView
from ci_autofix.triage.parsers.base import Found, Parser, failure_from, indented_after, line_parser, text

PYRIGHT_RE = re.compile(
    r"^\s*(?P<file>\S+\.pyi?):(?P<line>\d+):(?P<col>\d+) - error: (?P<msg>.+?)(?: \((?P<rule>\w+)\))?$"
)
PYRIGHT_RULE_RE = re.compile(r"\((?P<rule>report\w+)\)$")


def _pyright(view: LogView, i: int, match: re.Match[str]) -> Found:
    """pyright wraps long messages on indented lines; the rule closes the last of them."""
    last = indented_after(view, i, limit=12)
    failure = failure_from(match, "pyright", "type")
    if failure.rule is None:
        for j in range(i + 1, last + 1):
            rule = PYRIGHT_RULE_RE.search(text(view, j).strip())
            if rule:
                failure.rule = rule.group("rule")
    return Found(failure, i, last)


PARSERS = (
    line_parser(
        "mypy",
        "mypy",
        "type",
        r"^(?P<file>[^\s:]+\.pyi?):(?P<line>\d+):(?:(?P<col>\d+):)? error: (?P<msg>.+?)(?:  \[(?P<rule>[\w-]+)\])?$",
    ),
    Parser("pyright", PYRIGHT_RE, _pyright),
)
