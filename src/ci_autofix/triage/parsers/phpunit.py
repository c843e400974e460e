"""PHPUnit (and Pest, ParaTest, which print the same report): numbered `N) Class::test` blocks.

    There were 2 failures:

    1) App\\Tests\\ParserTest::testEmpty
    Failed asserting that two strings are identical.
    --- Expected
    +++ Actual
    @@ @@
    -'a'
    +'b'

    tests/ParserTest.php:21

    2) App\\Tests\\ParserTest::testNested with data set #3 ('x')
    ...
    FAILURES!
    Tests: 12, Assertions: 30, Failures: 2.

A block runs from its header to the next header or the end of the report; its message is the
line under the header, its place the last `file.php:N` line of the block (the test's frame).
"""

from __future__ import annotations

import re

from ci_autofix.triage.logview import LogView
from ci_autofix.triage.model import Failure
from ci_autofix.triage.parsers.base import Found, Parser, text

HEADER_RE = re.compile(r"^\d+\) (?P<test>[\w\\]+::\w+).*$")
END_RE = re.compile(r"^(?:FAILURES!|ERRORS!|There (?:was|were) \d+ |OK, but |Tests: \d+, Assertions: )")
FRAME_RE = re.compile(r"^(?P<file>\S+\.php):(?P<line>\d+)$")
MAX_BLOCK_LINES = 120


def _block(view: LogView, i: int, match: re.Match[str]) -> Found:
    last, file, line = i, None, None
    message = text(view, i + 1).strip() if i + 1 < len(view) else ""
    for j in range(i + 1, min(len(view), i + MAX_BLOCK_LINES)):
        current = text(view, j).rstrip()
        if HEADER_RE.match(current) or END_RE.match(current):
            break
        if current:
            last = j
        frame = FRAME_RE.match(current.strip())
        if frame:
            file, line = frame.group("file"), int(frame.group("line"))
    failure = Failure(
        tool="phpunit",
        kind="test",
        message=message or match.group(0),
        file=file,
        line=line,
        test_id=match.group("test"),
    )
    return Found(failure, i, last)


PARSERS = (Parser("phpunit-block", HEADER_RE, _block),)
