"""Markdown for GitHub (PR bodies, comments, job summaries) with untrusted text kept inert.

Untrusted text (a log line, a failure message, a file or test name, a command, anything the
model or a PR says) only ever enters Markdown through these helpers, which put it inside code:
a code span or a fenced block, each delimited by a backtick run longer than any inside the text,
so the text cannot close it. Inside code GitHub renders no link, image, HTML or emphasis, and
makes no @mention or #reference (its mention filter skips `code` and `pre`; a backslash does not
stop a mention, only code does: github/cmark-gfm#181), so the text is shown exactly as it is.
"""

from __future__ import annotations

import html
import re

_BACKTICKS = re.compile(r"`+")


def _longest_backticks(text: str) -> int:
    return max((len(run) for run in _BACKTICKS.findall(text)), default=0)


def code_span(text: str, *, table: bool = False) -> str:
    """`text` as one inline code span (its whitespace folded to single spaces). In a table cell
    (`table=True`) a `|` is escaped, which GitHub undoes inside the span. Empty text gives ''."""
    text = " ".join(text.split())
    if not text:
        return ""
    if table:
        text = text.replace("|", "\\|")
    ticks = "`" * (_longest_backticks(text) + 1)
    # a space on each side keeps a leading or trailing backtick from joining the delimiter
    # (CommonMark strips exactly one such space on each side)
    padded = f" {text} " if text.startswith("`") or text.endswith("`") or len(ticks) > 1 else text
    return f"{ticks}{padded}{ticks}"


def fence(text: str, lang: str = "") -> str:
    """`text` as a fenced code block that it cannot close early (`lang` is ours: `text`, `diff`, ...)."""
    ticks = "`" * max(3, _longest_backticks(text) + 1)
    return f"{ticks}{lang}\n{text.rstrip()}\n{ticks}"


def untrusted_block(text: str) -> str:
    """Untrusted text of any length and any number of lines, shown verbatim as a `text` block."""
    return fence(text, "text")


def html_code(text: str) -> str:
    """`text` as an HTML `<code>` element, for inside raw HTML (a `<summary>`), where Markdown
    is not parsed: escaped, so it renders as text."""
    return f"<code>{html.escape(' '.join(text.split()))}</code>"
