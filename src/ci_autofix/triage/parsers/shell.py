"""Shell and CI-runner failure lines: missing commands, files, make targets, exit codes."""

from __future__ import annotations

from ci_autofix.triage.parsers.base import line_parser

PARSERS = (
    line_parser(
        "command-not-found",
        "shell",
        "build",
        r"^(?:.*?: )?(?:line \d+: )?(?P<test>[\w./-]+): (?:command )?not found$",
    ),
    line_parser(
        "no-such-file", "shell", "build", r"^(?P<msg>.*: (?P<file>[^\s:]+): No such file or directory)$"
    ),
    line_parser(
        "make", "make", "build", r"^(?:g?make(?:\[\d+\])?): \*\*\* (?P<msg>.+?)(?: Error (?P<rule>\d+))?$"
    ),
    line_parser(
        "travis-exit",
        "shell",
        "error",
        r"^The command \"(?P<msg>.+)\" (?:exited with|failed and exited with) (?P<rule>[1-9]\d*)(?: during .*)?\.$",
    ),
    line_parser("jenkins-exit", "shell", "error", r"^(?:ERROR: )?script returned exit code (?P<rule>\d+)$"),
)
