"""docker build / buildx (BuildKit) failures."""

from __future__ import annotations

from ci_autofix.triage.parsers.base import line_parser

PARSERS = (
    line_parser(
        "buildkit-solve",
        "docker",
        "build",
        r"^(?:##\[error\])?(?:ERROR|Error): failed to (?:solve|build)[:\s]*(?P<msg>.*)$",
        resolution=True,
    ),
    line_parser(
        "buildkit-step", "docker", "build", r"^#\d+ (?:\d+\.\d+ )?ERROR:? (?P<msg>.+)$", resolution=True
    ),
    line_parser(
        "buildkit-process",
        "docker",
        "build",
        r"^ERROR: process .+ did not complete successfully: (?P<msg>.+)$",
    ),
    line_parser(
        "docker-legacy", "docker", "build", r"^The command '(?P<msg>.+)' returned a non-zero code: \d+$"
    ),
)
