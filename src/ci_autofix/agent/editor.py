"""Anthropic's text editor tool (`text_editor_20250728`), implemented on the sandbox.

Commands: `view` (a file with line numbers, or a directory two levels deep), `str_replace`
(exactly one match), `create` (a new file) and `insert` (after a line, 0 = top). Every path
goes through `Sandbox.resolve`; a failed command raises `ToolFailure` with text that tells
the model what went wrong and what to do, e.g. the nearest match of an `old_str` that did
not match. That search for similar text is bounded in size and time (`_nearest`), and stops
at the attempt's `Deadline`, as listing a directory does.
"""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any

from ci_autofix.agent.deadline import Deadline
from ci_autofix.agent.failure import ToolFailure
from ci_autofix.agent.files import list_tree
from ci_autofix.sandbox import Sandbox, SandboxViolation

TOOL_TYPE = "text_editor_20250728"
TOOL_NAME = "str_replace_based_edit_tool"
DEFAULT_MAX_CHARACTERS = 20_000
MAX_FILE_BYTES = 2 * 1024 * 1024
# The search for text similar to an `old_str` that did not match: one comparison of two texts
# takes time that grows faster than the square of their length (seconds for a few thousand
# characters), and cannot be interrupted, so each is kept small, and the search as a whole is
# bounded in windows and in time.
NEAREST_MAX_CHARS = 1_000  # the longest `old_str` searched for
NEAREST_MAX_WINDOW_CHARS = 2 * NEAREST_MAX_CHARS  # a longer stretch of the file is not compared
NEAREST_MAX_WINDOWS = 10_000
NEAREST_SECONDS = 2.0
MAX_LISTED_OCCURRENCES = 20


class TextEditor:
    def __init__(
        self,
        sandbox: Sandbox,
        *,
        max_characters: int = DEFAULT_MAX_CHARACTERS,
        deadline: Deadline | None = None,
    ) -> None:
        self.sandbox = sandbox
        self.max_characters = max_characters
        self.deadline = deadline or Deadline.never()  # the attempt's
        self.changed: set[str] = set()

    def definition(self) -> dict[str, Any]:
        return {"type": TOOL_TYPE, "name": TOOL_NAME, "max_characters": self.max_characters}

    def __call__(self, arguments: dict[str, Any]) -> str:
        command = arguments.get("command")
        handlers = {
            "view": self.view,
            "str_replace": self.str_replace,
            "create": self.create,
            "insert": self.insert,
        }
        if command not in handlers:
            raise ToolFailure(
                f"unknown command {command!r}; use one of: {', '.join(handlers)} "
                "(undo_edit is not available: make a new str_replace instead)"
            )
        path = arguments.get("path")
        if not isinstance(path, str) or not path.strip():
            raise ToolFailure("`path` is required: a path relative to the repository root")
        try:
            return handlers[command](path.strip(), arguments)
        except SandboxViolation as exc:
            raise ToolFailure(str(exc)) from None

    # ---- commands --------------------------------------------------------------------------------
    def view(self, path: str, arguments: dict[str, Any]) -> str:
        target = self.sandbox.resolve(path)
        rel = self.sandbox.relative(path).as_posix()
        if target.is_dir():
            entries = list_tree(self.sandbox, rel, max_depth=2, deadline=self.deadline)
            return self._cap(f"{rel}/ (two levels, ignored files left out):\n" + "\n".join(entries))
        text = self._read(target, rel)
        lines = text.splitlines()
        start, end = 1, len(lines)
        view_range = arguments.get("view_range")
        if view_range is not None:
            if (
                not isinstance(view_range, list)
                or len(view_range) != 2
                or not all(isinstance(n, int) for n in view_range)
            ):
                raise ToolFailure("`view_range` must be two integers [start, end] (end -1 = end of file)")
            start, end = view_range[0], (len(lines) if view_range[1] == -1 else view_range[1])
            if not 1 <= start <= max(len(lines), 1) or end < start:
                raise ToolFailure(
                    f"`view_range` {view_range} is outside the file, which has {len(lines)} lines"
                )
            end = min(end, len(lines))
        numbered = "\n".join(f"{n}: {lines[n - 1]}" for n in range(start, end + 1))
        return self._cap(
            numbered or "(empty file)", hint=f"{rel} has {len(lines)} lines; view a part with view_range"
        )

    def str_replace(self, path: str, arguments: dict[str, Any]) -> str:
        old, new = arguments.get("old_str"), arguments.get("new_str", "")
        if not isinstance(old, str) or old == "":
            raise ToolFailure("`old_str` is required and must not be empty")
        if not isinstance(new, str):
            raise ToolFailure("`new_str` must be a string")
        target = self.sandbox.resolve(path, write=True)
        rel = self.sandbox.relative(path).as_posix()
        text = self._read(target, rel)
        count = text.count(old)
        if count == 0:
            raise ToolFailure(
                f"`old_str` was not found in {rel}; nothing was changed." + _nearest(text, old, self.deadline)
            )
        if count > 1:
            lines = [text.count("\n", 0, i) + 1 for i in _occurrences(text, old, MAX_LISTED_OCCURRENCES)]
            listed = ", ".join(map(str, lines)) + (", ..." if count > len(lines) else "")
            raise ToolFailure(
                f"`old_str` occurs {count} times in {rel} (lines {listed}); "
                "include more surrounding lines so that it matches exactly once"
            )
        updated = text.replace(old, new, 1)
        self._write(target, updated)
        self.changed.add(rel)
        first = text[: text.index(old)].count("\n") + 1
        return f"Replaced in {rel}.\n" + _snippet(updated, first, new.count("\n") + 1)

    def create(self, path: str, arguments: dict[str, Any]) -> str:
        content = arguments.get("file_text")
        if not isinstance(content, str):
            raise ToolFailure("`file_text` is required: the whole content of the new file")
        target = self.sandbox.resolve(path, write=True)
        rel = self.sandbox.relative(path).as_posix()
        if target.exists():
            raise ToolFailure(f"{rel} already exists; change it with str_replace or insert (a smaller diff)")
        target.parent.mkdir(parents=True, exist_ok=True)
        self._write(target, content)
        self.changed.add(rel)
        return f"Created {rel} ({content.count(chr(10)) + (0 if content.endswith(chr(10)) else 1)} lines)."

    def insert(self, path: str, arguments: dict[str, Any]) -> str:
        line = arguments.get("insert_line")
        new = arguments.get("new_str", arguments.get("insert_text"))
        if not isinstance(line, int) or isinstance(line, bool):
            raise ToolFailure("`insert_line` is required: the line after which to insert (0 = top of file)")
        if not isinstance(new, str):
            raise ToolFailure("`new_str` is required: the text to insert")
        target = self.sandbox.resolve(path, write=True)
        rel = self.sandbox.relative(path).as_posix()
        text = self._read(target, rel)
        lines = text.splitlines(keepends=True)
        if not 0 <= line <= len(lines):
            raise ToolFailure(
                f"`insert_line` {line} is outside {rel}, which has {len(lines)} lines (0 = top)"
            )
        if lines and not lines[-1].endswith("\n") and line == len(lines):
            lines[-1] += "\n"
        block = new if new.endswith("\n") else new + "\n"
        updated = "".join([*lines[:line], block, *lines[line:]])
        self._write(target, updated)
        self.changed.add(rel)
        return f"Inserted after line {line} of {rel}.\n" + _snippet(updated, line + 1, block.count("\n"))

    # ---- helpers ---------------------------------------------------------------------------------
    def _read(self, target: Path, rel: str) -> str:
        if not target.exists():
            raise ToolFailure(f"{rel} does not exist; use `view` on a directory to see what is there")
        if not target.is_file():
            raise ToolFailure(f"{rel} is not a regular file")
        if target.stat().st_size > MAX_FILE_BYTES:
            raise ToolFailure(
                f"{rel} is larger than {MAX_FILE_BYTES // 1024 // 1024} MB; use `search` on it instead"
            )
        data = target.read_bytes()
        if b"\0" in data[:8192]:
            raise ToolFailure(f"{rel} is a binary file")
        return data.decode("utf-8", errors="replace")

    def _write(self, target: Path, text: str) -> None:
        with target.open("w", encoding="utf-8", newline="") as handle:
            handle.write(text)

    def _cap(self, text: str, *, hint: str = "") -> str:
        if len(text) <= self.max_characters:
            return text
        return text[: self.max_characters] + f"\n[... cut at {self.max_characters} characters. {hint}]"


def _occurrences(text: str, needle: str, limit: int) -> list[int]:
    """Where `needle` starts in `text`: the first `limit` places."""
    found: list[int] = []
    start = 0
    while len(found) < limit and (index := text.find(needle, start)) != -1:
        found.append(index)
        start = index + 1
    return found


def _nearest(text: str, old: str, deadline: Deadline | None = None) -> str:
    """The lines of `text` most like `old`, with their numbers, so the model can correct its `old_str`.

    A window scores by the share of `old_str`'s lines it contains exactly (ignoring indentation)
    and by character similarity; windows one line shorter to two lines longer than `old_str`
    are tried, so a missed or an extra line still finds its place.

    Bounded, whatever the model sends and the file holds: an `old_str` longer than
    `NEAREST_MAX_CHARS` is not searched for, a window longer than `NEAREST_MAX_WINDOW_CHARS` is
    not compared, and the search gives up after `NEAREST_MAX_WINDOWS` windows or
    `NEAREST_SECONDS` (or at `deadline`, the attempt's); each time the text says so and tells the
    model to view the file instead.
    """
    lines = text.splitlines()
    if not lines:
        return " The file is empty."
    if len(old) > NEAREST_MAX_CHARS:
        return (
            f" `old_str` is {len(old):,} characters long, too long to search the file for similar text "
            f"(at most {NEAREST_MAX_CHARS:,}): view the part of the file you mean (`view` with `view_range`) "
            "and copy its exact text, or replace a shorter part that occurs once."
        )
    until = (deadline or Deadline.never()).within(NEAREST_SECONDS)
    compared = 0
    want = old.strip("\n").splitlines() or [old]
    wanted = {line.strip() for line in want if line.strip()}
    target = "\n".join(want)
    size = len(want)
    anchors = [i for i, line in enumerate(lines) if line.strip() in wanted]
    starts: set[int] = set(range(len(lines))) if len(lines) <= 2000 else set()
    for anchor in anchors:
        starts.update(range(max(anchor - size - 1, 0), anchor + 1))
    best, best_at, best_size = 0.0, 0, size
    for start in sorted(starts):
        for length in range(max(size - 1, 1), size + 3):
            window = lines[start : start + length]
            if len(window) < length and length > size:
                break
            joined = "\n".join(window)
            if len(joined) > NEAREST_MAX_WINDOW_CHARS:
                break  # a longer window would be longer still
            compared += 1
            if compared > NEAREST_MAX_WINDOWS or until.passed():
                return (
                    " The search for similar text gave up (the file is too large or too repetitive for it): "
                    "view the file (`view`, with `view_range` for a part) to see its current content."
                )
            present = {line.strip() for line in window}
            exact = len(wanted & present) / len(wanted) if wanted else 0.0
            matcher = difflib.SequenceMatcher(None, joined, target, autojunk=False)
            if (exact + matcher.quick_ratio()) / 2 <= best:
                continue
            score = (exact + matcher.ratio()) / 2
            if score > best:
                best, best_at, best_size = score, start, length
    if best < 0.5:
        return " No similar text either: view the file to see its current content."
    end = min(best_at + best_size, len(lines))
    shown = "\n".join(f"{n + 1}: {lines[n]}" for n in range(best_at, end))
    window_text = "\n".join(lines[best_at:end])
    hint = " (it differs only in whitespace or indentation)" if window_text.split() == target.split() else ""
    return f" The most similar text{hint} is at lines {best_at + 1}-{end}:\n{shown}"


def _snippet(text: str, first: int, count: int, context: int = 3) -> str:
    lines = text.splitlines()
    start = max(first - context, 1)
    end = min(first + count - 1 + context, len(lines))
    return "\n".join(f"{n}: {lines[n - 1]}" for n in range(start, end + 1))
