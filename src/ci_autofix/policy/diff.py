"""A unified diff as the rules see it: files, hunks and lines, each line with its source views.

Parsed from text that kept its bytes (str, or bytes decoded with surrogateescape, so lone CRs
and invalid UTF-8 survive). A git diff is split at its `diff --git` lines and each file's paths
are read by git's own rules (`header.py`): C-quoted names decoded, `a/`/`b/` (or mnemonic)
prefixes removed only when the header shows them, `--no-prefix` diffs and names with spaces
read whole, `rename from`/`rename to` taken as written; unidiff parses each file's hunks. A
diff without `diff --git` lines (plain `diff -u`) is parsed by unidiff alone. Paths are given
without their prefixes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import Literal

from unidiff.errors import UnidiffParseError
from unidiff.patch import PatchedFile, PatchSet

from ci_autofix.policy.header import Header, c_unquote, read_header, split_sections
from ci_autofix.policy.source import Language, View, is_test_path, language_of, scan

LineKind = Literal["+", "-", " "]
ChangeKind = Literal["added", "deleted", "modified", "renamed"]

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

    # a hunk's lines are fixed once it is parsed: these are computed once
    @cached_property
    def added(self) -> list[Line]:
        return [line for line in self.lines if line.kind == "+"]

    @cached_property
    def removed(self) -> list[Line]:
        return [line for line in self.lines if line.kind == "-"]

    def side(self, new: bool) -> list[Line]:
        """The lines of the new file (context and added) or of the old file (context and removed)."""
        drop = "-" if new else "+"
        return [line for line in self.lines if line.kind != drop]


@dataclass
class FileDiff:
    path: str  # the new path; the old one for a deleted file
    old_path: str | None  # the old path when renamed
    status: ChangeKind
    binary: bool
    old_mode: str | None
    new_mode: str | None
    hunks: list[Hunk]
    language: Language
    is_test: bool
    old_blob: str | None = None  # the blob ids of `index <old>..<new>` (`--full-index` gives them whole)
    new_blob: str | None = None
    old_text: str | None = None  # the whole file, when known (`contents.attach`)
    new_text: str | None = None

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
    sections = split_sections(text)
    if sections is None:
        return [_file(patched, _unidiff_header(patched)) for patched in PatchSet.from_string(text)]
    files = []
    for header_lines, body in sections:
        header = read_header(header_lines)
        patched_files = list(PatchSet.from_string(body)) if body else []
        if len(patched_files) > 1:
            raise UnidiffParseError(f"more than one file under one diff --git header ({header.describe()})")
        files.append(_file(patched_files[0] if patched_files else None, header))
    return files


def _unidiff_header(patched: PatchedFile) -> Header:
    source = _strip_prefix(patched.source_file)
    target = _strip_prefix(patched.target_file)
    return Header(
        old_path=source,
        new_path=target,
        added=bool(patched.is_added_file),
        deleted=bool(patched.is_removed_file),
        binary=bool(patched.is_binary_file),
        old_mode=_mode(patched, "source_mode"),
        new_mode=_mode(patched, "target_mode"),
    )


def _file(patched: PatchedFile | None, header: Header) -> FileDiff:
    source, target = header.old_path, header.new_path
    if header.added:
        status: ChangeKind = "added"
    elif header.deleted:
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
        binary=header.binary or bool(patched is not None and patched.is_binary_file),
        old_mode=header.old_mode,
        new_mode=header.new_mode,
        hunks=[],
        language=language,
        is_test=is_test_path(path) or (status == "deleted" and old_is_test),
        old_blob=header.old_blob,
        new_blob=header.new_blob,
    )
    seen_test_context = False
    for unihunk in patched if patched is not None else ():
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


def is_symlink_mode(mode: str | None) -> bool:
    return mode == _MODE_SYMLINK


def is_gitlink_mode(mode: str | None) -> bool:
    return mode == _MODE_GITLINK
