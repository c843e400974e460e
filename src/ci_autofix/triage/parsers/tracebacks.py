"""Stack traces: Python tracebacks, JavaScript/Java exceptions with `at` frames, panics."""

from __future__ import annotations

import re

from ci_autofix.triage.logview import LogView
from ci_autofix.triage.model import Failure
from ci_autofix.triage.parsers.base import Found, Parser, indent, text

PY_HEAD_RE = re.compile(r"^(?P<pad>\s*)Traceback \(most recent call last\):$")
PY_EXC_RE = re.compile(
    r"^(?P<exc>[A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Failure|Warning)?)(?::\s*(?P<msg>.*))?$"
)
PY_FRAME_RE = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+)')
AT_FRAME_RE = re.compile(r"^\s*at |^\t+at |^\s*\.\.\. \d+ more$|^\s*Caused by: ")
EXC_HEAD_RE = re.compile(
    r"^(?:Exception in thread \"[^\"]*\" |Uncaught |Error: )?(?P<exc>[\w.$]*(?:Error|Exception|Failure|Throwable))"
    r"(?::\s*(?P<msg>.*))?$"
)
MAX_TRACE = 80


def _python(view: LogView, i: int, match: re.Match[str]) -> Found:
    pad = len(match.group("pad"))
    last, message, file, line = i, None, None, None
    for j in range(i + 1, min(len(view), i + 400)):
        current = text(view, j)
        stripped = current[pad:] if len(current) >= pad else current.lstrip()
        last = j
        frame = PY_FRAME_RE.match(current)
        if frame:
            file, line = frame.group("file"), int(frame.group("line"))
            continue
        if stripped and not stripped[0].isspace():
            exc = PY_EXC_RE.match(stripped)
            if (
                exc
                and exc.group("exc")
                and not stripped.startswith(("During handling", "The above exception"))
            ):
                message = stripped.strip()
                break
    failure = Failure(tool="python", kind="error", message=message or "Traceback", file=file, line=line)
    return Found(failure, i, last)


def _frames(view: LogView, i: int, match: re.Match[str]) -> Found | None:
    if i + 1 >= len(view) or not AT_FRAME_RE.match(text(view, i + 1)):
        return None
    last = i + 1
    for j in range(i + 2, min(len(view), i + MAX_TRACE)):
        current = text(view, j)
        if not AT_FRAME_RE.match(current) and not (
            current.strip() and indent(current) > 0 and "Caused by" in current
        ):
            break
        last = j
    failure = Failure(tool="runtime", kind="error", message=match.group(0).strip())
    return Found(failure, i, last)


def _rust_go_panic(view: LogView, i: int, match: re.Match[str]) -> Found:
    last = min(len(view) - 1, i + 3)
    for j in range(i + 1, min(len(view), i + 6)):
        if not text(view, j).strip():
            last = j - 1
            break
    return Found(Failure(tool="runtime", kind="error", message=match.group(0).strip()), i, max(i, last))


PARSERS = (
    Parser("python-traceback", PY_HEAD_RE, _python),
    Parser("exception-frames", EXC_HEAD_RE, _frames),
    Parser("thread-panic", re.compile(r"^thread '[^']*' panicked at .+"), _rust_go_panic),
)
