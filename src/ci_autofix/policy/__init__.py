"""The patch policy: rules every proposed diff must pass before anyone is asked to approve it.

`check_diff(diff)` parses a unified diff (as `ci_autofix.git.Git.diff`, `git diff` or GitHub's
`.diff` produce it) and returns a `Verdict`: `block` findings stop the fix (halt `policy`),
`flag` findings are delivered but called out at the top of the PR. The rules, their codes and
severities are in `table.RULES`; each family of rules lives in one module of `checks/`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

from unidiff.errors import UnidiffParseError

from ci_autofix.paths import DEFAULT_PROTECTED, protected_globs
from ci_autofix.policy import contents
from ci_autofix.policy.checks import (
    assertions,
    collection,
    dependencies,
    exits,
    files,
    infra,
    markers,
    risky,
    vacuous,
)
from ci_autofix.policy.checks.limits import Limits
from ci_autofix.policy.diff import FileDiff, parse
from ci_autofix.policy.model import Finding, Severity, Verdict, VerdictStatus
from ci_autofix.policy.source import is_test_file
from ci_autofix.policy.table import RULES, Rule, finding, rules_markdown

__all__ = [
    "DEFAULT_PROTECTED",
    "RULES",
    "Finding",
    "Rule",
    "Severity",
    "Verdict",
    "VerdictStatus",
    "check_diff",
    "rules_markdown",
    "test_paths",
]

Family = Callable[[Sequence[FileDiff], Limits], Iterator[Finding]]
FAMILIES: tuple[Family, ...] = (
    files.check,
    markers.check,
    assertions.check,
    exits.check,
    vacuous.check,
    collection.check,
    infra.check,
    risky.check,
    dependencies.check,
)


def check_diff(
    diff: str | bytes,
    *,
    protected: Sequence[str] = DEFAULT_PROTECTED,
    max_changed_lines: int = 200,
    max_files: int = 10,
    read_blob: contents.BlobReader | None = None,
) -> Verdict:
    """Every rule of the policy applied to `diff`; an unparseable diff is blocked, not an error.

    `read_blob(oid)` may return the text of a blob the diff names (`index <old>..<new>`); the
    rules then see whole files (Python skips resolved through imports and aliases, the section
    of a configuration line). Without it, or when it returns None, they work from the hunks.
    """
    limits = Limits(
        protected=protected_globs(protected),
        max_changed_lines=max_changed_lines,
        max_files=max_files,
    )
    try:
        parsed = parse(diff)
    except (UnidiffParseError, UnicodeDecodeError) as exc:
        return Verdict(
            [
                finding(
                    "unparseable-diff",
                    f"The diff could not be parsed ({_first_line(exc)}); nothing in it could be checked.",
                )
            ]
        )
    if not parsed and diff.strip():
        return Verdict(
            [
                finding(
                    "unparseable-diff",
                    "The input is not empty but holds no file diff; nothing in it could be checked.",
                )
            ]
        )
    contents.attach(parsed, read_blob)
    found = [f for family in FAMILIES for f in family(parsed, limits)]
    first: dict[tuple[str, str | None, int | None], Finding] = {}
    for each in map(_printable, found):
        first.setdefault((each.code, each.path, each.line), each)
    return Verdict().with_findings(list(first.values()))


def test_paths(diff: str | bytes, *, read_blob: contents.BlobReader | None = None) -> list[str]:
    """The test files (with their data: snapshots, golden files, fixtures) and test configuration
    files `diff` changes (both paths of a rename);
    empty when the diff cannot be parsed (the policy blocks it then)."""
    try:
        parsed = parse(diff)
    except (UnidiffParseError, UnicodeDecodeError):
        return []
    contents.attach(parsed, read_blob)
    paths: list[str] = []
    for file in parsed:
        sides = [p for p in (file.old_path, file.path) if p]
        if any(is_test_file(p) for p in sides) or infra.is_test_infrastructure(file):
            paths += sides
    return list(dict.fromkeys(paths))


def _printable(found: Finding) -> Finding:
    """Paths decoded with surrogateescape can hold lone surrogates: make them printable."""
    if found.path is None:
        return found
    path = found.path.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    return Finding(found.code, found.severity, found.message, path, found.line)


def _first_line(exc: Exception) -> str:
    return (str(exc).splitlines() or [type(exc).__name__])[0][:200]
