"""TAP, the Test Anything Protocol (node:test, node-tap, tape, Bats, Perl's prove): `not ok N - name`.

A failed test point is followed by its YAML diagnostic block (`  ---` ... `  ...`) or by `#`
comment lines; both are its evidence. A point with a `# TODO` or `# SKIP` directive is not a
failure (TAP says so), and `ok N - ...` never is, whatever its name says.
"""

from __future__ import annotations

import re

from ci_autofix.triage.logview import LogView
from ci_autofix.triage.model import Failure
from ci_autofix.triage.parsers.base import Found, Parser, text

NOT_OK_RE = re.compile(r"^\s*not ok \d+\b(?:\s*-)?\s*(?P<test>[^#]*?)\s*(?:#\s*(?P<directive>\w+).*)?$", re.I)
DIRECTIVES = ("todo", "skip")  # `# SKIP reason`, `# skipped: reason`, `# TODO later`
YAML_START_RE = re.compile(r"^\s+---\s*$")
YAML_END_RE = re.compile(r"^\s+\.\.\.\s*$")
COMMENT_RE = re.compile(r"^\s*#\s")
BLOCK_LINES = 60


def _not_ok(view: LogView, i: int, match: re.Match[str]) -> Found | None:
    directive = (match.group("directive") or "").lower()
    if directive.startswith(DIRECTIVES):
        return None
    last = i
    end = min(len(view), i + 1 + BLOCK_LINES)
    if i + 1 < end and YAML_START_RE.match(text(view, i + 1)):
        for j in range(i + 1, end):
            last = j
            if j > i + 1 and YAML_END_RE.match(text(view, j)):
                break
    else:
        for j in range(i + 1, end):
            if not COMMENT_RE.match(text(view, j)):
                break
            last = j
    test = match.group("test") or None
    failure = Failure(tool="tap", kind="test", message=match.group(0).strip(), test_id=test)
    return Found(failure, i, last)


PARSERS = (Parser("tap-not-ok", NOT_OK_RE, _not_ok),)
