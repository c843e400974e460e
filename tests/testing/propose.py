"""The propose flow in process, against the GitHub emulator, with the client settings a test
chooses (short timeouts, no backoff): the world the fault tests inject slow or failing answers
into. The failing run is `format_scenario`'s (`ruff format --check`, fixed without a model)
unless a test seeds another."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ci_autofix.agent.llm import Model
from ci_autofix.flows.clients import Clients
from ci_autofix.github import ClientSettings, GitHub
from ci_autofix.outcome import Outcome
from ci_autofix.runner import Runner
from ci_autofix.settings import Settings
from tests.testing.emulator import GitHubEmulator, Run

# A patient-enough client for loopback, with nothing slept between retries: every in-process test's.
FAST = ClientSettings(
    timeout=10,
    retries=0,
    backoff_factor=0,
    secondary_rate_wait=0.05,
    max_rate_limit_wait=2,
    seconds_between_requests=0,
    seconds_between_writes=0,
    log_backoff=0,
)


@dataclass
class Proposed:
    outcome: Outcome
    log: str
    summary: str


def no_model() -> Model:
    raise AssertionError("this run needs no model")


def propose_in_process(
    emu: GitHubEmulator,
    tmp_path: Path,
    run: Run,
    workspace: Path,
    *,
    client: ClientSettings = FAST,
    llm: Callable[[], Model] = no_model,
    **inputs: Any,
) -> Proposed:
    """One propose job for `run`, its checkout at `workspace`; raises what the flow raises (a
    `UserError` ends the job; anything else would be a traceback in the job log)."""
    from ci_autofix.flows.propose import propose

    event = tmp_path / f"event-{run.id}.json"
    event.write_text(json.dumps(emu.workflow_run_event(run)), encoding="utf-8")
    values: dict[str, Any] = {
        "mode": "propose",
        "github_token": emu.token,
        "event_name": "workflow_run",
        "event_path": event,
        "repository": run.repo,
        "api_url": emu.api_url,
        "server_url": emu.server_url,
        "workspace": workspace,
        "in_actions": False,
        **inputs,
    }
    settings = Settings(**values)
    summary = tmp_path / "summary.md"
    stream = io.StringIO()
    runner = Runner(in_actions=False, output_path=tmp_path / "output", summary_path=summary, stream=stream)

    def github() -> GitHub:
        return GitHub(token=emu.token, api_url=emu.api_url, repository=run.repo, settings=client)

    outcome = propose(settings, Clients(github=github, llm=llm), runner)
    return Proposed(
        outcome, stream.getvalue(), summary.read_text(encoding="utf-8") if summary.exists() else ""
    )
