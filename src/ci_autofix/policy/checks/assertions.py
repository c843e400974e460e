"""What tests check: assertions removed (block), tests emptied (block), expected values changed (flag)."""

from __future__ import annotations

import ast
import re
import textwrap
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from ci_autofix.policy.checks.limits import Limits
from ci_autofix.policy.diff import FileDiff, Hunk, Line
from ci_autofix.policy.model import Finding
from ci_autofix.policy.source import Language
from ci_autofix.policy.table import finding

ASSERTIONS: dict[Language, re.Pattern[str]] = {
    Language.PYTHON: re.compile(
        r"(?:^|;)\s*assert\b|\bself\s*\.\s*(?:assert|fail)\w*\s*\(|\bpytest\s*\.\s*(?:raises|warns|approx|fail)\s*\("
        r"|\bassert_\w+\s*\("
    ),
    Language.JS: re.compile(
        r"\bexpect\s*\(|\bassert\b\s*(?:\.\s*\w+\s*)?\(|\.\s*should\b"
        r"|\bt\s*\.\s*(?:is|not|deepEqual|true|false|throws|equal|ok|assert)\s*\("
    ),
    Language.GO: re.compile(
        r"\b\w+\s*\.\s*(?:Error|Errorf|Fatal|Fatalf|Fail|FailNow)\s*\("
        r"|\b(?:assert|require)\s*\.\s*\w+\s*\("
    ),
    Language.RUST: re.compile(r"\b(?:debug_)?assert(?:_eq|_ne|_matches)?\s*!|#\s*\[\s*should_panic"),
    # JUnit, PHPUnit (`$this->assertSame(`), xUnit/NUnit/MSTest (`Assert.Equal(`)
    Language.JAVA: re.compile(
        r"\bassert\w*\s*\(|\bassert\s+[^=\s]|\bfail\s*\(|\bverify\s*\(|\bAssert\s*\.\s*\w+\s*\("
    ),
    # RSpec (`expect(x).to`, `is_expected.to`), minitest (`assert_equal`, `refute_nil`, `_(x).must_equal`)
    Language.RUBY: re.compile(
        r"\bexpect\s*[({]|\bis_expected\b|\b(?:assert|refute)(?:_\w+)?\b(?!\s*=[^=])|\.\s*(?:must|wont)_\w+"
    ),
}

# Assertions that cannot fail do not replace one that could.
_TRIVIAL = re.compile(
    r"(?:^|;)\s*assert\s+(?:True|1|not\s+(?:False|None|0))\s*(?:,.*)?$|\bassert(?:True)?\s*\(\s*(?:true|True|1)\s*\)"
    r"|\bexpect\s*\(\s*(?:true|1)\s*\)\s*\.\s*(?:toBe|toEqual|toBeTruthy)\s*\(\s*(?:true|1)?\s*\)"
    r"|\bassert!\s*\(\s*true\s*\)|\bassert\s*\.\s*ok\s*\(\s*(?:true|1)\s*\)"
)
_EXPECTATION = re.compile(r"(?i)\b(?:expected|expect|want|wanted|exp|golden)\w*\s*(?::=|=|:)")
_LITERAL = re.compile(
    r""""(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*'|`[^`]*`"""
    r"|(?<![\w.])-?\d[\d_]*(?:\.\d+)?(?:[eE][+-]?\d+)?\b"
    r"|\b(?:True|False|None|true|false|nil|null|undefined)\b"
)
_COMPARISON = re.compile(r"[=!]==?|\bif\b.*[<>]")
_TABLE_ROW = re.compile(r"^[\s◊,()\[\]{}:=>|&*]*$")

_NEUTRAL = re.compile(
    r"^(?:pass|\.\.\.|return;?|return None|return nil|return Ok\(\(\)\);?|Ok\(\(\)\)|"
    r"return\s+(?:null|undefined);?)$"
)
_CLOSER = re.compile(r"^[\])};,\s]*$")
_DOCSTRING = re.compile(r"""^[rRbBuUfF]{0,2}["']*$""")
_PY_HEADER = re.compile(r"^(\s*)(?:async\s+)?def\s+test\w*\s*\(")
_JS_HEADER = re.compile(r"\b(?:it|test|specify)(?:\s*\.\s*\w+)*\s*\(.*\{")
_GO_HEADER = re.compile(r"^\s*func\s+(?:Test|Benchmark|Fuzz)\w*\s*\(.*\{")
_FN_HEADER = re.compile(
    r"^\s*(?:(?:pub(?:\([^)]*\))?|async|public|protected|private|static|final|suspend|override)\s+)*"
    r"(?:fn|void|fun)\s+(?:\w+|`[^`]*`)\s*\("
)
_TEST_ATTRIBUTE = re.compile(
    r"#\s*\[\s*(?:\w+::)*(?:test|rstest|test_case)\b|@(?:Test|ParameterizedTest|"
    r"RepeatedTest|TestFactory|Theory)\b"
)


def check(files: Sequence[FileDiff], limits: Limits) -> Iterator[Finding]:
    for file in files:
        hunks = file.test_hunks
        if file.status == "deleted" or not hunks or file.language not in ASSERTIONS:
            continue
        yield from _removed(file, hunks)
        for hunk in hunks:
            yield from _emptied(file, hunk)
            yield from _expected(file, hunk)


def _count(lines: Sequence[Line], pattern: re.Pattern[str]) -> int:
    return sum(len(pattern.findall(line.view.code)) for line in lines)


def _removed(file: FileDiff, hunks: Sequence[Hunk]) -> Iterator[Finding]:
    pattern = ASSERTIONS[file.language]
    removed = [line for hunk in hunks for line in hunk.removed]
    lost = _count(removed, pattern)
    added = [line for hunk in hunks for line in hunk.added]
    gained = _count(added, pattern) - sum(len(_TRIVIAL.findall(line.view.code)) for line in added)
    if lost > gained:
        first = next(line for line in removed if pattern.search(line.view.code))
        yield finding(
            "assertion-removed",
            f"{lost} assertion(s) removed and only {gained} added in this test "
            f"file (first removed at line {first.number} of the old file): the tests would check less.",
            file.path,
            first.number,
        )


# ---- emptied tests ---------------------------------------------------------------------------------


@dataclass
class _Function:
    key: str
    lines: list[Line]  # header to end, as far as the hunk shows
    body: list[Line]
    complete: bool


def _statements(func: _Function, language: Language) -> list[Line]:
    result = []
    for line in func.body:
        text = line.view.code.strip()
        if not text or _CLOSER.match(text) or (language is Language.PYTHON and _DOCSTRING.match(text)):
            continue
        result.append(line)
    return result


def _neutral(line: Line) -> bool:
    return bool(_NEUTRAL.match(line.view.code.strip()))


def _functions(side: list[Line], language: Language) -> list[_Function]:
    found = []
    for index, line in enumerate(side):
        if language is Language.PYTHON:
            match = _PY_HEADER.match(line.view.code)
            if match:
                found.append(_python_function(side, index, len(match.group(1).expandtabs())))
        elif _is_brace_header(side, index, language):
            found.append(_brace_function(side, index))
    return found


def _is_brace_header(side: list[Line], index: int, language: Language) -> bool:
    code = side[index].view.code
    if language is Language.JS:
        return bool(_JS_HEADER.search(code))
    if language is Language.GO:
        return bool(_GO_HEADER.match(code))
    if language in (Language.RUST, Language.JAVA) and _FN_HEADER.match(code):
        before = side[max(0, index - 3) : index]
        return any(_TEST_ATTRIBUTE.search(li.view.code) for li in before)
    return False


def _python_function(side: list[Line], index: int, indent: int) -> _Function:
    start = index
    while start < len(side) and not side[start].view.code.rstrip().endswith(":"):
        start += 1
    body: list[Line] = []
    for line in side[start + 1 :]:
        code = line.view.code
        if code.strip() and len(code) - len(code.lstrip()) <= indent and not _DOCSTRING.match(code.strip()):
            return _Function(_key(side[index]), side[index : start + 1 + len(body)], body, True)
        body.append(line)
    return _Function(_key(side[index]), side[index:], body, False)


def _brace_function(side: list[Line], index: int) -> _Function:
    depth = 0
    opened = False
    for position in range(index, len(side)):
        code = side[position].view.code
        for char in code:
            if char == "{":
                depth += 1
                opened = True
            elif char == "}":
                depth -= 1
        if opened and depth <= 0:
            return _Function(_key(side[index]), side[index : position + 1], side[index + 1 : position], True)
    return _Function(_key(side[index]), side[index:], side[index + 1 :], False)


_GUARD_ONE_LINE = re.compile(r"^(?:if\b.*(?::|\)|\{)\s*(?:return\b[^;]*;?|pass)\s*\}?\s*;?$)")
_GUARD_OPEN = re.compile(r"^if\b.*(?::|\{|\))$")


def _guard(statements: list[Line]) -> Line | None:
    """An added `if ...: return` (or `if (...) { return; }`) as a test's first statement, with code after it."""
    if not statements or not statements[0].added:
        return None
    first = statements[0].view.code.strip()
    if _GUARD_ONE_LINE.match(first) and len(statements) > 1:
        return statements[0]
    if _GUARD_OPEN.match(first) and len(statements) > 2 and _neutral(statements[1]):
        first_indent = len(statements[0].text) - len(statements[0].text.lstrip())
        rest = [s for s in statements[2:] if len(s.text) - len(s.text.lstrip()) <= first_indent]
        if rest and any(not _neutral(s) for s in rest):
            return statements[0]
    return None


def _return_before_checks(func: _Function, statements: list[Line]) -> Line | None:
    """An added `return` of the test itself (bare, or under an `if`) with assertions after it.

    Python only: a `return` inside a nested function, lambda or class belongs to that, and is not counted.
    """
    header_indent = _indent(func.lines[0])
    for index, line in enumerate(statements):
        if not line.added:
            continue
        text = line.view.code.strip()
        guarded = (
            bool(_GUARD_OPEN.match(text)) and index + 1 < len(statements) and _neutral(statements[index + 1])
        )
        bare_return = _neutral(line) and text.startswith("return")
        if not (bare_return or guarded or _GUARD_ONE_LINE.match(text)):
            continue
        owner = next(
            (
                s
                for s in reversed(statements[:index])
                if _indent(s) < _indent(line) and _OWNER.search(s.view.code)
            ),
            None,
        )
        if owner is not None and _indent(owner) > header_indent:
            continue  # the return of a nested function or class
        if any(_ASSERT_PY.search(s.view.code) for s in statements[index + 1 :]):
            return line
    return None


_OWNER = re.compile(r"^\s*(?:async\s+)?(?:def|class)\b|\blambda\b")
_ASSERT_PY = re.compile(r"(?:^|;)\s*assert\b|\bself\s*\.\s*assert\w*\s*\(|\bpytest\s*\.\s*raises\s*\(")


def _indent(line: Line) -> int:
    return len(line.text.expandtabs()) - len(line.text.expandtabs().lstrip())


def _key(line: Line) -> str:
    return " ".join(line.view.bare.split())


def _emptied(file: FileDiff, hunk: Hunk) -> Iterator[Finding]:
    old = {f.key: f for f in _functions(hunk.side(new=False), file.language)}
    for func in _functions(hunk.side(new=True), file.language):
        if not any(line.added for line in func.lines) and not any(line.removed for line in hunk.lines):
            continue
        statements = _statements(func, file.language)
        guard = _guard(statements) or (
            _return_before_checks(func, statements) if file.language is Language.PYTHON else None
        )
        if guard:
            yield finding(
                "test-emptied",
                "A guarded early return is added at the start of this test: when its condition holds "
                "(an environment variable, a flag, a constant) the test passes without running.",
                file.path,
                guard.number,
            )
            continue
        if (
            statements
            and _neutral(statements[0])
            and statements[0].added
            and any(not _neutral(s) for s in statements[1:])
        ):
            yield finding(
                "test-emptied",
                "An early return or pass is added at the start of this test, so the "
                "rest of its code never runs.",
                file.path,
                statements[0].number,
            )
            continue
        if not func.complete or any(not _neutral(s) for s in statements):
            continue
        before = old.get(func.key)
        if before is None:
            continue
        old_statements = _statements(before, file.language)
        if any(not _neutral(s) for s in old_statements) and any(line.removed for line in before.body):
            where = statements[0].number if statements else func.lines[0].number
            yield finding(
                "test-emptied",
                "This test's body is removed or replaced by pass/return: it would pass "
                "without checking anything.",
                file.path,
                where,
            )


# ---- expected values -------------------------------------------------------------------------------


def _shape(text: str) -> str:
    return " ".join(_LITERAL.sub("◊", text).split())


def _checks_a_value(line: Line, pattern: re.Pattern[str]) -> bool:
    bare = line.view.bare
    if pattern.search(line.view.code) or _EXPECTATION.search(bare) or _COMPARISON.search(line.view.code):
        return True
    shape = _shape(bare)
    return "◊" in shape and bool(_TABLE_ROW.match(shape))


def change_blocks(hunk: Hunk) -> Iterator[tuple[list[Line], list[Line]]]:
    removed: list[Line] = []
    added: list[Line] = []
    for line in [*hunk.lines, Line(" ", "", 0)]:
        if line.removed:
            if added:
                yield removed, added
                removed, added = [], []
            removed.append(line)
        elif line.added:
            added.append(line)
        else:
            if removed and added:
                yield removed, added
            removed, added = [], []


def _expected(file: FileDiff, hunk: Hunk) -> Iterator[Finding]:
    """Within one change (removed lines, then added ones), a value the old checks used is gone from the new."""
    pattern = ASSERTIONS[file.language]
    for removed, added in change_blocks(hunk):
        olds = [line for line in removed if _checks_a_value(line, pattern)]
        news = [line for line in added if _checks_a_value(line, pattern)]
        if not olds or not news:
            continue
        before = sum((_literals(line) for line in olds), Counter[str]())
        after = sum((_literals(line) for line in news), Counter[str]())
        gone = before - after
        if not gone or reflowed(removed, added, file.language):
            continue
        fresh = after - before
        where = next((line for line in news if _literals(line) - before), news[0])
        was = ", ".join(sorted(gone.elements()))
        now = ", ".join(sorted(fresh.elements())) or "(none)"
        yield finding(
            "expected-value-changed",
            f"An expected value changes (was {_short(was)}, now {_short(now)}): "
            "check that the new value is the intended behaviour and not just what the code happens to "
            "return.",
            file.path,
            where.number,
        )


_TRAILING_COMMA = re.compile(r",(?=[)\]}])")
_GROUPING = re.compile(r"[(),\\]")


def reflowed(removed: Sequence[Line], added: Sequence[Line], language: Language) -> bool:
    """The same tokens in the same order, only laid out differently (a formatter's work).

    Whitespace and line breaks are ignored, and so are the trailing commas formatters add; Python
    code is compared as syntax trees, so the parentheses black and ruff add around a long
    `assert` do not count either.
    """
    old = "".join("".join(li.view.bare.split()) for li in removed)
    new = "".join("".join(li.view.bare.split()) for li in added)
    if _TRAILING_COMMA.sub("", old) == _TRAILING_COMMA.sub("", new):
        return True
    if language is not Language.PYTHON or _GROUPING.sub("", old) != _GROUPING.sub("", new):
        return False  # more differs than parentheses and commas: not a layout change
    before, after = _python_tree(removed), _python_tree(added)
    return before is not None and before == after


def _python_tree(lines: Sequence[Line]) -> str | None:
    source = textwrap.dedent("\n".join(li.text for li in lines))
    try:
        return ast.dump(ast.parse(source))
    except (SyntaxError, ValueError):
        return None


def _literals(line: Line) -> Counter[str]:
    return Counter(match.group(0) for match in _LITERAL.finditer(line.view.bare))


def _short(text: str, limit: int = 40) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
