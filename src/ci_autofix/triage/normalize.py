"""Raw log bytes into text and lines, and one raw line into the text a reader needs.

`to_text` accepts anything (invalid UTF-8, NUL, BOM, CRLF, lone CR) and runs in linear time
with C-speed string operations only; lines are cleaned lazily, one at a time, by `clean_line`
(timestamp, ANSI colours, the `gh run view --log` prefix, Travis fold markers removed).
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


def clean_line(raw: str) -> str:
    """A raw log line without timestamp, ANSI codes, fold markers or control characters."""
    line = shorten(raw, MAX_LINE_CHARS * 2)
    if line.startswith("\ufeff"):
        line = line[1:]
    if "\t" in line[:400]:
        line = GH_CLI_PREFIX_RE.sub("", line, count=1)
    if line[:1].isdigit():
        line = TIMESTAMP_RE.sub("", line, count=1)
    if "\x1b" in line:
        line = ANSI_RE.sub("", line).replace("\x1b", "")
    if "travis_" in line:
        line = TRAVIS_FOLD_RE.sub("", line)
    line = CONTROL_RE.sub("", line)
    return shorten(line.rstrip())


CARET_ANSI_RE = re.compile(r"\^\[\[[0-9;]*[A-Za-z]")


def without_marker(line: str) -> str:
    """A cleaned line as parsers read it: no leading `##[error]`-style marker, no `^[[31m` left by copy-paste."""
    if "^[[" in line:
        line = CARET_ANSI_RE.sub("", line)
    return MARKER_RE.sub("", line, count=1) if line.startswith("##[") else line
