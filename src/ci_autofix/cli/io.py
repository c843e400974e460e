"""What the local commands read: a file named on the command line, or standard input (`-`).

A log must be text: an empty or binary one is refused with what to pass instead, so no command
reports "0 failures" on a log that was never there. A log is handed on as a path and never read
whole: a file is checked from its head, standard input is first spooled to a temporary file.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO

from ci_autofix.errors import UserError
from ci_autofix.settings import Local, Settings, flag_words, load_settings


def load(local: Local | None = None, **overrides: Any) -> Settings:
    """The settings, read and checked before any work is done: their own validation, then what only
    a stage knows (the names of the fixers, the price table in `CI_AUTOFIX_PRICES`), so a bad value
    is reported at once. `local`: the local command reading them (its messages name flags)."""
    from ci_autofix.agent.pricing import PRICES_ENV, price_table
    from ci_autofix.fixers.plan import parse_requested

    settings = load_settings(local, **overrides)
    try:
        parse_requested(settings.fixers)
    except UserError as exc:  # it names the `fixers` input: the flag, locally
        if local is None:
            raise
        help_line = f"`ci-autofix {local.command} --help` lists each flag's accepted values."
        raise UserError(flag_words(exc.cause), f"{flag_words(exc.remedy)} {help_line}") from None
    try:
        price_table()
    except UserError as exc:
        where = "the step's `env:`" if local is None else "your environment (or unset it)"
        raise UserError(exc.cause, f"Correct {PRICES_ENV} in {where}. {exc.remedy}") from None
    return settings


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


SAVE_A_LOG = "gh run view <run-id> --log-failed > ci.log"
# How much of a log is looked at to tell text from binary data (git looks at 8000 bytes for NUL).
_SNIFF = 64 * 1024
_COPY_BYTES = 1 << 20


@contextmanager
def log_file(source: str, *, example: str) -> Iterator[Path]:
    """The path of the CI log `source` (a path, or `-`: standard input streamed to a temporary
    file that is removed on exit), refused when empty or not text. The log is never read whole."""
    if source != "-":
        path = Path(source)
        try:
            with path.open("rb") as stream:
                _check_log(stream, source)
        except OSError as exc:
            raise UserError(
                f"Cannot read the log {source}: {exc.strerror or exc}.",
                "Pass the path of a saved log file, or - to read standard input.",
            ) from None
        yield path
        return
    if sys.stdin is None or sys.stdin.isatty():
        raise UserError(
            "No log was given and standard input is a terminal.",
            f"Pass a log file, or pipe one in: `{example}`.",
        )
    with tempfile.TemporaryDirectory(prefix="ci-autofix-log-") as tmp:
        path = Path(tmp) / "stdin.log"
        with path.open("wb") as out:
            shutil.copyfileobj(sys.stdin.buffer, out, _COPY_BYTES)
        with path.open("rb") as stream:
            _check_log(stream, "-")
        yield path


def _check_log(stream: BinaryIO, source: str) -> None:
    """Refuse a log that is empty (or only whitespace) or binary, from its head (and, for blank
    logs, as far as the first character that is not whitespace)."""
    name = "on standard input" if source == "-" else source
    head = stream.read(_SNIFF)
    block = head
    while block and not block.strip():
        block = stream.read(_COPY_BYTES)
    if not block.strip():
        raise UserError(
            f"The log {name} is empty.",
            f"Pass the log of a failed job, saved with `{SAVE_A_LOG}` or from the job's page (⋯ → View raw logs).",
        )
    if kind := binary_kind(head):
        remedy = {
            "a zip archive": "GitHub's log download for a whole run is a zip of one file per job: unzip it "
            "and pass the failed job's .txt file.",
            "gzip-compressed": "Decompress it first (`gunzip -k FILE`) and pass the text.",
        }.get(kind, f"Pass the text log of a failed job, saved with `{SAVE_A_LOG}`.")
        raise UserError(f"The log {name} is {kind}, not the text of a CI log.", remedy)


def binary_kind(data: bytes) -> str | None:
    """What `data` is when it is not text ("a zip archive", "gzip-compressed", "binary data"), else None."""
    if data.startswith(b"PK\x03\x04"):
        return "a zip archive"
    if data.startswith(b"\x1f\x8b"):
        return "gzip-compressed"
    head = data[:_SNIFF]
    if b"\x00" in head[:8000]:
        return "binary data"
    text = head.decode("utf-8", errors="replace")
    if text.count("\ufffd") > len(text) // 10:  # more than a tenth undecodable: not a UTF-8 log
        return "binary data"
    return None
