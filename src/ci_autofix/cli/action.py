"""Running as the GitHub Action: settings from INPUT_*, one flow, its outcome as outputs.

Tokens are masked before anything is printed and leave the process environment once the
settings hold them. A halt is an outcome (exit 0 unless `fail-on-halt`), a `UserError` names
its cause and remedy (exit 1), anything else is a bug reported with its traceback (exit 1).
"""

from __future__ import annotations

import os
import traceback
from pathlib import Path

from ci_autofix.errors import UserError
from ci_autofix.outcome import Outcome
from ci_autofix.runner import Runner
from ci_autofix.settings import Settings

# Inputs whose raw values are masked before the settings are even validated.
SECRET_INPUTS = ("GITHUB-TOKEN", "ANTHROPIC-API-KEY", "CI-TOKEN")


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
        from ci_autofix.cli.io import load

        settings = load()
        runner.mask(settings.secrets())
        from ci_autofix.secret_env import withdraw

        withdraw([*settings.secrets(), *_raw_secret_inputs()])  # held in memory from here on
        outcome = _run_flow(settings, runner)
    except UserError as exc:
        runner.error(str(exc))
        runner.set_outputs(Outcome("error", reason="error", message=exc.cause).outputs())
        from ci_autofix.deliver import report

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
    """The flow for the mode; each flow ends its own halts as an outcome (`flows.ended`)."""
    from ci_autofix.flows.clients import build_clients
    from ci_autofix.flows.event import choose_mode

    mode = choose_mode(settings)
    clients = build_clients(settings)
    if mode == "propose":
        from ci_autofix.flows.propose import propose

        return propose(settings, clients, runner)
    if mode == "apply":
        from ci_autofix.flows.apply import apply

        return apply(settings, clients, runner)
    if mode == "review":
        from ci_autofix.flows.review import review

        return review(settings, clients, runner)
    raise UserError(
        f"Mode `{mode}` is not available in this version of ci-autofix.",
        "Use `mode: propose` (on workflow_run), `mode: apply` (on workflow_dispatch) or `mode: review` "
        "(on pull_request_review).",
    )


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
