"""Regular expressions the model writes, matched under a deadline.

Python's `re` backtracks without limit: `(a|aa)+$` on a line of forty `a`s and a `!` runs for
hours, and nothing can interrupt it from inside the process. The `regex` package (a superset of
`re`'s syntax, so the model's patterns keep their meaning) takes a `timeout` on every match and
also answers many patterns `re` backtracks on, such as `(a+)+$`, at once. One `Matcher` serves
one search: every match gets what is left of the search's time (its own `seconds`, or less when
the attempt's `Deadline` comes sooner), so the whole search ends by then, however many lines it
reads. A long text is searched a block of lines at a time
(`may_match_a_line`), line by line only where the block matches.
"""

from __future__ import annotations

import regex

from ci_autofix.agent.deadline import Deadline

MAX_PATTERN_CHARS = 1000


class PatternError(Exception):
    """The pattern does not compile; the message says why."""


class TooSlow(Exception):
    """The search reached its deadline."""


class Matcher:
    def __init__(
        self, pattern: str, *, seconds: float, ignore_case: bool = False, deadline: Deadline | None = None
    ) -> None:
        if len(pattern) > MAX_PATTERN_CHARS:
            raise PatternError(f"the pattern is {len(pattern)} characters long; at most {MAX_PATTERN_CHARS}")
        flags = regex.VERSION0 | (regex.IGNORECASE if ignore_case else 0)
        try:
            self._compiled = regex.compile(pattern, flags)
            self._each_line = regex.compile(pattern, flags | regex.MULTILINE)
        except regex.error as exc:
            raise PatternError(str(exc)) from None
        # `\A` and `\Z` mean a line's start and end only to a line-by-line search
        self._anchored = bool(regex.search(r"\\[AZz]", pattern))
        self.seconds = seconds
        self.deadline = (deadline or Deadline.never()).within(seconds)

    def search(self, text: str) -> bool:
        """Whether the pattern matches somewhere in `text`; `TooSlow` once the deadline has passed."""
        return self._search(self._compiled, text)

    def may_match_a_line(self, block: str) -> bool:
        """False only when no line of `block` (lines joined by newlines) can match: the pattern is
        tried on the whole block once, `^` and `$` matching at each line, so a line that matches
        makes the block match. True may also mean a match across lines: then search each line."""
        return self._anchored or self._search(self._each_line, block)

    def _search(self, compiled: regex.Pattern[str], text: str) -> bool:
        remaining = self.deadline.remaining()
        if remaining <= 0:
            raise TooSlow
        try:
            return compiled.search(text, timeout=remaining) is not None
        except TimeoutError:
            raise TooSlow from None
