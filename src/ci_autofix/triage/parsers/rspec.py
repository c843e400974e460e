"""RSpec: numbered `N) description` blocks under `Failures:`, and the `Failed examples:` list.

    Failures:

      1) Slug lowers and dashes
         Failure/Error: expect(Slug.of("Hello World")).to eq("hello-world")

           expected: "hello-world"
                got: "Hello World"

           (compared using ==)
         # ./spec/slug_spec.rb:9:in `block (2 levels) in <top (required)>'
    ...
    5 examples, 3 failures, 1 pending

    Failed examples:

    rspec ./spec/slug_spec.rb:8 # Slug lowers and dashes

A block is a header followed by its `Failure/Error:` line (a pending example's block, which has
none, is not a failure). Its message is the first line under `Failure/Error:` (the expectation's
`expected:` line, or the exception's class and text), its place the first frame in a spec file,
and its test id the `rspec path:line` command RSpec prints for the example in `Failed examples:`
(the line the example starts at), else the same command on the failing frame (RSpec runs the
example around a line).
"""

from __future__ import annotations

import re

from ci_autofix.triage.logview import LogView
from ci_autofix.triage.model import Failure
from ci_autofix.triage.parsers.base import Found, Parser, text

HEADER_RE = re.compile(r"^\s*\d+\) (?P<desc>\S.*)$")
FAILURE_ERROR_RE = re.compile(r"^\s*(?:Failure/Error:|Got \d+ failures?)")
FRAME_RE = re.compile(r"^\s*# (?P<file>[^\s:]+\.rb):(?P<line>\d+)(?::in |$)")
RERUN_RE = re.compile(r"^rspec (?P<place>\S+:\d+) # (?P<desc>.+)$")
END_RE = re.compile(r"^\s*(?:\d+\) \S|Finished in |\d+ examples?, )")
MAX_BLOCK_LINES = 120
MAX_RERUN_DISTANCE = 5000  # how far below a block its `Failed examples:` line is looked for


def _block(view: LogView, i: int, match: re.Match[str]) -> Found | None:
    if i + 1 >= len(view) or not FAILURE_ERROR_RE.match(text(view, i + 1)):
        return None
    last, message = i + 1, ""
    frames: list[tuple[str, int]] = []
    for j in range(i + 2, min(len(view), i + MAX_BLOCK_LINES)):
        current = text(view, j).rstrip()
        if END_RE.match(current):
            break
        if not current:
            continue
        last = j
        frame = FRAME_RE.match(current)
        if frame:
            frames.append((frame.group("file"), int(frame.group("line"))))
        elif not message:
            message = current.strip()
        elif message.endswith(":") and not frames:
            message = f"{message} {current.strip()}"  # `NoMethodError:` then its text on the next line
    spec = [frame for frame in frames if frame[0].endswith("_spec.rb")] or frames
    file, line = (spec[0][0].removeprefix("./"), spec[0][1]) if spec else (None, None)
    desc = match.group("desc").strip()
    failure = Failure(
        tool="rspec",
        kind="test",
        message=message or text(view, i + 1).strip(),
        file=file,
        line=line,
        test_id=_rerun(view, i, desc) or (f"rspec {file}:{line}" if file else None),
    )
    return Found(failure, i, last)


def _rerun(view: LogView, i: int, desc: str) -> str | None:
    """The `rspec path:line` RSpec lists under `Failed examples:` for the example `desc`."""
    for j in range(i + 1, min(len(view), i + MAX_RERUN_DISTANCE)):
        rerun = RERUN_RE.match(text(view, j).strip())
        if rerun and rerun.group("desc") == desc:
            return f"rspec {rerun.group('place')}"
    return None


LOAD_ERROR_RE = re.compile(r"^An error occurred while loading (?P<file>\S+?)\.?$")
LOAD_END_RE = re.compile(r"^(?:No examples found\.|Finished in |\d+ examples?, |An error occurred )")


def _load_error(view: LogView, i: int, match: re.Match[str]) -> Found:
    """A spec file that does not load (like pytest's collection error): no example of it runs.

    An error occurred while loading ./spec/slug_spec.rb.
    Failure/Error: require_relative "../lib/missing"

    LoadError:
      cannot load such file -- /home/runner/work/demo/demo/lib/missing
    # ./spec/slug_spec.rb:2:in `require_relative'
    """
    spec = match.group("file").removeprefix("./")
    last, message, line = i, "", None
    for j in range(i + 1, min(len(view), i + MAX_BLOCK_LINES)):
        current = text(view, j).rstrip()
        if LOAD_END_RE.match(current):
            break
        if not current:
            continue
        last = j
        frame = FRAME_RE.match(current)
        if frame:
            if line is None and frame.group("file").removeprefix("./") == spec:
                line = int(frame.group("line"))
        elif current.startswith("Failure/Error:"):
            continue
        elif not message:
            message = current.strip()
        elif message.endswith(":") and line is None:
            message = f"{message} {current.strip()}"
    failure = Failure(
        tool="rspec",
        kind="test",
        message=message or match.group(0),
        file=spec,
        line=line,
        rule="load-error",
    )
    return Found(failure, i, last)


PARSERS = (
    Parser("rspec-block", HEADER_RE, _block),
    Parser("rspec-load-error", LOAD_ERROR_RE, _load_error),
)
