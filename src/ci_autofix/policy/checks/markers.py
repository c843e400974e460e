"""Skip, xfail and focus markers (block), and lint or type-check suppressions (flag)."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from ci_autofix.policy.checks.limits import Limits
from ci_autofix.policy.checks.occurrences import code, comment, new_occurrences
from ci_autofix.policy.diff import FileDiff
from ci_autofix.policy.model import Finding
from ci_autofix.policy.source import Language
from ci_autofix.policy.table import finding

_SKIP: dict[Language, dict[str, re.Pattern[str]]] = {
    Language.PYTHON: {
        "pytest.mark.skip/skipif/xfail": re.compile(r"\bmark\s*\.\s*(?:skip|skipif|xfail)\b"),
        "pytest.skip()/xfail()": re.compile(r"\bpytest\s*\.\s*(?:skip|xfail)\s*\("),
        "unittest.skip": re.compile(
            r"(?:\bunittest\s*\.\s*|@\s*)(?:skip|skipIf|skipUnless|expectedFailure)\b"
        ),
        "self.skipTest()": re.compile(r"\.\s*skipTest\s*\("),
        "raise SkipTest": re.compile(r"\braise\s+(?:\w+\.)*SkipTest\b"),
    },
    Language.JS: {
        "it.skip/describe.skip/test.skip": re.compile(
            r"\b(?:it|test|describe|context|suite|specify|bench)(?:\s*\.\s*\w+)*?\s*\.\s*(?:skip|skipIf|fails)\b"
        ),
        "xit/xdescribe/xtest": re.compile(r"(?<![\w.$])(?:xit|xdescribe|xtest|xcontext|xspecify)\s*\("),
        "this.skip()": re.compile(r"\bthis\s*\.\s*skip\s*\("),
    },
    Language.GO: {"t.Skip()": re.compile(r"\b\w+(?:\(\))?\s*\.\s*(?:Skip|Skipf|SkipNow)\s*\(")},
    Language.RUST: {"#[ignore]": re.compile(r"#\s*\[\s*(?:ignore\b|cfg_attr\s*\(.*\bignore\b)")},
    Language.JAVA: {
        "@Disabled/@Ignore": re.compile(r"@\s*(?:org\.junit\.(?:jupiter\.api\.)?)?(?:Disabled\w*|Ignore)\b"),
        "Assume.assumeTrue(false)": re.compile(r"\bassume(?:True|That)\s*\(\s*false\s*\)"),
    },
}
_ONLY: dict[Language, dict[str, re.Pattern[str]]] = {
    Language.JS: {
        "it.only/describe.only/test.only": re.compile(
            r"\b(?:it|test|describe|context|suite|specify)(?:\s*\.\s*\w+)*?\s*\.\s*only\b"
        ),
        "fit/fdescribe": re.compile(r"(?<![\w.$])(?:fit|fdescribe|ftest)\s*\("),
    },
}
_SUPPRESS_IN_COMMENT: dict[str, re.Pattern[str]] = {
    "# noqa": re.compile(r"\bnoqa\b", re.I),
    "type: ignore": re.compile(r"\btype:\s*ignore\b"),
    "pyright: ignore": re.compile(r"\bpyright:\s*ignore\b"),
    "pylint: disable": re.compile(r"\bpylint:\s*disable\b"),
    "eslint-disable": re.compile(r"\beslint-disable\b"),
    "@ts-ignore/@ts-expect-error/@ts-nocheck": re.compile(r"@ts-(?:ignore|expect-error|nocheck)\b"),
    "//nolint": re.compile(r"//\s*nolint\b"),
}
_SUPPRESS_IN_CODE: dict[Language, dict[str, re.Pattern[str]]] = {
    Language.RUST: {"#[allow(...)]": re.compile(r"#\s*!?\s*\[\s*allow\s*\(")},
    Language.JAVA: {"@SuppressWarnings": re.compile(r"@\s*SuppressWarnings\b")},
}


def check(files: Sequence[FileDiff], limits: Limits) -> Iterator[Finding]:
    for file in files:
        if file.status == "deleted":
            continue
        # `x.Skip()` is a common method name in Go: only a test's `t.Skip` counts, in _test.go files.
        hunks = file.test_hunks if file.language is Language.GO else None
        for hit in new_occurrences(file, _SKIP.get(file.language, {}), code, hunks):
            yield finding(
                "skip-marker-added",
                f"A {hit.kind} marker is added: the test would stop running instead of passing.",
                file.path,
                hit.line.number,
            )
        for hit in new_occurrences(file, _ONLY.get(file.language, {}), code):
            yield finding(
                "only-marker-added",
                f"A focus marker ({hit.kind}) is added: every other test in the suite would be skipped.",
                file.path,
                hit.line.number,
            )
        for hit in new_occurrences(file, _SUPPRESS_IN_COMMENT, comment):
            yield finding(
                "suppression-added",
                f"A new {hit.kind} suppression hides a lint or type error rather than fixing it.",
                file.path,
                hit.line.number,
            )
        for hit in new_occurrences(file, _SUPPRESS_IN_CODE.get(file.language, {}), code):
            yield finding(
                "suppression-added",
                f"A new {hit.kind} hides a compiler or lint warning rather than fixing it.",
                file.path,
                hit.line.number,
            )
