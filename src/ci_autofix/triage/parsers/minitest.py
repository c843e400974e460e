"""minitest (`ruby -Itest`, `rake test`, `bin/rails test`): numbered `Failure:`/`Error:` blocks.

      1) Failure:
    SlugTest#test_lowers_and_dashes [test/slug_test.rb:10]:
    Expected: "hello-world"
      Actual: "Hello World"

      2) Error:
    SlugTest#test_raises:
    NoMethodError: undefined method `strip' for nil:NilClass
        lib/slug.rb:3:in `of'
        test/slug_test.rb:14:in `test_raises'

The line under the header names the test as minitest selects it (`Class#test_name`, what
`--name` takes) and, for a failure, its place in brackets; an error's place is the backtrace frame
of the test method. The message is the next line. Rails' runner prints the same blocks (without
the number) and after each one the command that re-runs it, `bin/rails test path:line`, which is
then the test id.
"""

from __future__ import annotations

import re

from ci_autofix.triage.logview import LogView
from ci_autofix.triage.model import Failure
from ci_autofix.triage.parsers.base import Found, Parser, text

HEADER_RE = re.compile(r"^\s*(?:\d+\) )?(?P<rule>Failure|Error):$")
# `SlugTest#test_trims`; minitest/spec names hold spaces: `Slug::with titles#test_0001_lowers and dashes`
TEST_RE = re.compile(r"^(?P<test>[^\s#][^#]*#.+?)(?: \[(?P<file>[^\[\]\s]+\.rb):(?P<line>\d+)\])?:$")
FRAME_RE = re.compile(r"^\s*(?P<file>[^\s:]+\.rb):(?P<line>\d+):in [`'](?:\S+[#.])?(?P<method>\w+)'$")
RAILS_RERUN_RE = re.compile(r"^(?P<cmd>(?:bin/)?rails test \S+:\d+)$")
END_RE = re.compile(r"^\s*(?:(?:\d+\) )?(?:Failure|Error):$|\d+ runs, \d+ assertions|Finished in )")
MAX_BLOCK_LINES = 120


def _block(view: LogView, i: int, match: re.Match[str]) -> Found | None:
    test = TEST_RE.match(text(view, i + 1).strip()) if i + 1 < len(view) else None
    if test is None:
        return None
    method = test.group("test").rpartition("#")[2]
    file, line = test.group("file"), int(test.group("line")) if test.group("line") else None
    last, message, test_id = i + 1, "", test.group("test")
    for j in range(i + 2, min(len(view), i + MAX_BLOCK_LINES)):
        current = text(view, j).rstrip()
        if END_RE.match(current):
            break
        if not current:
            continue
        last = j
        rerun = RAILS_RERUN_RE.match(current.strip())
        if rerun:
            test_id = rerun.group("cmd")
            break
        frame = FRAME_RE.match(current)
        if frame and file is None and frame.group("method") == method:
            file, line = frame.group("file"), int(frame.group("line"))
        elif not frame and not message:
            message = current.strip()
    failure = Failure(
        tool="minitest",
        kind="test",
        message=message or test.group(0),
        file=file,
        line=line,
        test_id=test_id,
        rule=match.group("rule"),
    )
    return Found(failure, i, last)


PARSERS = (Parser("minitest-block", HEADER_RE, _block),)
