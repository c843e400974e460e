"""Go: go build/vet diagnostics, go test failures, panics."""

from __future__ import annotations

import re

from ci_autofix.triage.logview import LogView
from ci_autofix.triage.model import Failure
from ci_autofix.triage.parsers.base import Found, Parser, follow, indented_after, line_parser, text

GO_FAIL_RE = re.compile(r"^\s*--- FAIL: (?P<test>\S+)")
GO_OUTPUT_RE = re.compile(r"^\s+(?P<file>[\w./-]+_test\.go):(?P<line>\d+): (?P<msg>.+)$")
GO_OUTPUT_LINES = 100  # a failed test's indented output (its diff, its expected list) is read whole
GO_RUN_RE = re.compile(r"^\s*=== (?:RUN|CONT|PAUSE)\s")


def _go_fail(view: LogView, i: int, match: re.Match[str]) -> Found:
    first = i
    # `go test -v` prints the test's output before its `--- FAIL` line
    for j in range(i - 1, max(-1, i - 40), -1):
        current = text(view, j)
        if GO_RUN_RE.match(current) or not current.strip():
            break
        first = j
    last = indented_after(view, i, limit=GO_OUTPUT_LINES)
    file: str | None = None
    line_no: int | None = None
    message = match.group(0).strip()
    for j in range(first, last + 1):
        out = GO_OUTPUT_RE.match(text(view, j))
        if out:
            file, line_no, message = out.group("file"), int(out.group("line")), out.group("msg")
            break
    failure = Failure(
        tool="go", kind="test", message=message, file=file, line=line_no, test_id=match.group("test")
    )
    return Found(failure, first, last)


def _panic(view: LogView, i: int, match: re.Match[str]) -> Found:
    last = follow(view, i, limit=40, blank_ends=False, stop=re.compile(r"^(?:FAIL|ok )\s"))
    return Found(Failure(tool="go", kind="test", message=match.group(0).strip()), i, last)


PARSERS = (
    Parser("go-test", GO_FAIL_RE, _go_fail),
    line_parser("go-package", "go", "test", r"^FAIL\s+(?P<test>[\w./-]+)\s+(?:[\d.]+s|\[build failed\])$"),
    line_parser(
        "go-build",
        "go",
        "build",
        r"^(?P<file>[\w./-]+\.go):(?P<line>\d+):(?P<col>\d+): (?P<msg>.+)$",
    ),
    Parser("go-panic", re.compile(r"^panic: .+"), _panic),
)
