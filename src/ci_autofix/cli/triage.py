"""`ci-autofix triage [FILE|-] [--max-tokens N] [--format text|json]`."""

from __future__ import annotations

import argparse
import json
import sys

from ci_autofix.cli.io import log_file
from ci_autofix.errors import UserError
from ci_autofix.triage.jobs import DEFAULT_MAX_TOKENS, diagnose

EPILOG = (
    "exit codes: 0 the excerpt (or the diagnosis) is printed; 2 a wrong argument, or the log is missing, "
    "empty or not text (the message says what to do); 130 interrupted."
)


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


def run(args: argparse.Namespace) -> int:
    if args.max_tokens < 1:
        raise UserError(f"--max-tokens must be at least 1, got {args.max_tokens}", "pass a positive budget")
    with log_file(args.file, example="gh run view <id> --log-failed | ci-autofix triage -") as log:
        diagnosis = diagnose(log, max_tokens=args.max_tokens)
    out = sys.stdout
    if args.format == "json":
        json.dump(diagnosis.to_json(), out, indent=2, ensure_ascii=False)
        out.write("\n")
    else:
        out.write(diagnosis.excerpt)
        if diagnosis.excerpt:
            out.write("\n")
    return 0


def main(argv: list[str] | None = None) -> int:
    """`python -m ci_autofix.cli.triage`: the same command, errors and exit codes as `ci-autofix triage`."""
    from ci_autofix.cli import main as cli_main

    return cli_main(["triage", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    sys.exit(main())
