"""JavaScript/TypeScript tools: eslint (stylish, unix), tsc, jest, vitest, mocha."""

from __future__ import annotations

import re

from ci_autofix.triage.logview import LogView
from ci_autofix.triage.model import Failure
from ci_autofix.triage.parsers.base import Found, Parser, failure_from, follow, line_parser, text

ESLINT_ROW_RE = re.compile(
    r"^\s+(?P<line>\d+):(?P<col>\d+)\s+(?P<sev>error)\s+(?P<msg>.+?)(?:\s{2,}(?P<rule>[\w@/-]+))?$"
)
ESLINT_FILE_RE = re.compile(r"^(?:[A-Za-z]:)?[\\/]?[\w.@\\/-]+\.(?:[cm]?[jt]sx?|vue|svelte|json|md)$")
JEST_BULLET_RE = re.compile(r"^\s*● (?P<test>.+)$")
JEST_STOP_RE = re.compile(r"^\s*● |^(?:Test Suites|Tests):|^\s*(?:FAIL|PASS) ")
MOCHA_ITEM_RE = re.compile(r"^\s+(?P<n>\d+)\) (?P<test>.+)$")
VITEST_HEAD_RE = re.compile(r"^\s*(?:FAIL|×|✗|❯)\s+(?P<file>\S+\.\w+)\s+>\s+(?P<test>.+)$")
VITEST_STOP_RE = re.compile(r"^\s*(?:FAIL|⎯{3,})")


def _eslint(view: LogView, i: int, match: re.Match[str]) -> Found:
    file = None
    for j in range(i - 1, max(-1, i - 300), -1):
        line = text(view, j).strip()
        if ESLINT_FILE_RE.match(line):
            file = line
            break
    failure = failure_from(match, "eslint", "lint")
    failure.file = file
    return Found(failure, i, i)


def _jest(view: LogView, i: int, match: re.Match[str]) -> Found | None:
    name = match.group("test").strip()
    if name.startswith("Test suite failed to run"):
        name = "Test suite failed to run"
    last = follow(view, i, limit=80, stop=JEST_STOP_RE, blank_ends=False)
    while last > i and not text(view, last).strip():
        last -= 1
    message = next((text(view, j).strip() for j in range(i + 1, last + 1) if text(view, j).strip()), name)
    return Found(Failure(tool="jest", kind="test", message=message, test_id=name), i, last)


def _mocha(view: LogView, i: int, match: re.Match[str]) -> Found | None:
    # a numbered failure is followed (possibly after a title continuation) by an error line
    last = follow(view, i, limit=60, stop=MOCHA_ITEM_RE, blank_ends=False)
    while last > i and not text(view, last).strip():
        last -= 1
    body = [text(view, j).strip() for j in range(i + 1, last + 1)]
    error = next((b for b in body if re.match(r"^[\w.]*(?:Error|Exception)\b", b)), None)
    if error is None:
        return None
    return Found(
        Failure(tool="mocha", kind="test", message=error, test_id=match.group("test").strip()), i, last
    )


def _vitest(view: LogView, i: int, match: re.Match[str]) -> Found:
    last = follow(view, i, limit=60, stop=VITEST_STOP_RE, blank_ends=False)
    while last > i and not text(view, last).strip():
        last -= 1
    body = [text(view, j).strip() for j in range(i + 1, last + 1) if text(view, j).strip()]
    failure = failure_from(match, "vitest", "test", body[0] if body else None)
    return Found(failure, i, last)


PARSERS = (
    Parser("eslint-stylish", ESLINT_ROW_RE, _eslint),
    line_parser(
        "eslint-unix",
        "eslint",
        "lint",
        r"^(?P<file>[^\s:]+\.[cm]?[jt]sx?):(?P<line>\d+):(?P<col>\d+): (?P<msg>.+?) \[Error/(?P<rule>[\w@/-]+)\]$",
    ),
    line_parser(
        "tsc",
        "tsc",
        "type",
        r"^(?P<file>[^\s(]+\.[cm]?[jt]sx?)\((?P<line>\d+),(?P<col>\d+)\): error (?P<rule>TS\d+): (?P<msg>.+)$",
        indented=True,
    ),
    line_parser(
        "tsc-pretty",
        "tsc",
        "type",
        r"^(?P<file>[^\s:]+\.[cm]?[jt]sx?):(?P<line>\d+):(?P<col>\d+) - error (?P<rule>TS\d+): (?P<msg>.+)$",
        after=12,
    ),
    Parser("vitest", VITEST_HEAD_RE, _vitest),
    Parser("jest", JEST_BULLET_RE, _jest),
    line_parser("jest-suite", "jest", "test", r"^\s*FAIL\s+(?P<file>\S+\.[cm]?[jt]sx?)(?:\s.*)?$"),
    Parser("mocha", MOCHA_ITEM_RE, _mocha),
)
