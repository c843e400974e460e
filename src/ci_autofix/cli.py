"""Entry points. With no command, run as the GitHub Action (the container's entrypoint).

`main()` builds the clients from the settings and runs one flow inside one error handler:
a halt is an outcome (exit 0 unless `fail-on-halt`), a `UserError` names its cause and
remedy (exit 1), anything else is a bug reported with its traceback (exit 1). Tokens are
masked before anything is printed.
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
import types
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

from ci_autofix import __version__
from ci_autofix.errors import Halt, UserError
from ci_autofix.outcome import Outcome
from ci_autofix.runner import Runner
from ci_autofix.settings import Settings

# Inputs whose raw values are masked before the settings are even validated.
SECRET_INPUTS = ("GITHUB-TOKEN", "ANTHROPIC-API-KEY", "CI-TOKEN")

# Settings a local `fix` run takes as flags (tokens never: they come from the environment).
FIX_FLAGS = (
    "fixers",
    "setup_command",
    "test_command",
    "protected_paths",
    "max_changed_lines",
    "max_files",
    "allow_shell",
    "provider",
    "model",
    "max_turns",
    "max_cost_usd",
    "max_minutes",
    "command_timeout",
    "max_log_tokens",
    "require_verified",
    "branch_prefix",
)


# Exit codes every local command shares (each command's `--help` lists its own besides these).
EXIT_USAGE = 2  # a wrong argument or input: the message names the cause and the remedy
EXIT_INTERRUPTED = 130  # Ctrl-C


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args:
        if os.environ.get("GITHUB_ACTIONS") != "true":
            print(f"error: {_not_in_actions()}", file=sys.stderr)
            return EXIT_USAGE
        return run_action()
    parser = build_parser()
    try:
        ns = parser.parse_args(args)
        if not getattr(ns, "handler", None):
            parser.print_help()
            return EXIT_USAGE
        result: int = ns.handler(ns)
        sys.stdout.flush()  # a closed pipe is found here, not at exit
        return result
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:  # `ci-autofix triage LOG | head`: the reader has what it wanted
        _discard_stdout()
        return 0
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED


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


def build_parser() -> argparse.ArgumentParser:
    from ci_autofix import demo, local
    from ci_autofix.policy import command as check_diff
    from ci_autofix.triage import command as triage

    parser = argparse.ArgumentParser(
        prog="ci-autofix",
        description="Turn a failed CI run into a verified fix. Without a command, runs as the GitHub Action "
        "(reading INPUT_* and GITHUB_* from the environment).",
    )
    parser.add_argument("--version", action="version", version=f"ci-autofix {__version__}")
    sub = parser.add_subparsers(title="commands", metavar="COMMAND")
    commands: list[tuple[str, str, Any]] = [
        (
            "fix",
            "Run the fix stages on a local checkout and a failed CI log; the fix is committed on a local "
            "side branch and your working tree is left as it was.",
            local,
        ),
        ("triage", "Print the failure-explaining excerpt of a CI log (or its diagnosis as JSON).", triage),
        (
            "check-diff",
            "Check a unified diff against the patch policy (exit 0 clean, 1 flagged, 2 blocked, 3 unreadable).",
            check_diff,
        ),
        ("demo", "Create a small project with a real failing check and run `fix` on it.", demo),
    ]
    for name, help_text, module in commands:
        sp = sub.add_parser(name, help=help_text, description=help_text, epilog=module.EPILOG)
        module.add_arguments(sp)
        sp.set_defaults(handler=module.run)
    return parser


def add_settings_arguments(parser: argparse.ArgumentParser, names: Sequence[str] = FIX_FLAGS) -> None:
    """Flags generated from the settings model, so `--help` and the inputs never drift apart."""
    group = parser.add_argument_group("settings (the action's inputs of the same name)")
    for name in names:
        field = Settings.model_fields[name]
        flag = "--" + name.replace("_", "-")
        kind, choices = _flag_type(field.annotation)
        help_text = (field.description or "").replace("%", "%%") + f" (default: {_default(field)})"
        if kind is bool:
            group.add_argument(
                flag, dest=name, action=argparse.BooleanOptionalAction, default=None, help=help_text
            )
        else:
            group.add_argument(
                flag,
                dest=name,
                type=kind,
                choices=choices,
                default=None,
                metavar=name.upper() if not choices else None,
                help=help_text,
            )


def settings_overrides(ns: argparse.Namespace, names: Sequence[str] = FIX_FLAGS) -> dict[str, Any]:
    return {name: getattr(ns, name) for name in names if getattr(ns, name, None) is not None}


def _flag_type(annotation: Any) -> tuple[Any, list[str] | None]:
    origin = get_origin(annotation)
    if origin is Literal:
        return str, [str(a) for a in get_args(annotation)]
    if origin in (types.UnionType,) or str(origin) == "typing.Union":
        inner = [a for a in get_args(annotation) if a is not type(None)]
        return _flag_type(inner[0])
    if annotation in (bool, int, float):
        return annotation, None
    return str, None


def _default(field: Any) -> str:
    value = field.get_default(call_default_factory=True)
    if isinstance(value, list):
        return ",".join(value) or "none"
    return "none" if value in (None, "") else str(value)


# ---- the action ------------------------------------------------------------------------------
def run_action() -> int:
    in_actions = os.environ.get("GITHUB_ACTIONS") == "true"
    # The file-command paths come straight from the runner, so even invalid settings get outputs.
    runner = Runner(
        in_actions=in_actions,
        output_path=_env_path("GITHUB_OUTPUT"),
        summary_path=_env_path("GITHUB_STEP_SUMMARY"),
    )
    runner.mask(_raw_secret_inputs())
    try:
        from ci_autofix.settings import load_settings

        settings = load_settings()
        runner.mask(settings.secrets())
        from ci_autofix.secret_env import withdraw

        withdraw([*settings.secrets(), *_raw_secret_inputs()])  # held in memory from here on
        outcome = _run_flow(settings, runner)
    except UserError as exc:
        runner.error(str(exc))
        runner.set_outputs(Outcome("error", reason="error", message=exc.cause).outputs())
        from ci_autofix import report

        runner.summary(report.error(exc.cause, exc.remedy))
        return 1
    except Exception as exc:  # a bug: say so, with what is needed to report it
        runner.error(f"ci-autofix failed unexpectedly: {exc!r}\n{traceback.format_exc()}")
        runner.set_outputs(Outcome("error", reason="bug", message=repr(exc)).outputs())
        return 1
    runner.set_outputs(outcome.outputs())
    if outcome.status == "halted":
        runner.info(f"halted ({outcome.reason}): {outcome.message}")
        if settings.fail_on_halt:
            runner.error(f"Halted ({outcome.reason}) and `fail-on-halt` is on: {outcome.message}")
            return 1
    else:
        runner.info(f"{outcome.status}: {outcome.message}")
    return 0


def _run_flow(settings: Settings, runner: Runner) -> Outcome:
    from ci_autofix.clients import build_clients
    from ci_autofix.event import choose_mode

    mode = choose_mode(settings)
    clients = build_clients(settings)
    try:
        if mode == "propose":
            from ci_autofix.propose import propose

            return propose(settings, clients, runner)
        if mode == "apply":
            from ci_autofix.apply import apply

            return apply(settings, clients, runner)
        raise UserError(
            f"Mode `{mode}` is not available in this version of ci-autofix.",
            "Use `mode: propose` (on workflow_run) or `mode: apply` (on workflow_dispatch).",
        )
    except Halt as halt:
        outcome = Outcome("halted", reason=halt.reason.value, message=halt.message, details=halt.details)
        from ci_autofix import report

        runner.summary(report.halted(halt.reason.value, halt.message) + "\n")
        return outcome


def _env_path(name: str) -> Path | None:
    value = os.environ.get(name, "").strip()
    return Path(value) if value else None


def _raw_secret_inputs() -> list[str]:
    values = []
    for name in SECRET_INPUTS:
        for spelling in (f"INPUT_{name}", f"INPUT_{name.replace('-', '_')}"):
            if value := os.environ.get(spelling, "").strip():
                values.append(value)
    for name in ("GITHUB_TOKEN", "ANTHROPIC_API_KEY"):
        if value := os.environ.get(name, "").strip():
            values.append(value)
    return values
