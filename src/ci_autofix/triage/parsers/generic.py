"""Compilers and tools that print `file:line[:col]: [fatal] error: message` (gcc, clang, swift, ...)."""

from __future__ import annotations

from ci_autofix.triage.parsers.base import line_parser

PARSERS = (
    line_parser(
        "file-line-error",
        "compiler",
        "build",
        r"^(?P<file>[\w./\\@+-]+\.[A-Za-z0-9]{1,6}):(?P<line>\d+)(?::(?P<col>\d+))?:? "
        r"(?:fatal )?(?:error|Error|ERROR)(?:\[(?P<rule>[\w-]+)\])?:? (?P<msg>.+)$",
        after=4,
    ),
    line_parser(
        "msbuild",
        "msbuild",
        "build",
        r"^(?P<file>\S+)\((?P<line>\d+),(?P<col>\d+)\): error (?P<rule>[A-Z]+\d+): (?P<msg>.+)$",
    ),
)
