"""Rust: rustc/cargo build and clippy diagnostics, cargo test failures and panics."""

from __future__ import annotations

import re

from ci_autofix.triage.logview import LogView
from ci_autofix.triage.model import Failure
from ci_autofix.triage.parsers.base import ARROW_RE, Found, Parser, follow, line_parser, text

DIAG_RE = re.compile(r"^error(?:\[(?P<rule>E\d{4})\])?: (?P<msg>.+)$")
STDOUT_RE = re.compile(r"^---- (?P<test>\S+) stdout ----$")
PANIC_RE = re.compile(r"panicked at (?:'(?P<msg1>.*)', )?(?P<file>[^\s:]+\.rs):(?P<line>\d+):(?P<col>\d+)")


def _diagnostic(view: LogView, i: int, match: re.Match[str]) -> Found | None:
    if match.group("msg").startswith(("could not compile", "aborting due to")):
        return None
    last = follow(view, i, limit=40)
    file = line = col = None
    for j in range(i + 1, min(last + 1, i + 4)):
        arrow = ARROW_RE.match(text(view, j))
        if arrow:
            file, line, col = arrow.group("file"), int(arrow.group("line")), int(arrow.group("col"))
            break
    if file is None and not match.group("rule"):
        return None
    rule = match.group("rule")
    lint = re.search(
        r"#\[deny\((clippy::[\w_]+)\)\]|-D (clippy::[\w-]+)",
        " ".join(text(view, j) for j in range(i, last + 1)),
    )
    tool = "clippy" if lint else "cargo"
    if lint:
        rule = lint.group(1) or lint.group(2)
    failure = Failure(
        tool=tool,
        kind="lint" if lint else "build",
        message=match.group("msg"),
        file=file,
        line=line,
        column=col,
        rule=rule,
    )
    return Found(failure, i, last)


def _test_stdout(view: LogView, i: int, match: re.Match[str]) -> Found:
    last = follow(
        view, i, limit=60, stop=re.compile(r"^(?:---- \S+ std(?:out|err) ----|failures:)$"), blank_ends=False
    )
    while last > i and not text(view, last).strip():
        last -= 1
    file = line = None
    message = match.group(0)
    for j in range(i + 1, last + 1):
        panic = PANIC_RE.search(text(view, j))
        if panic:
            file, line = panic.group("file"), int(panic.group("line"))
            following = text(view, j + 1).strip() if j + 1 <= last else ""
            message = panic.group("msg1") or following or text(view, j).strip()
            break
    failure = Failure(
        tool="cargo", kind="test", message=message, file=file, line=line, test_id=match.group("test")
    )
    return Found(failure, i, last)


PARSERS = (
    Parser("rustc", DIAG_RE, _diagnostic),
    Parser("cargo-test-output", STDOUT_RE, _test_stdout),
    line_parser("cargo-test", "cargo", "test", r"^test (?P<test>\S+) \.\.\. FAILED$"),
    line_parser("cargo-test-result", "cargo", "test", r"^test result: FAILED\..*$"),
)
