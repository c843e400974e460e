"""`ci-autofix check-diff [FILE|-]`: the patch policy as a standalone check on any unified diff.

Exit codes: 0 clean, 1 flagged, 2 blocked, 3 when there is no diff to check (a missing file, a
directory, an empty or blank input). An empty diff is never "clean": it is what `git diff` pipes
on when it failed (a mistyped ref) or compared two identical trees, and in neither case was
anything checked. Argument errors found by argparse exit 2 as argparse always does, before
`run` is reached; use `--format json` and read `status` when the distinction matters.
"""

from __future__ import annotations

import argparse
import sys

from ci_autofix.cli.io import read_input
from ci_autofix.errors import UserError
from ci_autofix.policy import DEFAULT_PROTECTED, check_diff
from ci_autofix.policy.model import Verdict

EXIT_CODES = {"clean": 0, "flagged": 1, "blocked": 2}
EXIT_ERROR = 3
EPILOG = (
    "exit codes: 0 clean, 1 flagged, 2 blocked (or a wrong argument, as argparse reports it), "
    "3 the diff cannot be read or is empty (a missing file, a directory, no input, only blank lines); "
    "130 interrupted."
)
# The verdict's Markdown heads a fix's PR body; standalone no fix exists, so the head is this.
_STANDALONE_HEAD = {
    "blocked": "**Patch policy: blocked.** This diff breaks a rule that no fix may break.",
    "flagged": "**Patch policy: flagged.** Please look at these points before approving the diff.",
}


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
        help=f"a path glob no change may touch, besides the {len(DEFAULT_PROTECTED)} globs of the files that "
        "decide what CI runs, who must review and what a merge bot merges (the README's Security section "
        "lists them) (repeatable)",
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
        if not data.strip():
            raise _empty(args.diff)
    except UserError as exc:
        print(f"ci-autofix check-diff: {exc}", file=sys.stderr)
        return EXIT_ERROR
    verdict = check_diff(
        data, protected=args.protected, max_changed_lines=args.max_changed_lines, max_files=args.max_files
    )
    output = {"json": verdict.to_json, "markdown": lambda: _markdown(verdict), "text": verdict.to_text}[
        args.format
    ]()
    sys.stdout.write(output + "\n")
    return EXIT_CODES[verdict.status]


def _markdown(verdict: Verdict) -> str:
    """The verdict's Markdown with a head that fits a diff checked on its own (nothing was proposed)."""
    markdown = verdict.to_markdown()
    if verdict.status not in _STANDALONE_HEAD:
        return markdown
    _, _, table = markdown.partition("\n\n")
    return _STANDALONE_HEAD[verdict.status] + "\n\n" + table


def _read(source: str) -> bytes:
    return read_input(source, what="diff", example="git diff | ci-autofix check-diff -")


def _empty(source: str) -> UserError:
    name = "on standard input" if source == "-" else source
    return UserError(
        f"The diff {name} is empty: there is nothing to check.",
        "If it came from `git diff A...B`, run that command alone and read its error: a mistyped or "
        "unfetched ref (`git fetch origin`, then `git rev-parse A B`) prints nothing on stdout, and so does "
        "a range without changes. Pass the file or pipe of a diff that has changes.",
    )


def _positive(value: str) -> int:
    number = int(value)
    if number < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return number


def main(argv: list[str] | None = None) -> int:
    """`python -m ci_autofix.cli.check_diff`: the same command and exit codes as `ci-autofix check-diff`."""
    from ci_autofix.cli import main as cli_main

    return cli_main(["check-diff", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    sys.exit(main())
