"""A log as lines, with the few whole-log facts found in one linear scan, held without the log.

Nothing per line runs over the whole log: one compiled alternation (`ANCHOR_RE`) finds the
lines worth reading (error words, GitHub step markers, prompt lines) at C speed, and lines are
cleaned only when a parser or the excerpt asks for them. The log itself is read in chunks
(`logfile.LogFile`): what is kept is its chunk index, the anchors, the steps and the lines cleaned.
"""

from __future__ import annotations

import heapq
import re
from array import array
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ci_autofix.triage.logfile import BLOCK_BYTES, CHUNK_BYTES, LogFile, normal_bytes, read_chunks
from ci_autofix.triage.normalize import clean_line

# Lower-case words that mark a line worth reading, scanned over the lower-cased log. They are
# compiled as a prefix tree (one branch per first character), which the regex engine runs several
# times faster than a flat alternation.
ANCHOR_WORDS = (
    "error",
    "fail",
    "exception",
    "traceback",
    "panic",
    "fatal",
    "denied",
    "not found",
    "cannot",
    "can't",
    "could not",
    "couldn't",
    "unable to",
    "exit code",
    "exited with",
    "exit status",
    "undefined",
    "killed",
    "timed out",
    "timeout",
    "no space left",
    "broken pipe",
    "read-only file system",
    "too many open files",
    "connection reset",
    "operation not permitted",
    "disk quota",
    "rate limit",
    "too many requests",
    "would reformat",
    "incorrectly sorted",
    "violation",
    "abort",
    "segmentation",
    "assert",
    "expected",
    "unexpected",
    "refused",
    "unresolved",
    "no such",
    "missing",
    "invalid",
    "mismatch",
    "bad ",
    "problem",
    "##[group]run ",
    "##[endgroup]",
    "##[error]",
    "✗",
    "✖",
    "×",
    "✘",
    "\n$ ",
    "\x1b[0k$ ",
    "\n> ",
    "\n+ ",
    "<<<",
    "-->",
    "unavailable",
    "bad gateway",
    "econnreset",
    "etimedout",
    "enotfound",
    "eai_again",
    "resolve host",
    "name resolution",
    "unreachable",
    "cancel",
    "shutdown signal",
    "lost communication",
    "exceeded",
    "out of memory",
    "enospc",
    " 429",
    " 500 ",
    " 502 ",
    " 503 ",
    " 504 ",
)
ANCHOR_EXTRA = r"\.(?:py|go|rs):\d|\(\d+,\d+\)|:\d+:\d+[: ]"
# Words a very large log is searched for outside its tails (plain `str.find`, no regex).
CHEAP_WORDS = ("error", "fail", "##[group]run ", "##[error]")
FULL_SCAN_CHARS = 8_000_000  # logs up to this size get the full scan everywhere
TAIL_SCAN_CHARS = 2_000_000  # larger logs: the full scan covers this much before each failure and the end
MAX_ANCHORS = 20000  # the first and last halves are kept on pathological logs


def _prefix_tree(words: list[str]) -> str:
    if "" in words:
        rest = [w for w in words if w]
        return f"(?:{_prefix_tree(rest)})?" if rest else ""
    branches: dict[str, list[str]] = {}
    for word in words:
        branches.setdefault(word[0], []).append(word[1:])
    parts = [re.escape(first) + _prefix_tree(rest) for first, rest in sorted(branches.items())]
    return parts[0] if len(parts) == 1 else "(?:" + "|".join(parts) + ")"


ANCHOR_RE = re.compile(
    _prefix_tree([w.replace("\\n", "\n").replace("\\x1b", "\x1b") for w in ANCHOR_WORDS]) + "|" + ANCHOR_EXTRA
)

STEP_RE = re.compile(r"^##\[group\]Run (?P<cmd>.*)$")
SCRIPT_LINE_PREFIX = "\x1b[36;1m"
EXIT_RE = re.compile(r"^##\[error\]Process completed with exit code (?P<code>\d+)\.?$")


MAX_CLEAN_LINES = 8192  # cleaned lines memoised at most (the memo is emptied when full)
EXIT_MARKER = b"##[error]process completed with exit code"
MAX_EXITS = 99


class _Cheap:
    """What the indexing pass finds in each chunk's lower-cased bytes: the cheap words' lines, the
    exit-code markers' positions, whether the log starts with a prompt.

    `##[error]` is not searched for: every such line holds `error`, which comes first in
    `CHEAP_WORDS`, so under the shared cap its lines are either in already or out of room."""

    def __init__(self) -> None:
        self.hits: dict[str, array[int]] = {word: array("q") for word in CHEAP_WORDS}
        self._needles = [
            (w, w.encode()) for w in CHEAP_WORDS if w != "##[error]" or "error" not in CHEAP_WORDS
        ]
        self.exits: list[int] = []
        self.prompt_first = False

    def add(self, file: LogFile, first_block: int, lowered: bytes) -> None:
        """Note what chunk `lowered` holds: the last chunk `file` indexed, from its block `first_block`.
        A hit's line is the previous hit's (or its block's first line) plus the breaks between them,
        so no line break is counted twice, however long the line that holds many hits."""
        start = file.block(first_block)
        position = start.position
        if position == 0 and lowered:
            self.prompt_first = lowered.startswith((b"$ ", b"> ", b"+ "))
        found: list[tuple[int, array[int]]] = []
        for word, needle in self._needles:
            hits = self.hits[word]
            room = 50 * MAX_ANCHORS - len(hits)
            at = lowered.find(needle)
            while at != -1 and room > 0:
                found.append((at, hits))
                room -= 1
                at = lowered.find(needle, at + len(needle))
        found.sort(key=lambda hit: hit[0])
        block = start
        cursor, line = block.position - position, block.first_line  # the last hit's offset and line
        for at, hits in found:
            if at >= block.position - position + block.size:
                block = file.block(file.block_at(position + at))
                cursor, line = block.position - position, block.first_line
            line += lowered.count(b"\n", cursor, at)
            cursor = at
            hits.append(line)
        at = lowered.find(EXIT_MARKER)
        while at != -1 and len(self.exits) < MAX_EXITS:
            self.exits.append(position + at)
            at = lowered.find(EXIT_MARKER, at + 1)


def _index(file: LogFile, chunk_bytes: int) -> _Cheap:
    """The indexing pass: every chunk of `file` indexed, and what the cheap search finds in it."""
    cheap = _Cheap()
    with file.open() as stream:
        for offset, raw in read_chunks(stream, chunk_bytes):
            normal = normal_bytes(raw, offset == 0)
            first_block = len(file)
            file.add(offset, raw, normal)
            cheap.add(file, first_block, normal.lower())
    return cheap


def _chars(normal: bytes, k: int) -> int:
    """The number of characters in the first `k` normalised bytes (the same number for ASCII)."""
    k = max(0, min(k, len(normal)))
    return len(normal[:k].decode("utf-8", "replace"))


def _full_scan_ranges(size: int, exits: list[int]) -> list[tuple[int, int]]:
    """Where the full anchor scan runs: everywhere on ordinary logs, else before each failure and at the end.

    Positions are bytes of the normalised log (characters, for an ASCII log)."""
    if size <= FULL_SCAN_CHARS:
        return [(0, size)]
    ends = [size] + [at + 100 for at in exits]
    ranges = sorted((max(0, end - TAIL_SCAN_CHARS), min(size, end)) for end in ends)
    merged: list[tuple[int, int]] = []
    for start, end in ranges:
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


@dataclass
class Step:
    """A GitHub `run:`/`uses:` step: its header line, script lines and end."""

    header: int
    end: int  # exclusive
    command: str
    script: list[str] = field(default_factory=list)
    exit_line: int | None = None


class LogView:
    """The lines of one log, read back from its `LogFile` and cleaned on demand, with anchors and GitHub steps.

    Built in two passes over the log, neither of which holds it: the first indexes its chunks and
    finds the few words a very large log is searched for everywhere; the second runs the anchor
    scan over the chunks it covers. A path is read from disk; bytes or text are read from memory.
    """

    def __init__(
        self, log: str | bytes | Path, *, chunk_bytes: int = CHUNK_BYTES, block_bytes: int = BLOCK_BYTES
    ) -> None:
        if isinstance(log, str):
            log = log.encode("utf-8", "surrogatepass")
        self.file = LogFile(log, block_bytes)
        self._chunk_bytes = chunk_bytes
        self._clean: dict[int, str] = {}
        self.anchors = self._scan()
        self.steps = self._steps()

    def __len__(self) -> int:
        return self.file.lines

    def raw(self, i: int) -> str:
        return self.file.line(i)

    def clean(self, i: int) -> str:
        line = self._clean.get(i)
        if line is None:
            if len(self._clean) >= MAX_CLEAN_LINES:  # memoised by the last few thousand lines asked for
                self._clean.clear()
            line = clean_line(self.file.line(i))
            self._clean[i] = line
        return line

    def _scan(self) -> list[int]:
        cheap = _index(self.file, self._chunk_bytes)
        size = self.file.size
        lines: list[int] = []
        count = 0
        if cheap.prompt_first:
            lines.append(0)
            count = 1
        for start, end in _full_scan_ranges(size, cheap.exits):
            count += self._scan_range(start, end, lines)
        sources: list[Iterable[int]] = [lines]
        if size > FULL_SCAN_CHARS:
            room = 50 * MAX_ANCHORS - count
            for word in CHEAP_WORDS:
                taken = cheap.hits[word][: max(0, room)]
                room -= len(taken)
                sources.append(taken)
        found: list[int] = []
        tail: deque[int] = deque(maxlen=MAX_ANCHORS // 2)
        previous = -1
        for line in heapq.merge(*sources):
            if line == previous:
                continue
            previous = line
            if len(found) < MAX_ANCHORS // 2:
                found.append(line)
            else:
                tail.append(line)
        found.extend(tail)
        return [i for i in found if i < len(self)]

    def _scan_range(self, start: int, end: int, out: list[int]) -> int:
        """Anchor lines of the normalised log's bytes [start, end) appended to `out`; the number of matches.

        The blocks the range covers are read in groups of about `chunk_bytes`; each group
        after the first is scanned with the line break before it, as the whole text would be."""
        count = 0
        k = self.file.block_at(start - 1)
        while k < len(self.file):
            first = self.file.block(k)
            if first.position >= end:
                break
            last_k = k
            while last_k + 1 < len(self.file):
                following = self.file.block(last_k + 1)
                if following.position >= end or following.position - first.position >= self._chunk_bytes:
                    break
                last_k += 1
            last = self.file.block(last_k)
            size = last.position + last.size - first.position
            if size:
                count += self._scan_blocks(k, last_k, start, end, out)
            k = last_k + 1
        return count

    def _scan_blocks(self, k: int, last_k: int, start: int, end: int, out: list[int]) -> int:
        """Anchor lines of blocks `k..last_k` (as far as they lie in the bytes [start, end)) appended
        to `out`; the number of matches."""
        first, last = self.file.block(k), self.file.block(last_k)
        size = last.position + last.size - first.position
        text = self.file.text(k, last_k).lower()
        base = 0 if first.offset == 0 else 1  # the break that ends the previous line
        lowered = text if base == 0 else "\n" + text
        if first.position >= start + base and first.position + size <= end:
            lo, hi = 0, len(lowered)
        else:  # a range's edge: bytes of the normalised log to characters of this text
            normal = normal_bytes(
                self.file.raw(first.offset, last.offset + last.length - first.offset), first.offset == 0
            )
            lo = base + _chars(normal, start - first.position) if start >= first.position else 0
            hi = base + _chars(normal, end - first.position)
        offsets = [
            match.start() + (1 if match.group().startswith("\n") else 0)
            for match in ANCHOR_RE.finditer(lowered, lo, hi)
        ]
        line, pos = first.first_line, base
        for at in offsets:
            if at > pos:
                line += lowered.count("\n", pos, at)
                pos = at
            if not out or out[-1] != line:
                out.append(line)
        return len(offsets)

    def _steps(self) -> list[Step]:
        steps: list[Step] = []
        for i in self.anchors:
            line = self.clean(i)
            if line.startswith("##[group]Run "):
                if steps and steps[-1].end > i:
                    steps[-1].end = i
                step = Step(header=i, end=len(self), command=line[len("##[group]Run ") :].strip())
                j = i + 1
                while j < len(self) and j < i + 400 and SCRIPT_LINE_PREFIX in self.raw(j)[:60]:
                    step.script.append(self.clean(j))
                    j += 1
                steps.append(step)
            elif steps and EXIT_RE.match(line) and steps[-1].exit_line is None and i >= steps[-1].header:
                steps[-1].exit_line = i
                steps[-1].end = i + 1
        return steps

    def failed_steps(self) -> list[Step]:
        return [s for s in self.steps if s.exit_line is not None]
