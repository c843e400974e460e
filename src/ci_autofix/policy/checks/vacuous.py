"""Assertions that can no longer fail (block): `or True`, a value compared with itself, a failure
caught and dropped, a check under a guard that is never true, a failure turned into a log line,
and an expected exception widened to any exception.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from ci_autofix.policy.checks.assertions import ASSERTIONS, change_blocks
from ci_autofix.policy.checks.limits import Limits
from ci_autofix.policy.diff import FileDiff, Hunk, Line
from ci_autofix.policy.model import Finding
from ci_autofix.policy.source import Language
from ci_autofix.policy.table import finding

_ALWAYS_TRUE = re.compile(r"\bor\s+(?:True|1)\b|\|\|\s*(?:true|1|!0)\b")
_DEAD_GUARD = re.compile(
    r"^\s*(?:\}\s*else\s+)?(?:if|while)\s*\(?\s*(?:False|false|0|None|null|undefined|nil|!1|!true|not\s+True)\s*"
    r"(?:\)|:|\{|&&|\band\b)"
)
_CAUGHT = re.compile(
    r"\bexcept\b[^:]*\bAssertionError\b|\bcatch\s*\(\s*(?:final\s+)?(?:[\w.]+\s*\|\s*)*(?:[\w.]*\.)?"
    r"(?:AssertionError|AssertionFailedError|ComparisonFailure|Throwable)\b|\bcatch_unwind\s*\("
)
_EMPTY_CATCH = re.compile(r"\bcatch\s*(?:\(\s*\w*\s*\))?\s*\{\s*\}")
_LOGS = re.compile(
    r"\.\s*(?:Log|Logf)\s*\(|\bconsole\s*\.\s*(?:log|warn|error|info|debug)\s*\(|(?<![\w.])print\s*\("
    r"|\blogg(?:ing|er)\s*\.\s*\w+\s*\(|\be?println!\s*\(|\bSystem\s*\.\s*(?:out|err)\s*\.\s*print"
)
_SELF_CALLS = re.compile(
    r"\b(?:assertEqual|assertEquals|assertIs|assertSame|assert_equal|assert_eq!|assert_ne!|equal|strictEqual|"
    r"deepEqual|deepStrictEqual|Equal|EqualValues|DeepEqual|assertArrayEquals)\s*\("
)
_EXPECT_SELF = re.compile(r"\bexpect\s*\(")
_GO_SELF = re.compile(r"\bif\s+!?\s*([\w.\[\]()]+)\s*(?:==|!=)\s*([\w.\[\]()]+)\s*\{")
_PY_SELF = re.compile(r"^\s*assert\s+(.+?)\s*(?:==|!=|\bis\b|<=|>=)\s*(.+?)\s*(?:,.*)?$")

# (broad, specific) forms of "this must raise"
_RAISES: dict[Language, tuple[re.Pattern[str], re.Pattern[str]]] = {
    Language.PYTHON: (
        re.compile(r"\b(?:raises|assertRaises)\s*\(\s*(?:builtins\.)?(?:Exception|BaseException)\s*[,)]"),
        re.compile(
            r"\b(?:raises|assertRaises)\s*\(\s*(?!(?:builtins\.)?(?:Exception|BaseException)\s*[,)])[\w.(]"
        ),
    ),
    Language.JS: (
        re.compile(
            r"\.\s*(?:toThrow|toThrowError|rejects\s*\.\s*toThrow)\s*\(\s*\)|\bassert\s*\.\s*throws\s*\(\s*[^,]*\)"
        ),
        re.compile(r"\.\s*(?:toThrow|toThrowError)\s*\(\s*[^)\s]"),
    ),
    Language.JAVA: (
        re.compile(r"\bassertThrows\s*\(\s*(?:java\.lang\.)?(?:Exception|Throwable|RuntimeException)\.class"),
        re.compile(
            r"\bassertThrows\s*\(\s*(?!(?:java\.lang\.)?(?:Exception|Throwable|RuntimeException)\.class)\w"
        ),
    ),
    Language.RUST: (
        re.compile(r"#\s*\[\s*should_panic\s*\]"),
        re.compile(r"#\s*\[\s*should_panic\s*\(\s*expected"),
    ),
}


def check(files: Sequence[FileDiff], limits: Limits) -> Iterator[Finding]:
    for file in files:
        tests = file.test_hunks
        if file.status == "deleted" or not tests or file.language not in ASSERTIONS:
            continue
        for hunk in tests:
            yield from _hunk(file, hunk)
        yield from _widened(file, tests)


def _hunk(file: FileDiff, hunk: Hunk) -> Iterator[Finding]:
    pattern = ASSERTIONS[file.language]
    removed_code = {" ".join(line.view.code.split()) for line in hunk.removed}
    new_side = hunk.side(new=True)
    for index, line in enumerate(new_side):
        if not line.added or " ".join(line.view.code.split()) in removed_code:
            continue
        code = line.view.code
        asserts = bool(pattern.search(code))
        reason = None
        if asserts and _ALWAYS_TRUE.search(code):
            reason = "is joined with `or True`, so it always holds"
        elif (asserts or _GO_SELF.search(code)) and _compares_itself(line):
            reason = "compares a value with itself"
        elif file.language is Language.PYTHON and _asserts_a_tuple(line):
            reason = "asserts a non-empty tuple, which is always true"
        elif _DEAD_GUARD.search(code) and _asserts_within(new_side[index + 1 : index + 6], pattern, line):
            reason = "is put under a condition that is never true"
        elif _CAUGHT.search(code):
            reason = "has its failure caught and dropped"
        elif _EMPTY_CATCH.search(code) and _asserts_within(new_side[max(0, index - 8) : index], pattern):
            reason = "has its failure caught by an empty catch block"
        if reason:
            yield finding(
                "assertion-vacuous",
                f"An assertion {reason}: the test can no longer fail.",
                file.path,
                line.number,
            )
    for removed, added in change_blocks(hunk):
        lost = sum(len(pattern.findall(li.view.code)) for li in removed)
        gained = sum(len(pattern.findall(li.view.code)) for li in added)
        logs = [li for li in added if _LOGS.search(li.view.code)]
        if lost > gained and logs:
            yield finding(
                "assertion-vacuous",
                "An assertion is turned into a log line: the failure is printed and the test passes.",
                file.path,
                logs[0].number,
            )


def _asserts_within(lines: Sequence[Line], pattern: re.Pattern[str], same: Line | None = None) -> bool:
    return any(pattern.search(li.view.code) for li in [*([same] if same else []), *lines])


def _compares_itself(line: Line) -> bool:
    text = line.view.bare
    if _PY_SELF.match(text):
        condition = _arguments(text.split("assert", 1)[1] + ")", 0)[:1]
        sides = re.split(r"==|!=|\bis\b|<=|>=", condition[0]) if condition else []
        if len(sides) == 2 and sides[0].strip() and _norm(sides[0]) == _norm(sides[1]):
            return True
    for call in _SELF_CALLS.finditer(text):
        args = _arguments(text, call.end())
        if len(args) >= 2 and args[0] and _norm(args[0]) == _norm(args[1]):
            return True
    for call in _EXPECT_SELF.finditer(text):
        subject = _arguments(text, call.end())
        rest = text[call.end() :]
        matcher = re.search(r"\)\s*\.\s*(?:not\s*\.\s*)?(?:toBe|toEqual|toStrictEqual)\s*\(", rest)
        if subject and matcher:
            other = _arguments(rest, matcher.end())
            if other and _norm(other[0]) == _norm(subject[0]):
                return True
    go = _GO_SELF.search(text)
    return bool(go and _norm(go.group(1)) == _norm(go.group(2)))


_PY_TUPLE = re.compile(r"^\s*assert\s*\(")


def _asserts_a_tuple(line: Line) -> bool:
    """`assert (x == 1, "message")`: the parenthesised part is a tuple of two or more, always true."""
    text = line.view.bare
    match = _PY_TUPLE.match(text)
    if not match:
        return False
    end = _closing(text, match.end())
    return end is not None and len(_arguments(text, match.end())) >= 2 and not text[end + 1 :].strip()


def _closing(text: str, start: int) -> int | None:
    """The index of the `)` that closes a `(` ending just before `start`."""
    depth = 0
    for index in range(start, len(text)):
        char = text[index]
        if char in "([{":
            depth += 1
        elif char in ")]}":
            if depth == 0:
                return index
            depth -= 1
    return None


def _arguments(text: str, start: int) -> list[str]:
    """The top-level arguments of a call whose `(` ends just before `start`."""
    depth = 0
    current: list[str] = []
    args: list[str] = []
    for char in text[start:]:
        if char in "([{":
            depth += 1
        elif char in ")]}":
            if depth == 0:
                args.append("".join(current))
                return [a.strip() for a in args]
            depth -= 1
        elif char == "," and depth == 0:
            args.append("".join(current))
            current = []
            continue
        current.append(char)
    return []


def _norm(text: str) -> str:
    return "".join(text.split()).strip("()")


def _widened(file: FileDiff, hunks: Sequence[Hunk]) -> Iterator[Finding]:
    forms = _RAISES.get(file.language)
    if forms is None:
        return
    broad, specific = forms
    added = [li for hunk in hunks for li in hunk.added]
    removed = [li for hunk in hunks for li in hunk.removed]

    def count(lines: list[Line], pattern: re.Pattern[str]) -> int:
        return sum(
            len(pattern.findall(li.view.code if file.language is not Language.RUST else li.view.bare))
            for li in lines
        )

    if count(added, broad) > count(removed, broad) and count(removed, specific) > count(added, specific):
        where = next(
            li
            for li in added
            if broad.search(li.view.code if file.language is not Language.RUST else li.view.bare)
        )
        yield finding(
            "assertion-widened",
            "An expected exception is widened to any exception: the test passes whatever goes wrong.",
            file.path,
            where.number,
        )
