"""Python type checkers: mypy and pyright."""

from __future__ import annotations

from ci_autofix.triage.parsers.base import line_parser

PARSERS = (
    line_parser(
        "mypy",
        "mypy",
        "type",
        r"^(?P<file>[^\s:]+\.pyi?):(?P<line>\d+):(?:(?P<col>\d+):)? error: (?P<msg>.+?)(?:  \[(?P<rule>[\w-]+)\])?$",
    ),
    line_parser(
        "pyright",
        "pyright",
        "type",
        r"^\s*(?P<file>\S+\.pyi?):(?P<line>\d+):(?P<col>\d+) - error: (?P<msg>.+?)(?: \((?P<rule>\w+)\))?$",
        indented=True,
    ),
)
