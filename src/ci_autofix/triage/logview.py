"""A log as lines, with the few whole-log facts found in one linear scan.

Nothing per line runs over the whole log: one compiled alternation (`ANCHOR_RE`) finds the
lines worth reading (error words, GitHub step markers, prompt lines) at C speed, and lines are
cleaned only when a parser or the excerpt asks for them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ci_autofix.triage.normalize import clean_line, to_text

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


@dataclass
class Step:
    """A GitHub `run:`/`uses:` step: its header line, script lines and end."""

    header: int
    end: int  # exclusive
    command: str
    script: list[str] = field(default_factory=list)
    exit_line: int | None = None


class LogView:
    """The lines of one log, cleaned on demand, with anchors and GitHub steps."""

    def __init__(self, log: str | bytes) -> None:
        text = to_text(log)
        self.size = len(text)
        self.lines: list[str] = text.split("\n")
        if self.lines and self.lines[-1] == "":
            self.lines.pop()
        self._clean: dict[int, str] = {}
        self.anchors = self._scan(text)
        self.steps = self._steps()

    def __len__(self) -> int:
        return len(self.lines)

    def clean(self, i: int) -> str:
        line = self._clean.get(i)
        if line is None:
            line = clean_line(self.lines[i])
            self._clean[i] = line
        return line

    def _scan(self, text: str) -> list[int]:
        lowered = text.lower()
        offsets: list[int] = [0] if lowered.startswith(("$ ", "> ", "+ ")) else []
        for start, end in self._full_scan_ranges(lowered):
            for match in ANCHOR_RE.finditer(lowered, start, end):
                offsets.append(match.start() + (1 if match.group().startswith("\n") else 0))
        if len(lowered) > FULL_SCAN_CHARS:
            for word in CHEAP_WORDS:
                at = lowered.find(word)
                while at != -1 and len(offsets) < 50 * MAX_ANCHORS:
                    offsets.append(at)
                    at = lowered.find(word, at + len(word))
            offsets.sort()
        found: list[int] = []
        line, pos = 0, 0
        for start in offsets:
            line += lowered.count("\n", pos, start)
            pos = start
            if not found or found[-1] != line:
                found.append(line)
        if len(found) > MAX_ANCHORS:
            half = MAX_ANCHORS // 2
            found = found[:half] + found[-half:]
        return [i for i in found if i < len(self.lines)]

    @staticmethod
    def _full_scan_ranges(lowered: str) -> list[tuple[int, int]]:
        """Where the full anchor scan runs: everywhere on ordinary logs, else before each failure and at the end."""
        size = len(lowered)
        if size <= FULL_SCAN_CHARS:
            return [(0, size)]
        ends = [size]
        at = lowered.find("##[error]process completed with exit code")
        while at != -1 and len(ends) < 100:
            ends.append(at + 100)
            at = lowered.find("##[error]process completed with exit code", at + 1)
        ranges = sorted((max(0, end - TAIL_SCAN_CHARS), min(size, end)) for end in ends)
        merged: list[tuple[int, int]] = []
        for start, end in ranges:
            if merged and start <= merged[-1][1]:
                merged[-1] = (merged[-1][0], max(merged[-1][1], end))
            else:
                merged.append((start, end))
        return merged

    def _steps(self) -> list[Step]:
        steps: list[Step] = []
        for i in self.anchors:
            line = self.clean(i)
            if line.startswith("##[group]Run "):
                if steps and steps[-1].end > i:
                    steps[-1].end = i
                step = Step(header=i, end=len(self.lines), command=line[len("##[group]Run ") :].strip())
                j = i + 1
                while j < len(self.lines) and j < i + 400 and SCRIPT_LINE_PREFIX in self.lines[j][:60]:
                    step.script.append(self.clean(j))
                    j += 1
                steps.append(step)
            elif steps and EXIT_RE.match(line) and steps[-1].exit_line is None and i >= steps[-1].header:
                steps[-1].exit_line = i
                steps[-1].end = i + 1
        return steps

    def failed_steps(self) -> list[Step]:
        return [s for s in self.steps if s.exit_line is not None]
