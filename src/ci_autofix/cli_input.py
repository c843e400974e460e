"""What the local commands read: a file named on the command line, or standard input (`-`)."""

from __future__ import annotations

import sys
from pathlib import Path

from ci_autofix.errors import UserError


def read_input(source: str, *, what: str, example: str) -> bytes:
    """The bytes of `source`, a path or `-`; `what` names it ("log", "diff") in errors,
    `example` shows how to pipe one in."""
    if source == "-":
        if sys.stdin is None or sys.stdin.isatty():
            raise UserError(
                f"No {what} was given and standard input is a terminal.",
                f"Pass a {what} file, or pipe one in: `{example}`.",
            )
        return sys.stdin.buffer.read()
    try:
        return Path(source).read_bytes()
    except OSError as exc:
        raise UserError(
            f"Cannot read the {what} {source}: {exc.strerror or exc}.",
            f"Pass the path of a saved {what} file, or - to read standard input.",
        ) from None
