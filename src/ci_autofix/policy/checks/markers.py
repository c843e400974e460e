"""Skip, xfail and focus markers (block), and lint or type-check suppressions (flag)."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from ci_autofix.policy import pyskips
from ci_autofix.policy.checks.limits import Limits
from ci_autofix.policy.checks.occurrences import ViewOf, code, comment, new_occurrences
from ci_autofix.policy.diff import FileDiff, Hunk
from ci_autofix.policy.model import Finding
from ci_autofix.policy.source import Language, View
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
        # the same through an alias (`from pytest import mark as m; @m.skip`, `pt.skip()`), a helper
        # (`raise pytest.skip.Exception`), an import of the function, or a name looked up at run time
        "a skip through an alias": re.compile(
            r"(?:@\s*[\w.]*\.|\b\w+\s*\.\s*)(?:skip|skipif|xfail|skipIf|skipUnless|expectedFailure)\b(?!\s*=[^=])"
            r"|\bimportorskip\s*\("
        ),
        "an imported skip": re.compile(
            r"^\s*from\s+(?:pytest|unittest|_pytest)[\w.]*\s+import\b.*\b(?:skip|skipif|xfail|skipIf|skipUnless|"
            r"SkipTest|expectedFailure|importorskip)\b"
        ),
    },
    Language.JS: {
        "it.skip/describe.skip/test.skip": re.compile(
            r"\b(?:it|test|describe|context|suite|specify|bench)(?:\s*\.\s*\w+)*?\s*\.\s*(?:skip|skipIf|fails)\b"
        ),
        "xit/xdescribe/xtest": re.compile(r"(?<![\w.$])(?:xit|xdescribe|xtest|xcontext|xspecify)\s*\("),
        "this.skip()": re.compile(r"\bthis\s*\.\s*skip\s*\("),
    },
    Language.GO: {"t.Skip()": re.compile(r"\b\w+(?:\(\))?\s*\.\s*(?:Skip|Skipf|SkipNow)\b")},
    Language.RUST: {"#[ignore]": re.compile(r"#\s*\[\s*(?:ignore\b|cfg_attr\s*\(.*\bignore\b)")},
    Language.RUBY: {
        "xit/xdescribe/xcontext": re.compile(
            r"(?:(?<![\w.:])|(?<=RSpec\.))x(?:it|specify|example|describe|context|feature|scenario)\b"
        ),
        # `skip`, `skip "why"`, `skip("why")` (RSpec and minitest), `pending`; not `def skip`,
        # `skip = 1`, `pending.each`, `skip?`
        "skip/pending": re.compile(r"(?<![\w.:@$])(?<!def )(?:skip|pending)\b(?![?!]|\s*(?:[=.]|:[^:]))"),
        # `it "x", skip: true`, `it "x", :skip`, `:pending => "why"`; not `let(:pending)`
        "skip: metadata": re.compile(
            r",\s*:(?:skip|pending)\b|\b(?:skip|pending)\s*:(?!\s*(?::|false\b|nil\b))"
        ),
    },
    Language.JAVA: {
        # PHPUnit
        "markTestSkipped/markTestIncomplete": re.compile(r"\bmarkTest(?:Skipped|Incomplete)\s*\("),
        "#[RequiresPhp...]": re.compile(r"#\[\s*(?:\\?PHPUnit\\Framework\\Attributes\\)?Requires\w*\s*\("),
        # xUnit, NUnit, MSTest
        "[Fact(Skip = ...)]": re.compile(
            r"\[\s*(?:\w+\s*\(.*\)\s*,\s*)*\w*(?:Fact|Theory)\w*\s*\(.*\bSkip\s*="
        ),
        "@Disabled/@Ignore": re.compile(r"@\s*(?:org\.junit\.(?:jupiter\.api\.)?)?(?:Disabled\w*|Ignore)\b"),
        "Assume.assumeTrue(false)": re.compile(r"\bassume(?:True|That)\s*\(\s*false\s*\)"),
        "@EnabledIf/@DisabledIf": re.compile(r"@\s*(?:Enabled|Disabled)(?:If|On|For)\w*\b"),
        "an assumption on the environment": re.compile(
            r"\bassume\w*\s*\(.*\b(?:getenv|getProperty|System\s*\.\s*env)\b"
        ),
    },
}
# Markers that are also common names outside tests (SQLite-net's and others' `[Ignore]` on a
# property): counted in test files only.
_SKIP_IN_TESTS: dict[Language, dict[str, re.Pattern[str]]] = {
    Language.JAVA: {
        # NUnit, MSTest: `[Ignore]`, `[Ignore("why")]`, `[Test, Explicit]`
        "[Ignore]/[Explicit]": re.compile(
            r"\[\s*(?:[\w.]+\s*(?:\(.*?\))?\s*,\s*)*(?:Ignore|Explicit)(?:Attribute)?\s*(?:\(|\]|,)"
        ),
    },
}
# A test API member named in a string: `getattr(pytest.mark, "skip")`, `it["only"]`, `Reflect.get(it, "skip")`.
_BY_NAME: dict[Language, dict[str, re.Pattern[str]]] = {
    Language.PYTHON: {
        "a skip looked up by name": re.compile(
            r"""\b(?:getattr|__getattr__|__getattribute__)\s*\(\s*(?:[\w.]+\s*,\s*)?["'](?:skip|skipif|xfail|skipTest|"""
            r"""importorskip)["']"""
            r"""|\bgetattr\s*\(\s*(?:pytest|unittest|[\w.]*mark)\s*,\s*(?!["'][A-Za-z_]\w*["']\s*\))"""
        )
    },
}
_JS_API = ("it", "test", "describe", "context", "suite", "specify", "bench")
_JS_ALIAS = re.compile(
    r"\b(?:it|test|describe|context|suite|specify)\s+as\s+(\w+)"
    r"|\b(?:const|let|var)\s+(\w+)\s*=\s*(?:it|test|describe|context|suite|specify)\s*[;\n]"
)
_ONLY: dict[Language, dict[str, re.Pattern[str]]] = {
    Language.JS: {
        "it.only/describe.only/test.only": re.compile(
            r"\b(?:it|test|describe|context|suite|specify)(?:\s*\.\s*\w+)*?\s*\.\s*only\b"
        ),
        "fit/fdescribe": re.compile(r"(?<![\w.$])(?:fit|fdescribe|ftest)\s*\("),
    },
    Language.RUBY: {
        "fit/fdescribe/fcontext": re.compile(
            r"(?:(?<![\w.:])|(?<=RSpec\.))f(?:it|specify|example|describe|context|feature|scenario)\b"
        ),
        # `it "x", focus: true`, `describe X, :focus`; minitest-focus's `focus` before a test
        "focus: true": re.compile(
            r",\s*:focus\b|\bfocus\s*:\s*true\b|(?<![\w.:@$])(?<!def )focus\b(?![?!]|\s*(?:[=.(]|:[^:]))"
        ),
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
        yield from _skips(file)
        only = _ONLY.get(file.language, {})
        if file.language is Language.JS:
            for rule, patterns, view in _js_patterns(file):
                for hit in new_occurrences(file, patterns, view):
                    yield finding(
                        rule,
                        f"A {'focus' if rule == 'only-marker-added' else 'skip'} marker is added through "
                        f"{hit.kind}: {'every other test' if rule == 'only-marker-added' else 'the test'} would "
                        "stop running.",
                        file.path,
                        hit.line.number,
                    )
        for hit in new_occurrences(file, only, code, _marker_hunks(file)):
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


def _skips(file: FileDiff) -> Iterator[Finding]:
    if file.language is Language.PYTHON:
        resolved = _python_skips(file)
        if resolved is not None:
            yield from resolved
            return
    hunks = _marker_hunks(file)
    for hit in new_occurrences(file, _SKIP.get(file.language, {}), code, hunks):
        yield _skip(file, hit.kind, hit.line.number)
    for hit in new_occurrences(file, _SKIP_IN_TESTS.get(file.language, {}), code, file.test_hunks):
        yield _skip(file, hit.kind, hit.line.number)
    for hit in new_occurrences(file, _BY_NAME.get(file.language, {}), _lookup, hunks):
        yield _skip(file, hit.kind, hit.line.number)


def _marker_hunks(file: FileDiff) -> list[Hunk] | None:
    """Where a skip or focus marker is looked for: None for every hunk.

    `x.Skip()` is a common method name in Go: only a test's `t.Skip` counts, in _test.go files
    and in helpers that take a `testing.TB`. Ruby's `skip`, `pending` and `focus` are plain words
    (a Rails `skip` option, a `pending` state): only in test files."""
    if (file.language is Language.GO and not _uses_testing(file)) or file.language is Language.RUBY:
        return file.test_hunks
    return None


_LOOKUP_IN_CODE = re.compile(r"\b(?:getattr|__getattr__|__getattribute__|Reflect\s*\.\s*get)\s*\(|\[")


def _lookup(view: View) -> str:
    """The line with its strings, when its code (not a string) looks a name up; else nothing."""
    return view.bare if _LOOKUP_IN_CODE.search(view.code) else ""


def _skip(file: FileDiff, kind: str, line: int) -> Finding:
    return finding(
        "skip-marker-added",
        f"A {kind} marker is added: the test would stop running instead of passing.",
        file.path,
        line,
    )


def _python_skips(file: FileDiff) -> list[Finding] | None:
    """Skips counted on whole modules when both sides are known and parse; None otherwise."""
    old_text = "" if file.status == "added" else file.old_text
    if old_text is None or file.new_text is None:
        return None
    before, after = pyskips.skips(old_text), pyskips.skips(file.new_text)
    if before is None or after is None:
        return None
    if len(after) <= len(before):
        return []
    added = {line.number for line in file.added}
    fresh = [n for n in after if n in added] or after
    return [_skip(file, "pytest or unittest skip (resolved through imports and aliases)", fresh[0])]


def _uses_testing(file: FileDiff) -> bool:
    text = file.new_text if file.new_text is not None else "\n".join(li.text for li in file.lines)
    return bool(re.search(r'"testing"|\btesting\s*\.\s*(?:TB|T|B|F)\b', text))


def _js_patterns(file: FileDiff) -> list[tuple[str, dict[str, re.Pattern[str]], ViewOf]]:
    """Skip and focus through the test API and its aliases: by member, by string, by destructuring."""
    text = file.new_text if file.new_text is not None else "\n".join(li.view.code for li in file.lines)
    aliases = {name for match in _JS_ALIAS.finditer(text) for name in match.groups() if name}
    api = "|".join(sorted({*_JS_API, *aliases}))
    receiver = rf"(?<![\w.$])(?:{api})(?:\s*\.\s*\w+)*?"
    result: list[tuple[str, dict[str, re.Pattern[str]], ViewOf]] = []
    for rule, names in (("skip-marker-added", "skip|skipIf|fails|todo"), ("only-marker-added", "only")):
        result.append(
            (
                rule,
                {
                    "a member of the test API": re.compile(rf"{receiver}\s*\.\s*(?:{names})\b"),
                    "destructuring": re.compile(
                        rf"\b(?:const|let|var)\s*\{{[^}}]*\b(?:{names})\b[^}}]*\}}\s*=\s*(?:{api})\b"
                    ),
                },
                code,
            )
        )
        result.append(
            (
                rule,
                {
                    "a member looked up by name": re.compile(
                        rf"""{receiver}\s*\[\s*["'`](?:{names})["'`]\s*\]"""
                        rf"""|\bReflect\s*\.\s*get\s*\(\s*(?:{api})\s*,\s*["'`](?:{names})["'`]"""
                    )
                },
                _lookup,
            )
        )
    computed = re.compile(
        rf"""{receiver}\s*\[\s*(?!["'`](?:only|skip|each|concurrent|sequential)["'`]\s*\])[^\]]"""
    )
    result.append(("skip-marker-added", {"a computed member of the test API": computed}, _lookup))
    return result
