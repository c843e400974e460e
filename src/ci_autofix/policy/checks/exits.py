"""Test code that ends the process, so the runner reports success without running the rest (block)."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from ci_autofix.policy.checks.limits import Limits
from ci_autofix.policy.checks.occurrences import code, new_occurrences
from ci_autofix.policy.diff import FileDiff
from ci_autofix.policy.model import Finding
from ci_autofix.policy.source import Language
from ci_autofix.policy.table import finding

# `os.Exit(m.Run())` in a Go TestMain passes the tests' status on: only a constant status counts there.
_EXITS: dict[Language, dict[str, re.Pattern[str]]] = {
    Language.PYTHON: {
        "an exit": re.compile(
            r"\braise\s+SystemExit\b|\b(?:sys|os)\s*\.\s*_?exit\s*\(|(?<![\w.])(?:exit|quit)\s*\(|\bpytest\s*\.\s*exit\s*\("
            r"|\bos\s*\.\s*(?:kill|abort)\s*\("
        )
    },
    Language.JS: {
        "an exit": re.compile(
            r"\bprocess\s*\.\s*(?:exit|reallyExit|abort)\s*\(|\bprocess\s*\.\s*exitCode\s*="
        )
    },
    Language.GO: {
        "an exit": re.compile(r"\b(?:os|syscall)\s*\.\s*Exit\s*\(\s*\d+\s*\)|\bruntime\s*\.\s*Goexit\s*\(")
    },
    Language.RUST: {"an exit": re.compile(r"\bprocess\s*::\s*(?:exit|abort)\s*\(")},
    Language.JAVA: {
        "an exit": re.compile(
            r"\bSystem\s*\.\s*exit\s*\(|\bRuntime\s*\.\s*getRuntime\s*\(\s*\)\s*\.\s*(?:halt|exit)\s*\("
        )
    },
}


def check(files: Sequence[FileDiff], limits: Limits) -> Iterator[Finding]:
    for file in files:
        tests = file.test_hunks
        if file.status == "deleted" or not tests or file.language not in _EXITS:
            continue
        for hit in new_occurrences(file, _EXITS[file.language], code, tests):
            yield finding(
                "exit-in-test",
                f"Test code gains {hit.kind} of the process: the run would end, often with "
                "status 0, before the tests that follow ever run.",
                file.path,
                hit.line.number,
            )
