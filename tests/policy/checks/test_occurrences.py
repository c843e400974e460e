"""Occurrences a diff adds: counted per file and kind, so a marker rewritten on its line is not new."""

from __future__ import annotations

import re

from ci_autofix.policy.checks.occurrences import code, new_occurrences
from ci_autofix.policy.diff import parse

SKIP = {"it.skip": re.compile(r"\bit\s*\.\s*skip\b")}


def diff(removed: list[str], added: list[str]) -> str:
    body = [" const a = 1;", *(f"-{line}" for line in removed), *(f"+{line}" for line in added), " done();"]
    header = [
        "diff --git a/tests/a.test.js b/tests/a.test.js",
        "--- a/tests/a.test.js",
        "+++ b/tests/a.test.js",
        f"@@ -1,{len(removed) + 2} +1,{len(added) + 2} @@",
    ]
    return "\n".join([*header, *body]) + "\n"


def occurrences(removed: list[str], added: list[str]) -> list[tuple[int, str]]:
    [file] = parse(diff(removed, added))
    return [(o.line.number, o.kind) for o in new_occurrences(file, SKIP, code)]


def test_a_marker_rewritten_on_the_same_line_is_not_new() -> None:
    assert occurrences(['it.skip("adds", () => {});'], ['it.skip("adds two numbers", () => {});']) == []


def test_a_moved_line_is_not_new() -> None:
    line = 'it.skip("adds", () => {});'
    assert occurrences([line], ["const b = 2;", f"  {line}"]) == []


def test_a_second_marker_is_new() -> None:
    assert occurrences(
        ['it.skip("adds", () => {});'], ['it.skip("adds", () => {});', 'it.skip("subtracts", () => {});']
    ) == [(3, "it.skip")]


def test_a_marker_on_a_new_line_is_new() -> None:
    assert occurrences([], ['it.skip("adds", () => {});']) == [(2, "it.skip")]
