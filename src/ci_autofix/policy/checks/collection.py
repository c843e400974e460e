"""Tests that stop being collected without their bodies changing (block): a test definition gone
from the whole diff (renamed out of the runner's pattern, its `#[test]` or `@Test` removed), and
a row gone from a parametrized table (`parametrize`, `test.each`, a Go table, `@CsvSource`).

Definitions are counted over the whole diff, so a test moved from one file to another, or a
test file renamed within the pattern, is not a removal.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator, Sequence

from ci_autofix.policy.checks.limits import Limits
from ci_autofix.policy.diff import FileDiff, Line
from ci_autofix.policy.model import Finding
from ci_autofix.policy.source import Language, is_collected_test
from ci_autofix.policy.table import finding

_DEFINITIONS: dict[Language, re.Pattern[str]] = {
    Language.PYTHON: re.compile(r"^\s*(?:async\s+)?def\s+test\w*\s*\(|^\s*class\s+Test\w*\s*[(:]"),
    Language.JS: re.compile(
        r"(?<![\w.$])[xf]?(?:it|test|specify)(?:\s*\.\s*\w+(?:\s*\([^)]*\))?)*\s*\(\s*[\"'`]"
        r"|(?<![\w.$])(?:it|test|specify)\s*\[[^\]]*\]\s*\(\s*[\"'`]"
    ),
    Language.GO: re.compile(
        r"^\s*func\s+(?:Test|Benchmark|Fuzz|Example)\w*\s*\(\s*\w*\s*\*?\s*(?:testing\.\w+)?"
    ),
    Language.RUST: re.compile(r"#\s*\[\s*(?:\w+::)*(?:test|rstest|test_case|case)\b"),
    Language.JAVA: re.compile(
        r"@(?:Test|ParameterizedTest|RepeatedTest|TestFactory|TestTemplate)\b|\bpublic\s+void\s+test\w*\s*\("
    ),
}
_LITERAL = re.compile(
    r""""(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*'|`[^`]*`|(?<![\w.])-?\d[\d_]*(?:\.\d+)?\b"""
    r"|\b(?:True|False|None|true|false|nil|null)\b"
)
_ROW = re.compile(r"^\s*[(\[{]?\s*◊(?:\s*(?:,|=>|:)\s*◊)*\s*[)\]}]?\s*,?\s*$")


def check(files: Sequence[FileDiff], limits: Limits) -> Iterator[Finding]:
    yield from _definitions(files)
    for file in files:
        if file.status != "deleted" and file.test_hunks:
            yield from _rows(file)


def _definitions(files: Sequence[FileDiff]) -> Iterator[Finding]:
    lost: Counter[Language] = Counter()
    first: dict[Language, tuple[FileDiff, Line]] = {}
    for file in files:
        pattern = _DEFINITIONS.get(file.language)
        if pattern is None or file.status == "deleted":
            continue  # a deleted test file is test-file-deleted
        if (
            file.status == "renamed"
            and file.old_path
            and not is_collected_test(file.path)
            and is_collected_test(file.old_path)
        ):
            continue  # reported as test-file-renamed-away
        removed = [li for hunk in file.test_hunks for li in hunk.removed if pattern.search(li.view.code)]
        added = [li for hunk in file.test_hunks for li in hunk.added if pattern.search(li.view.code)]
        lost[file.language] += len(removed) - len(added)
        if removed and file.language not in first:
            kept = Counter(" ".join(li.view.code.split()) for li in added)
            gone = [li for li in removed if not kept[" ".join(li.view.code.split())]] or removed
            first[file.language] = (file, gone[0])
    for language, count in lost.items():
        if count > 0 and language in first:
            file, line = first[language]
            yield finding(
                "test-removed",
                f"{count} test definition(s) fewer in the whole diff (this one is renamed or unmarked at "
                f"line {line.number} of the old file): the runner would no longer collect them.",
                file.path,
                line.number,
            )


def _shape(line: Line) -> str:
    return _LITERAL.sub("◊", line.view.bare)


def _rows(file: FileDiff) -> Iterator[Finding]:
    removed = [li for hunk in file.test_hunks for li in hunk.removed if _ROW.match(_shape(li))]
    added = [li for hunk in file.test_hunks for li in hunk.added if _ROW.match(_shape(li))]
    if len(removed) > len(added):
        yield finding(
            "test-case-removed",
            f"{len(removed) - len(added)} row(s) of a test table are removed: those cases would no longer run.",
            file.path,
            removed[0].number,
        )
