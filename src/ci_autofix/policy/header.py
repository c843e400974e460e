"""The header of one file in a git diff, read by git's own rules, so a path is never misread.

`git diff` writes `diff --git <old> <new>`, then extended lines (`old mode`, `new file mode`,
`deleted file mode`, `rename from`, `copy to`, `index <old>..<new> <mode>`, ...), then `---`/`+++`
unless the change has no text hunks (a pure rename, a mode change, a binary file). A name is
C-quoted when it holds a `"`, a `\\`, a control character or (with `core.quotePath`, git's
default) a byte above 0x7f; otherwise it is written as is, spaces included, and `---`/`+++` get
a trailing tab when the name has a space. Prefixes are `a/` and `b/` by default, `c/`, `i/`,
`w/`, `o/` with `diff.mnemonicPrefix`, none with `--no-prefix`.

The rules used here, like `git apply`'s: names on `rename`/`copy` lines are taken whole; an
unquoted `diff --git` line is split where its two halves name the same file; a prefix is
removed only when the two names of that line carry two different one-letter prefixes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from unidiff.errors import UnidiffParseError

_DIFF_GIT = "diff --git "
_ZERO = re.compile(r"^0+$")
_INDEX = re.compile(r"^index ([0-9a-f]+)\.\.([0-9a-f]+)(?: (\d+))?$")
_C_ESCAPES = {"a": 7, "b": 8, "t": 9, "n": 10, "v": 11, "f": 12, "r": 13, '"': 34, "\\": 92}
_NULL = "/dev/null"


@dataclass(frozen=True)
class Header:
    old_path: str | None  # None for an added file
    new_path: str | None  # None for a deleted file
    added: bool = False
    deleted: bool = False
    binary: bool = False
    old_mode: str | None = None
    new_mode: str | None = None
    old_blob: str | None = None
    new_blob: str | None = None

    def describe(self) -> str:
        return self.new_path or self.old_path or "(no path)"


def split_sections(text: str) -> list[tuple[list[str], str]] | None:
    """Each file of a git diff: its header lines, and its `---`/`+++` and hunks as unidiff reads them.

    None when the text has no `diff --git` line (a plain unified diff). The `---`/`+++` lines
    are replaced by neutral ones, so unidiff only ever parses hunks; the names come from the header.
    """
    # lines as git writes them: ended by "\n" only (`splitlines` would also end one at U+2028 or
    # U+0085, which a file's name or content may hold, and cut the diff where git did not)
    lines = text.split("\n")
    lines = [f"{line}\n" for line in lines[:-1]] + ([lines[-1]] if lines[-1] else [])
    starts = [i for i, line in enumerate(lines) if line.startswith(_DIFF_GIT)]
    if not starts:
        return None
    if any(line.startswith("@@ ") for line in lines[: starts[0]]):
        raise UnidiffParseError("hunks before the first diff --git line")
    sections: list[tuple[list[str], str]] = []
    for index, start in enumerate(starts):
        end = starts[index + 1] if index + 1 < len(starts) else len(lines)
        chunk = lines[start:end]
        header: list[str] = []
        body_start = len(chunk)
        for position, line in enumerate(chunk):
            if line.startswith(("--- ", "@@ ")) or line.rstrip("\r\n") == "---":
                body_start = position
                break
            header.append(line.rstrip("\r\n"))
        rest = chunk[body_start:]
        if rest and rest[0].startswith("--- "):
            if len(rest) < 2 or not rest[1].startswith("+++ "):
                raise UnidiffParseError(f"a --- line without its +++ line in {header[0][:200]!r}")
            header += [rest[0].rstrip("\r\n"), rest[1].rstrip("\r\n")]
            rest = rest[2:]
        body = "--- a/file\n+++ b/file\n" + "".join(rest) if rest else ""
        sections.append((header, body))
    return sections


def read_header(lines: list[str]) -> Header:
    """The paths, modes, blob ids and kind of change that one file's header lines state."""
    said = _extended(lines[1:])
    fields = said.fields
    old, new = _paths(lines[0], said)
    added = "new file mode" in fields or "copy to" in fields
    deleted = "deleted file mode" in fields
    old_mode = fields.get("old mode") or fields.get("deleted file mode")
    new_mode = fields.get("new mode") or fields.get("new file mode")
    index = _INDEX.match("index " + fields["index"]) if "index" in fields else None
    if index and index.group(3):
        old_mode = old_mode or index.group(3)
        new_mode = new_mode or index.group(3)
    old_blob = index.group(1) if index and not _ZERO.match(index.group(1)) else None
    new_blob = index.group(2) if index and not _ZERO.match(index.group(2)) else None
    return Header(
        old_path=None if added else old,
        new_path=None if deleted else new,
        added=added,
        deleted=deleted,
        binary=said.binary,
        old_mode=old_mode,
        new_mode=new_mode,
        old_blob=old_blob,
        new_blob=new_blob,
    )


@dataclass(frozen=True)
class _Extended:
    """What the lines after `diff --git` say: the extended lines by name (the first of each kept),
    the names on `---`/`+++`, and whether the change is binary."""

    fields: dict[str, str]
    minus: str | None
    plus: str | None
    binary: bool


_NAMED = ("rename from", "rename to", "copy from", "copy to", "new file mode", "deleted file mode")


def _extended(lines: list[str]) -> _Extended:
    fields: dict[str, str] = {}
    minus = plus = None
    binary = False
    for line in lines:
        if line.startswith("--- "):
            minus = line[4:]
        elif line.startswith("+++ "):
            plus = line[4:]
        elif line.startswith(("Binary files ", "GIT binary patch")):
            binary = True
        else:
            key, _, value = line.partition(" ")
            for name in _NAMED:
                if line.startswith(name + " "):
                    key, value = name, line[len(name) + 1 :]
                    break
            else:
                if line.startswith(("old mode ", "new mode ")):
                    key, value = line[:8], line[9:]
            fields.setdefault(key, value)
    return _Extended(fields, minus, plus, binary)


def _paths(diff_git: str, said: _Extended) -> tuple[str | None, str | None]:
    """The old and new names: from `rename`/`copy` lines, else the `diff --git` line, else the
    `---`/`+++` lines; no old name for a copy (it adds one file and leaves its source alone)."""
    fields = said.fields
    old, new, prefixed = _header_names(diff_git[len(_DIFF_GIT) :])
    named_old = fields.get("rename from") or fields.get("copy from")
    named_new = fields.get("rename to") or fields.get("copy to")
    if named_old:
        old = unquote(named_old)
    if named_new:
        new = unquote(named_new)
    if old is None or new is None:  # an unsplittable header: the ---/+++ lines must name the file
        old = old or _side_name(said.minus, prefixed)
        new = new or _side_name(said.plus, prefixed)
    if old is None and new is None:
        raise UnidiffParseError(f"no path can be read from {diff_git[:200]!r}")
    if "copy from" in fields:
        old = None  # a copy leaves its source alone: the diff adds one file
    return old, new


def _header_names(rest: str) -> tuple[str | None, str | None, bool]:
    """The two names of a `diff --git` line without prefixes, and whether it had prefixes."""
    first, remainder = _take_name(rest)
    if first is not None and remainder.startswith(" "):
        second, tail = _take_name(remainder[1:], whole=True)
        if second is not None and not tail:
            return _strip_pair(first, second)
    if not rest.startswith('"') and rest.endswith('"'):  # unquoted old name, quoted new name
        start = rest.rfind(' "')
        second, tail = _take_name(rest[start + 1 :], whole=True)
        if start > 0 and second is not None and not tail:
            return _strip_pair(rest[:start], second)
    if not rest.startswith('"') and len(rest) % 2 == 1:  # unquoted both: the halves name one file
        half = len(rest) // 2
        left, right = rest[:half], rest[half + 1 :]
        if rest[half] == " ":
            if left == right:
                return left, right, False
            if _prefixes(left, right) and left[2:] == right[2:]:
                return left[2:], right[2:], True
    return None, None, False


def _take_name(text: str, whole: bool = False) -> tuple[str | None, str]:
    """A C-quoted name at the start of `text` and what follows it; unquoted only when `whole`."""
    if text.startswith('"'):
        i = 1
        while i < len(text):
            if text[i] == "\\":
                i += 2
                continue
            if text[i] == '"':
                return c_unquote(text[1:i]), text[i + 1 :]
            i += 1
        return None, text
    if whole:
        return text, ""
    return None, text


def _strip_pair(first: str, second: str) -> tuple[str | None, str | None, bool]:
    if _prefixes(first, second):
        return first[2:], second[2:], True
    return first, second, False


def _prefixes(first: str, second: str) -> bool:
    return (
        len(first) > 2
        and len(second) > 2
        and first[1] == "/"
        and second[1] == "/"
        and first[0] != second[0]
        and first[0].isalnum()
        and second[0].isalnum()
    )


def _side_name(value: str | None, prefixed: bool) -> str | None:
    if value is None:
        return None
    name = value.split("\t", 1)[0] if not value.startswith('"') else _take_name(value)[0]
    if name is None or name == _NULL:
        return None
    if prefixed and len(name) > 2 and name[1] == "/":
        return name[2:]
    return name


def unquote(name: str) -> str:
    """A name as written on a `rename`/`copy` line: C-quoted or not."""
    if name.startswith('"'):
        decoded, tail = _take_name(name)
        if decoded is not None and not tail:
            return decoded
    return name


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
