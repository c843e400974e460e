"""`ci-autofix triage [FILE|-] [--max-tokens N] [--format text|json]`."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ci_autofix.errors import UserError
from ci_autofix.triage.jobs import DEFAULT_MAX_TOKENS, diagnose


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", nargs="?", default="-", help="a raw CI job log; '-' (default) reads stdin")
    parser.add_argument(
        "--max-tokens",
        type=int,
        default=DEFAULT_MAX_TOKENS,
        help=f"excerpt budget in estimated tokens (UTF-8 bytes / 4; default {DEFAULT_MAX_TOKENS})",
    )
    parser.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help="text prints the excerpt; json prints the whole Diagnosis",
    )


def _read(name: str) -> bytes:
    if name == "-":
        return sys.stdin.buffer.read()
    path = Path(name)
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise UserError(
            f"log file not found: {name}", "pass the path of a saved job log, or '-' to read stdin"
        ) from None
    except IsADirectoryError:
        raise UserError(
            f"{name} is a directory, not a log file", "pass the path of a saved job log file"
        ) from None
    except PermissionError:
        raise UserError(f"cannot read {name}: permission denied", "check the file's permissions") from None


def run(args: argparse.Namespace) -> int:
    if args.max_tokens < 1:
        raise UserError(f"--max-tokens must be at least 1, got {args.max_tokens}", "pass a positive budget")
    diagnosis = diagnose(_read(args.file), max_tokens=args.max_tokens)
    out = sys.stdout
    if args.format == "json":
        json.dump(diagnosis.to_json(), out, indent=2, ensure_ascii=False)
        out.write("\n")
    else:
        out.write(diagnosis.excerpt)
        if diagnosis.excerpt:
            out.write("\n")
    out.flush()
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="ci-autofix triage", description=__doc__)
    add_arguments(parser)
    args = parser.parse_args(argv)
    try:
        return run(args)
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
