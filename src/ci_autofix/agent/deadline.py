"""When a tool call must stop: a point on a clock, checked as the work goes.

Two limits bound every slow piece of a tool: its own (a search matches for at most a few seconds;
past it, the model is told to search differently) and the attempt's (`max-minutes`; past it, the
attempt is over). A `Deadline` is one such point; `within(seconds)` is the sooner of the two, so
a piece of work takes one deadline and stops at whichever comes first. The tools find out which
one it was afterwards: when the attempt's deadline has passed, the tool call raises `OutOfTime`
and the loop halts the attempt, naming the tool (`Toolbox.dispatch`).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Deadline:
    """`at` on `clock`'s time line (the attempt's clock; `time.monotonic` unless a test gives another)."""

    at: float
    clock: Callable[[], float] = field(default=time.monotonic, compare=False)

    @classmethod
    def never(cls) -> Deadline:
        return cls(math.inf)

    def remaining(self) -> float:
        """Seconds left (zero or less once it has passed)."""
        return self.at - self.clock()

    def passed(self) -> bool:
        return self.remaining() <= 0

    def within(self, seconds: float) -> Deadline:
        """The sooner of this deadline and `seconds` from now."""
        return Deadline(min(self.at, self.clock() + seconds), self.clock)


class OutOfTime(Exception):
    """The attempt's deadline passed while the tool `tool` ran: the attempt is over."""

    def __init__(self, tool: str) -> None:
        super().__init__(f"the attempt's deadline passed inside the `{tool}` tool")
        self.tool = tool
