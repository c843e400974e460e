"""Inline suggestions: each hunk of a fix as a one-click ```suggestion comment on the original PR.

`inline_suggestions(pr_diff, fix_diff)` takes the pull request's own diff (`git diff <merge-base>
<PR head>`) and the fix's diff (`git diff <PR head> <fix commit>`), both as git prints them, and
returns the review comments to post (`Inline`) and the fix hunks that stay in the side branch only
(`Unmapped`, with the reason in plain words). It is pure: no git, no GitHub.

GitHub accepts a review comment only on lines of one hunk of the PR's diff; on the RIGHT side
those are the head file's lines the hunk shows (added and context lines). A suggestion replaces
the lines `start_line..line` of the head file with its content. So, per fix hunk:

- The lines it replaces are its old side without the leading and trailing context lines git
  adds (three by default): context is not part of the change, and keeping it would make hunks
  fail to map whenever the PR's hunk ends next to the change. Context lines between two changes
  of one hunk stay in the range and are reproduced, unchanged, in the suggestion. Those head
  lines must lie inside ONE hunk of the PR diff's new side for that file, else `Unmapped`.
- A pure insertion replaces no line: it is widened to the head line before it (or, when that line
  is outside the PR's diff or the insertion is at the top of the file, the line after it), whose
  unchanged text is written before (after) the inserted lines. A pure deletion is an empty
  suggestion over the deleted lines.
- The fence is backticks, one longer than the longest backtick run in the content, at least three
  (so four when the code holds ```), so no line of the code can close it.
- Line endings. The suggestion's text never holds `\r`. What GitHub writes into a CRLF file when
  "Commit suggestion" is pressed could not be established here (no GitHub to try it on; one
  public report, LexiFi/dead_code_analyzer#71, says applying review suggestions introduced
  CRLF endings into a file). So a hunk is mapped only when the fix keeps the endings of the
  lines it replaces (all CRLF or all LF, and the end-of-file newline as it was): the text is then
  exactly the fix's, and the file comes out as the fix's when GitHub gives the new lines the
  ending of the lines they replace (the tests model "Commit suggestion" so). A fix that changes
  endings, or whether the file ends with a newline, stays in the side branch only.
- Paths are the head's: a file the PR renamed is commented on under its new name; C-quoted names
  (`"caf\303\251.py"`, git's default `core.quotePath`) and unquoted ones are read by git's own
  rules (`policy.header`). `Unmapped`: a hunk in a file the PR does not change, text that is not
  UTF-8 or holds a carriage return inside a line; and, for the file as a whole (`old_start` and `old_lines` 0, as for an insertion at the
  top of a file; `why` tells them apart), a binary file, a symbolic link or submodule, a file the
  fix adds or deletes, and a rename or mode change by the fix (whose content hunks may still map).
- Every head line a suggestion covers is checked against the PR diff's text for that line; a
  difference (the two diffs are not of the same head) leaves the hunk `Unmapped`.

GitHub computes the PR's diff itself (three lines of context); a diff made with other options may
show hunks GitHub does not, and a comment there gets a 422: the caller must post the comments so
that one refusal does not lose the others.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass

from unidiff.errors import UnidiffParseError
from unidiff.patch import Hunk as UniHunk
from unidiff.patch import PatchSet

from ci_autofix.policy.header import Header, read_header, split_sections

OUTSIDE = "outside the pull request's diff"
_SYMLINK = "120000"
_SUBMODULE = "160000"


@dataclass(frozen=True)
class Inline:
    """One review comment: a ```suggestion over `start_line..line` of `path` in the PR head."""

    path: str  # the file's path in the PR head (after a rename in the PR)
    line: int  # last line of the range, in the PR head's file (side RIGHT)
    start_line: int | None  # first line when the range has more than one line, else None
    body: str  # the ```suggestion block (a longer fence when the code holds ```), then `note`


@dataclass(frozen=True)
class Unmapped:
    """A part of the fix that has no suggestion: it stays in the side branch only."""

    path: str
    old_start: int  # the fix hunk's range in the PR head's file (git's convention: 0 lines at k = after k)
    old_lines: int
    why: str  # plain words: "outside the pull request's diff", "binary file", ...


@dataclass(frozen=True)
class _Line:
    kind: str  # "+", "-" or " "
    text: str  # without its line ending
    eol: str  # "\r\n", "\n", or "" for a last line without a newline
    old: int  # its number on the diff's old side ("-" and " "), else 0
    new: int  # its number on the diff's new side ("+" and " "), else 0


@dataclass(frozen=True)
class _File:
    header: Header
    hunks: list[tuple[UniHunk, list[_Line]]]


@dataclass(frozen=True)
class _Span:
    """The head lines one hunk of the PR's diff shows on its RIGHT side, by number."""

    first: int
    last: int
    lines: dict[int, tuple[str, str]]  # number → (text, eol)


def inline_suggestions(pr_diff: str, fix_diff: str, *, note: str = "") -> tuple[list[Inline], list[Unmapped]]:
    """The suggestions that put each mappable fix hunk on the PR, and the parts that cannot be.

    `note` follows each suggestion block, after a blank line. Raises `ValueError` when a text is
    not a git diff (no `diff --git` line, or hunks unidiff cannot read).
    """
    spans = {
        f.header.new_path: [_span(lines) for _, lines in f.hunks]
        for f in _files(pr_diff)
        if f.header.new_path is not None and not f.header.binary
    }
    inlines: list[Inline] = []
    unmapped: list[Unmapped] = []
    for fixed in _files(fix_diff):
        header = fixed.header
        whole = _whole_file(header)
        path = header.old_path or header.new_path or ""
        if whole:
            unmapped.append(Unmapped(path, 0, 0, whole))
            if not _content_may_map(header):
                continue
        for unihunk, lines in fixed.hunks:
            result = _suggest(path, unihunk, lines, spans.get(path), note)
            if isinstance(result, Inline):
                inlines.append(result)
            else:
                unmapped.append(result)
    return inlines, unmapped


def _content_may_map(header: Header) -> bool:
    """Whether the hunks of a file whose change as a whole is unmapped may still map."""
    return not (
        header.binary
        or header.old_path is None
        or header.new_path is None
        or {header.old_mode, header.new_mode} & {_SYMLINK, _SUBMODULE}
    )


def _whole_file(header: Header) -> str:
    """Why the fix's change to the file as a whole has no suggestion, or "" when it has none."""
    if header.binary:
        return "binary file"
    if header.old_path is None:
        return "the fix adds this file; a suggestion can only change lines the pull request's head has"
    if header.new_path is None:
        return "the fix deletes this file, which a suggestion cannot do"
    if header.old_path != header.new_path:
        return f"the fix renames the file to {header.new_path}, which a suggestion cannot do"
    if {header.old_mode, header.new_mode} & {_SYMLINK, _SUBMODULE}:
        return "a symbolic link or submodule, which a suggestion cannot change"
    if header.old_mode and header.new_mode and header.old_mode != header.new_mode:
        return f"mode change ({header.old_mode} to {header.new_mode}), which a suggestion cannot do"
    return ""


def _suggest(
    path: str, unihunk: UniHunk, lines: list[_Line], spans: list[_Span] | None, note: str
) -> Inline | Unmapped:
    """The suggestion for one hunk of the fix, or why it has none. `spans`: the PR diff's hunks of
    the file (None when the pull request does not change it)."""
    change = _change(unihunk, lines)
    mapped = _mapped(change, spans)
    if isinstance(mapped, str):
        return Unmapped(path, change.start, len(change.old), mapped)
    old, new, span = mapped
    if why := _not_the_fix(old, new, span):
        return Unmapped(path, change.start, len(change.old), why)
    first_line, last_line = old[0].old, old[-1].old
    return Inline(
        path=path,
        line=last_line,
        start_line=first_line if last_line > first_line else None,
        body=_body([line.text for line in new], note),
    )


@dataclass(frozen=True)
class _Change:
    """A fix hunk without its leading and trailing context: the head lines it replaces (`old`),
    the lines that replace them (`new`), and where (`start`: the first of `old`, or the line an
    insertion comes after, 0 for the top of the file)."""

    region: list[_Line]
    old: list[_Line]
    new: list[_Line]
    start: int


def _change(unihunk: UniHunk, lines: list[_Line]) -> _Change:
    changed = [i for i, line in enumerate(lines) if line.kind != " "]
    first, last = changed[0], changed[-1]
    region = lines[first : last + 1]
    old = [line for line in region if line.kind != "+"]
    new = [line for line in region if line.kind != "-"]
    if old:
        start = old[0].old
    elif first > 0:  # an insertion after the context line before it (git's convention: after `start`)
        start = lines[first - 1].old
    elif int(unihunk.source_length) == 0:  # a diff without context (-U0) says where
        start = int(unihunk.source_start)
    else:  # inserted before the hunk's first context line: at the top of the file
        start = int(unihunk.source_start) - 1
    return _Change(region, old, new, start)


def _mapped(change: _Change, spans: list[_Span] | None) -> tuple[list[_Line], list[_Line], _Span] | str:
    """The head lines a suggestion replaces and its lines (an insertion widened to a head line next
    to it), with the PR diff's hunk that shows those head lines; or why there is none."""
    region = change.region
    if any(_not_utf8(line.text) for line in region):
        return "not UTF-8 text"
    if any("\r" in line.text for line in region):
        return "a carriage return inside a line, which a suggestion cannot show"
    if spans is None:
        return f"{OUTSIDE}: the pull request does not change this file"
    old, new = change.old, change.new
    if not old:
        widened = _widen(change.start, spans)
        if widened is None:
            return OUTSIDE
        number, text, eol, before = widened
        anchor = _Line(" ", text, eol, number, 0)
        old = [anchor]
        new = [anchor, *new] if before else [*new, anchor]
    span = _span_showing(old[0].old, old[-1].old, spans)
    return span if isinstance(span, str) else (old, new, span)


def _span_showing(first_line: int, last_line: int, spans: list[_Span]) -> _Span | str:
    """The PR diff's hunk that shows head lines `first_line..last_line`, or why none does."""
    span = next((s for s in spans if s.first <= first_line and last_line <= s.last), None)
    if span is not None:
        return span
    touched = [s for s in spans if s.first <= last_line and first_line <= s.last]
    if len(touched) > 1:
        return f"spans {len(touched)} hunks of the pull request's diff; a suggestion must lie inside one"
    if touched:
        return f"reaches {OUTSIDE} (its hunk there shows lines {touched[0].first}-{touched[0].last})"
    return OUTSIDE


def _not_the_fix(old: list[_Line], new: list[_Line], span: _Span) -> str:
    """Why committing the suggestion would not give the fix's text ("" when it would): a head line
    the PR's diff shows otherwise, or line endings the fix changes."""
    for line in old:
        if span.lines.get(line.old) != (line.text, line.eol):
            return (
                f"line {line.old} differs between the fix's diff and the pull request's diff; "
                "they are not diffs of the same head commit"
            )
    if ("" in {line.eol for line in old}) != ("" in {line.eol for line in new}):
        return "the fix changes whether the file ends with a newline, which a suggestion cannot show"
    if len({line.eol for line in (*old, *new) if line.eol}) > 1:
        return "the fix changes line endings (CRLF and LF), which a suggestion cannot show"
    return ""


def _widen(after: int, spans: list[_Span]) -> tuple[int, str, str, bool] | None:
    """The head line an insertion after line `after` is widened to: (number, text, eol, before?)."""
    candidates = [(after, True), (after + 1, False)] if after >= 1 else [(1, False)]
    for number, before in candidates:
        for span in spans:
            if number in span.lines:
                text, eol = span.lines[number]
                return number, text, eol, before
    return None


def _body(content: list[str], note: str) -> str:
    longest = max((len(run) for text in content for run in _backtick_runs(text)), default=0)
    fence = "`" * max(3, longest + 1)
    block = f"{fence}suggestion\n" + "".join(f"{text}\n" for text in content) + fence
    return f"{block}\n\n{note}" if note else block


def _backtick_runs(text: str) -> list[str]:
    return re.findall(r"`+", text)


def _not_utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _span(lines: list[_Line]) -> _Span:
    right = {line.new: (line.text, line.eol) for line in lines if line.kind != "-"}
    return _Span(min(right, default=0), max(right, default=-1), right)


def _files(diff: str) -> list[_File]:
    """Each file of a git diff: its header (paths by git's rules) and its hunks, line endings kept."""
    if not diff.strip():
        return []
    sections = split_sections(diff)
    if sections is None:
        raise ValueError("not a git diff: no `diff --git` line")
    files: list[_File] = []
    try:
        for header_lines, body in sections:
            header = read_header(header_lines)
            patched = list(PatchSet.from_string(body)) if body else []
            hunks = [(unihunk, _lines(unihunk)) for p in patched for unihunk in p]
            files.append(_File(header, hunks))
    except UnidiffParseError as exc:
        raise ValueError(f"not a git diff: {exc}") from exc
    return files


def _lines(unihunk: UniHunk) -> list[_Line]:
    lines: list[_Line] = []
    for uniline in unihunk:
        kind = str(uniline.line_type)
        value = str(uniline.value)
        if kind == "\\":  # "\ No newline at end of file": the line before has no ending
            if lines:  # its "\n" was the diff's; a "\r" before it was the file's
                last = lines[-1]
                lines[-1] = dataclasses.replace(last, text=last.text + last.eol[:-1], eol="")
            continue
        if kind not in ("+", "-", " "):
            continue
        eol = "\r\n" if value.endswith("\r\n") else "\n" if value.endswith("\n") else ""
        old = int(uniline.source_line_no or 0) if kind != "+" else 0
        new = int(uniline.target_line_no or 0) if kind != "-" else 0
        lines.append(_Line(kind, value[: len(value) - len(eol)], eol, old, new))
    return lines
