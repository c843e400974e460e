"""A unified diff as the rules see it: files, hunks and lines, each line with its source views.

Parsed with unidiff from text that kept its bytes (str, or bytes decoded with
surrogateescape, so lone CRs and invalid UTF-8 survive). Paths that git C-quotes (a tab, a
quote, a backslash or a newline in the name, or non-ASCII without `core.quotePath=false`)
are decoded; paths are given without their `a/` and `b/` prefixes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from unidiff.patch import PatchedFile, PatchSet

from ci_autofix.policy.source import Language, View, is_test_path, language_of, scan

LineKind = Literal["+", "-", " "]
Status = Literal["added", "deleted", "modified", "renamed"]

_RUST_TEST_CONTEXT = re.compile(r"#\[cfg\(test\)\]|#\[(?:\w+::)*test\b|\bmod\s+tests?\b")
_KINDS: dict[str, LineKind] = {"+": "+", "-": "-", " ": " "}
_MODE_SYMLINK = "120000"
_MODE_GITLINK = "160000"


@dataclass
class Line:
    kind: LineKind
    text: str  # without the line ending
    number: int  # in the new file for added and context lines, in the old file for removed ones
    view: View = field(default_factory=lambda: View("", "", ""))

    @property
    def added(self) -> bool:
        return self.kind == "+"

    @property
    def removed(self) -> bool:
        return self.kind == "-"


@dataclass
class Hunk:
    section: str
    lines: list[Line]
    in_tests: bool = False

    @property
    def added(self) -> list[Line]:
        return [line for line in self.lines if line.added]

    @property
    def removed(self) -> list[Line]:
        return [line for line in self.lines if line.removed]

    def side(self, new: bool) -> list[Line]:
        """The lines of the new file (context and added) or of the old file (context and removed)."""
        drop = "-" if new else "+"
        return [line for line in self.lines if line.kind != drop]


@dataclass
class FileDiff:
    path: str  # the new path; the old one for a deleted file
    old_path: str | None  # the old path when renamed
    status: Status
    binary: bool
    old_mode: str | None
    new_mode: str | None
    hunks: list[Hunk]
    language: Language
    is_test: bool

    @property
    def lines(self) -> list[Line]:
        return [line for hunk in self.hunks for line in hunk.lines]

    @property
    def added(self) -> list[Line]:
        return [line for hunk in self.hunks for line in hunk.added]

    @property
    def removed(self) -> list[Line]:
        return [line for hunk in self.hunks for line in hunk.removed]

    @property
    def test_hunks(self) -> list[Hunk]:
        return [hunk for hunk in self.hunks if hunk.in_tests]


def parse(diff: str | bytes) -> list[FileDiff]:
    """The files of a unified diff. Raises unidiff's `UnidiffParseError` when it is not one."""
    text = diff.decode("utf-8", "surrogateescape") if isinstance(diff, bytes) else diff
    return [_file(patched) for patched in PatchSet.from_string(text)]


def _file(patched: PatchedFile) -> FileDiff:
    source = _strip_prefix(patched.source_file)
    target = _strip_prefix(patched.target_file)
    if patched.is_added_file:
        status: Status = "added"
    elif patched.is_removed_file:
        status = "deleted"
    elif source is not None and target is not None and source != target:
        status = "renamed"
    else:
        status = "modified"
    path = (source if status == "deleted" else target) or source or target or ""
    language = language_of(path)
    old_is_test = source is not None and is_test_path(source)
    result = FileDiff(
        path=path,
        old_path=source if status == "renamed" else None,
        status=status,
        binary=bool(patched.is_binary_file),
        old_mode=_mode(patched, "source_mode"),
        new_mode=_mode(patched, "target_mode"),
        hunks=[],
        language=language,
        is_test=is_test_path(path) or (status == "deleted" and old_is_test),
    )
    seen_test_context = False
    for unihunk in patched:
        lines: list[Line] = []
        for uniline in unihunk:
            kind = _KINDS.get(uniline.line_type)
            if kind is None:
                continue  # "\ No newline at end of file"
            number = uniline.source_line_no if kind == "-" else uniline.target_line_no
            lines.append(Line(kind, _strip_eol(uniline.value), int(number or 0)))
        hunk = Hunk(str(unihunk.section_header or ""), lines)
        if language is Language.RUST and not result.is_test:
            seen_test_context = seen_test_context or bool(
                _RUST_TEST_CONTEXT.search(hunk.section)
                or any(_RUST_TEST_CONTEXT.search(li.text) for li in lines)
            )
            hunk.in_tests = seen_test_context
        else:
            hunk.in_tests = result.is_test
        _attach_views(hunk, language)
        result.hunks.append(hunk)
    return result


def _attach_views(hunk: Hunk, language: Language) -> None:
    for new in (False, True):
        side = hunk.side(new)
        for line, view in zip(side, scan([li.text for li in side], language), strict=True):
            if line.kind != " " or new:
                line.view = view


def _strip_eol(value: str) -> str:
    if value.endswith("\r\n"):
        return value[:-2]
    return value[:-1] if value.endswith("\n") else value


def _mode(patched: PatchedFile, name: str) -> str | None:
    value = getattr(patched, name, None)
    return str(value) if value else None


def _strip_prefix(name: str | None) -> str | None:
    if not name or name == "/dev/null":
        return None
    if name.startswith('"') and name.endswith('"') and len(name) >= 2:
        name = c_unquote(name[1:-1])
    if name.startswith(("a/", "b/")):
        name = name[2:]
    return name


_C_ESCAPES = {"a": 7, "b": 8, "t": 9, "n": 10, "v": 11, "f": 12, "r": 13, '"': 34, "\\": 92}


def c_unquote(quoted: str) -> str:
    """Undo git's C-style quoting of a path (the part between the double quotes)."""
    out = bytearray()
    i = 0
    while i < len(quoted):
        char = quoted[i]
        if char == "\\" and i + 1 < len(quoted):
            nxt = quoted[i + 1]
            if nxt in _C_ESCAPES:
                out.append(_C_ESCAPES[nxt])
                i += 2
                continue
            octal = re.match(r"[0-3][0-7]{2}", quoted[i + 1 : i + 4])
            if octal:
                out.append(int(octal.group(0), 8))
                i += 4
                continue
        out += char.encode("utf-8", "surrogateescape")
        i += 1
    return out.decode("utf-8", "surrogateescape")


def is_symlink_mode(mode: str | None) -> bool:
    return mode == _MODE_SYMLINK


def is_gitlink_mode(mode: str | None) -> bool:
    return mode == _MODE_GITLINK
