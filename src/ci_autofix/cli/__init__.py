"""The command line: the Action (no command) and the local commands, one module each.

`main()` parses the arguments and runs one command inside one error handler: a `UserError`
names its cause and remedy (exit 2), a closed pipe ends quietly, Ctrl-C exits 130. With no
command it runs as the GitHub Action (`action`), the container's entrypoint.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from ci_autofix import __version__
from ci_autofix.errors import UserError

# Exit codes every local command shares (each command's `--help` lists its own besides these).
EXIT_USAGE = 2  # a wrong argument or input: the message names the cause and the remedy
EXIT_INTERRUPTED = 130  # Ctrl-C


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args:
        if os.environ.get("GITHUB_ACTIONS") != "true":
            print(f"error: {_not_in_actions()}", file=sys.stderr)
            return EXIT_USAGE
        from ci_autofix.cli.action import run_action

        return run_action()
    parser = build_parser(args[0])
    try:
        ns, unknown = parser.parse_known_args(args)
        if unknown:  # said by the command's own parser, so the usage shown is the command's
            command_parser: argparse.ArgumentParser = getattr(ns, "command_parser", parser)
            command_parser.error(f"unrecognized arguments: {' '.join(unknown)}")
        if not getattr(ns, "handler", None):
            parser.print_help()
            return EXIT_USAGE
        result: int = ns.handler(ns)
        sys.stdout.flush()  # a closed pipe is found here, not at exit
        return result
    except UserError as exc:
        from ci_autofix.flows.ended import local_words

        print(f"error: {local_words(str(exc))}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:  # `ci-autofix triage LOG | head`: the reader has what it wanted
        _discard_stdout()
        return 0
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except Exception as exc:
        from ci_autofix.git import GitError  # imported here: `--help` does not wait for it

        if not isinstance(exc, GitError):
            raise
        # checked for up front where we can: the repository changed since, or git itself broke
        print(
            f"error: {exc}\n  What to do: Check that the repository is intact (`git fsck`) and that you can "
            "read and write it, then run the command again; if both hold, please report this message as a bug.",
            file=sys.stderr,
        )
        return EXIT_USAGE


def _not_in_actions() -> UserError:
    return UserError(
        "Without a command, ci-autofix runs as the GitHub Action, and this is not a GitHub Actions run "
        "(GITHUB_ACTIONS is not `true`).",
        "Run one of the local commands: `ci-autofix fix LOG` to fix a failure from a saved log, "
        "`ci-autofix triage LOG` to see what failed, `ci-autofix demo` to try it on a sample; "
        "`ci-autofix --help` lists them all.",
    )


def _discard_stdout() -> None:
    """Point stdout at /dev/null, so the interpreter's last flush of what is left does not fail too."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


# The local commands: name, one line of help, and the module that parses and runs it. Only the
# module of the command being run is imported (`fix` loads the settings, `check-diff` the policy:
# `triage LOG` has no use for either).
COMMANDS: tuple[tuple[str, str, str], ...] = (
    (
        "fix",
        "Run the fix stages on a local checkout and a failed CI log; the fix is committed on a local "
        "side branch and your working tree is left as it was.",
        "ci_autofix.cli.fix",
    ),
    (
        "triage",
        "Print the failure-explaining excerpt of a CI log (or its diagnosis as JSON).",
        "ci_autofix.cli.triage",
    ),
    (
        "check-diff",
        "Check a unified diff against the patch policy (exit 0 clean, 1 flagged, 2 blocked, 3 no diff: "
        "unreadable or empty).",
        "ci_autofix.cli.check_diff",
    ),
    ("demo", "Create a small project with a real failing check and run `fix` on it.", "ci_autofix.cli.demo"),
)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser, with the arguments of `command` (the one being run; None: no command's)."""
    parser = argparse.ArgumentParser(
        prog="ci-autofix",
        description="Turn a failed CI run into a verified fix. Without a command, runs as the GitHub Action "
        "(reading INPUT_* and GITHUB_* from the environment).",
    )
    parser.add_argument("--version", action="version", version=f"ci-autofix {__version__}")
    sub = parser.add_subparsers(title="commands", metavar="COMMAND")
    for name, help_text, module_name in COMMANDS:
        sp = sub.add_parser(name, help=help_text, description=help_text)
        if name == command:
            module = importlib.import_module(module_name)
            sp.epilog = module.EPILOG
            module.add_arguments(sp)
            sp.set_defaults(handler=module.run, command_parser=sp)
    return parser
