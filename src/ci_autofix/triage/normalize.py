"""Raw log bytes into text and lines, and one raw line into the text a reader needs.

`to_text` accepts anything (invalid UTF-8, NUL, BOM, CRLF, lone CR) and runs in linear time
with C-speed string operations only; lines are cleaned by `clean_lines` (timestamp, ANSI colours,
the `gh run view --log` prefix, Travis fold markers removed), one at a time where triage reads
them lazily (`clean_line`), a piece of many lines at a time where a whole log is stored.
"""

from __future__ import annotations

import re

TIMESTAMP_RE = re.compile(r"^\ufeff?\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z ?")
GH_CLI_PREFIX_RE = re.compile(r"^[^\t\n]{1,200}\t[^\t\n]{0,200}\t(?=\ufeff?\d{4}-\d\d-\d\dT)")
ANSI_RE = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")
TRAVIS_FOLD_RE = re.compile(r"travis_(?:fold|time):(?:start|end):[^\s\x1b]*")
MARKER_RE = re.compile(r"^##\[(group|endgroup|error|warning|notice|debug|command|section)\]")
CONTROL_RE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")

MAX_LINE_CHARS = 3000  # longer lines are shown as their head and tail (a resolver's list of versions fits)


def to_text(log: str | bytes) -> str:
    """Decode and normalise newlines: `\\r\\n` and lone `\\r` end a line, NUL bytes are dropped."""
    if isinstance(log, bytes | bytearray):
        data = bytes(log[3:]) if log.startswith(b"\xef\xbb\xbf") else bytes(log)
        text = data.decode("utf-8", "replace")
    else:
        text = str(log)
    if "\x00" in text:
        text = text.replace("\x00", "")
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if text.startswith("\ufeff"):
        text = text[1:]
    return text


def shorten(line: str, limit: int = MAX_LINE_CHARS) -> str:
    """A line cut to its head and tail when it is longer than `limit` characters."""
    if len(line) <= limit:
        return line
    head = limit * 2 // 3
    tail = limit - head
    return f"{line[:head]} …[{len(line) - limit} chars]… {line[-tail:]}"


# the cleaning steps, over any number of lines at once (each pattern anchored at every line's start)
_GH_PREFIX_LINES = re.compile(GH_CLI_PREFIX_RE.pattern, re.M)
_TIMESTAMP_LINES = re.compile(TIMESTAMP_RE.pattern, re.M)
_TRAILING_SPACE = re.compile(r"[^\S\n]+$", re.M)
_LONG_LINE = re.compile(rf"^[^\n]{{{MAX_LINE_CHARS + 1},}}", re.M)
_LONG_RAW_LINE = re.compile(rf"^[^\n]{{{2 * MAX_LINE_CHARS + 1},}}", re.M)


def clean_lines(text: str) -> str:
    """Raw log lines (`to_text`'s, joined by `\n`) without timestamps, the `gh run view --log`
    prefix, ANSI codes, fold markers, control characters or trailing blanks; a line longer than
    `MAX_LINE_CHARS` is shown as its head and tail. One line or millions: the same steps."""
    text = _LONG_RAW_LINE.sub(lambda m: shorten(m.group(0), 2 * MAX_LINE_CHARS), text)
    if "\ufeff" in text:
        text = text.replace("\ufeff", "")
    if "\t" in text:
        text = _GH_PREFIX_LINES.sub("", text)
    text = _TIMESTAMP_LINES.sub("", text)
    if "\x1b" in text:
        text = ANSI_RE.sub("", text).replace("\x1b", "")
    if "travis_" in text:
        text = TRAVIS_FOLD_RE.sub("", text)
    text = _TRAILING_SPACE.sub("", CONTROL_RE.sub("", text))
    return _LONG_LINE.sub(lambda m: shorten(m.group(0)), text)


def clean_line(raw: str) -> str:
    """One raw log line, cleaned (`clean_lines`)."""
    return clean_lines(raw)


CARET_ANSI_RE = re.compile(r"\^\[\[[0-9;]*[A-Za-z]")


def without_marker(line: str) -> str:
    """A cleaned line as parsers read it: no leading `##[error]`-style marker, no `^[[31m` left by copy-paste."""
    if "^[[" in line:
        line = CARET_ANSI_RE.sub("", line)
    return MARKER_RE.sub("", line, count=1) if line.startswith("##[") else line
