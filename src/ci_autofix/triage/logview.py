"""A log as lines, with the few whole-log facts found in one linear scan.

Nothing per line runs over the whole log: one compiled alternation (`ANCHOR_RE`) finds the
lines worth reading (error words, GitHub step markers, prompt lines) at C speed, and lines are
cleaned only when a parser or the excerpt asks for them.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field

from ci_autofix.triage.normalize import clean_line, to_text

# Lower-case words that mark a line worth reading. Scanned over the lower-cased log.
ANCHOR_RE = re.compile(
    r"error|fail|exception|traceback|panic|fatal|denied|not found|cannot|can't|could not|couldn't"
    r"|unable to|exit code|exited with|exit status|undefined|killed|timed out|timeout|no space left"
    r"|rate limit|too many requests|would reformat|incorrectly sorted|violation|abort|segmentation"
    r"|assert|expected|unexpected|refused|unresolved|no such|missing|invalid|mismatch|bad |problem"
    r"|##\[group\]run |##\[endgroup\]|##\[error\]|✗|✖|×|✘|\n\$ |\x1b\[0k\$ |\n> |\n\+ |<<<"
    r"|\.py:\d|\.go:\d|\.rs:\d|:\d+:\d+[: ]|\(\d+,\d+\)|-->"
    r"|unavailable|bad gateway|econnreset|etimedout|enotfound|eai_again|resolve host|name resolution"
    r"|unreachable|cancel|shutdown signal|lost communication|exceeded|out of memory|enospc|\b429\b|\b50[0234]\b"
)
MAX_ANCHORS = 20000  # the first and last halves are kept on pathological logs

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
        self._headers = [s.header for s in self.steps]

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
        found: list[int] = []
        line, pos = 0, 0
        last = -1
        for match in ANCHOR_RE.finditer(lowered):
            start = match.start()
            if match.group().startswith("\n"):
                start += 1
            line += lowered.count("\n", pos, start)
            pos = start
            if line != last:
                found.append(line)
                last = line
        if len(found) > MAX_ANCHORS:
            half = MAX_ANCHORS // 2
            found = found[:half] + found[-half:]
        return [i for i in found if i < len(self.lines)]

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

    def step_at(self, i: int) -> Step | None:
        k = bisect.bisect_right(self._headers, i) - 1
        if k >= 0 and i < self.steps[k].end:
            return self.steps[k]
        return None
