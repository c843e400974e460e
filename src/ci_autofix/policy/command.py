"""`ci-autofix check-diff [FILE|-]`: the patch policy as a standalone check on any unified diff.

Exit codes: 0 clean, 1 flagged, 2 blocked, 3 when the diff cannot be read (a missing file, a
directory, no input). Argument errors found by argparse exit 2 as argparse always does, before
`run` is reached; use `--format json` and read `status` when the distinction matters.
"""

from __future__ import annotations

import argparse
import sys

from ci_autofix.cli_input import read_input
from ci_autofix.errors import UserError
from ci_autofix.policy import DEFAULT_PROTECTED, check_diff

EXIT_CODES = {"clean": 0, "flagged": 1, "blocked": 2}
EXIT_ERROR = 3


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "diff",
        nargs="?",
        default="-",
        metavar="FILE|-",
        help="unified diff to check, as `git diff` or GitHub's `.diff` produce it (default: stdin)",
    )
    parser.add_argument(
        "--format",
        choices=("text", "json", "markdown"),
        default="text",
        help="how to print the verdict (default: text)",
    )
    parser.add_argument(
        "--protected",
        action="append",
        default=[],
        metavar="GLOB",
        help=f"a path glob no change may touch, besides {', '.join(DEFAULT_PROTECTED)} (repeatable)",
    )
    parser.add_argument(
        "--max-changed-lines",
        type=_positive,
        default=200,
        metavar="N",
        help="block diffs that add and remove more lines than this (default: 200)",
    )
    parser.add_argument(
        "--max-files",
        type=_positive,
        default=10,
        metavar="N",
        help="block diffs that touch more files than this (default: 10)",
    )


def run(args: argparse.Namespace) -> int:
    """Check the diff and print the verdict; the exit code is the status (see the module docstring)."""
    try:
        data = _read(args.diff)
    except UserError as exc:
        print(f"ci-autofix check-diff: {exc}", file=sys.stderr)
        return EXIT_ERROR
    verdict = check_diff(
        data, protected=args.protected, max_changed_lines=args.max_changed_lines, max_files=args.max_files
    )
    output = {"json": verdict.to_json, "markdown": verdict.to_markdown, "text": verdict.to_text}[
        args.format
    ]()
    sys.stdout.write(output + "\n")
    return EXIT_CODES[verdict.status]


def _read(source: str) -> bytes:
    return read_input(source, what="diff", example="git diff | ci-autofix check-diff -")


def _positive(value: str) -> int:
    number = int(value)
    if number < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return number


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="ci-autofix check-diff", description=__doc__.splitlines()[0])
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
