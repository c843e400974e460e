"""unittest (and nose, Django's runner): `FAIL: test (module.Class)` blocks."""

from __future__ import annotations

import re

from ci_autofix.triage.logview import LogView
from ci_autofix.triage.model import Failure
from ci_autofix.triage.parsers.base import Found, Parser, text

HEADER_RE = re.compile(r"^(?P<rule>FAIL|ERROR): (?P<name>\w+) \((?P<cls>[\w.]+)\)(?P<doc>.*)$")
END_RE = re.compile(r"^(?:={20,}|-{20,})$")
EXC_RE = re.compile(r"^(?P<exc>[\w.]+(?:Error|Exception|Failure))(?::\s*(?P<msg>.*))?$")
FILE_RE = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+)')


def _block(view: LogView, i: int, match: re.Match[str]) -> Found:
    last, message, file, line = i, None, None, None
    started = False
    for j in range(i + 1, min(len(view), i + 100)):
        current = text(view, j).rstrip()
        if END_RE.match(current):
            if started:
                break
            started = True
            last = j
            continue
        last = j
        frame = FILE_RE.match(current)
        if frame:
            file, line = frame.group("file"), int(frame.group("line"))
        exc = EXC_RE.match(current)
        if exc:
            message = current
    cls = match.group("cls")
    test_id = cls if cls.endswith("." + match.group("name")) else f"{cls}.{match.group('name')}"
    failure = Failure(
        tool="unittest",
        kind="test",
        message=message or match.group(0),
        file=file,
        line=line,
        test_id=test_id,
        rule=match.group("rule"),
    )
    return Found(failure, i, last)


PARSERS = (Parser("unittest-block", HEADER_RE, _block),)
