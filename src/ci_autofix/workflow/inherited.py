"""Inherited failures: the failing branch's base is red with the very same failure.

A PR whose base branch already fails the same way did not break anything: a fix proposed into the
PR's branch would hide that the base is red. Before an attempt, propose compares the failure with
the base branch's latest completed run of the same workflow at the base's head: it must have
failed, in the same jobs and steps, with the same signature (tests, file:line findings; a failure
triage cannot locate never matches). Only what GitHub reports is compared (runs, jobs, logs).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ci_autofix.errors import Halt
from ci_autofix.github import RunInfo
from ci_autofix.github.api import GitHubAPI
from ci_autofix.state.ledger import failed_steps
from ci_autofix.triage.model import Diagnosis
from ci_autofix.triage.signature import signature
from ci_autofix.workflow.failed_run import triage_run


@dataclass(frozen=True)
class OnBase:
    """The base branch's run that failed the same way."""

    branch: str
    run: RunInfo


def failing_on_base(
    gh: GitHubAPI,
    *,
    base: str,
    workflow: str,
    run_id: int,
    run_attempt: int,
    diagnosis: Diagnosis,
    logs: Path,
    max_tokens: int,
) -> OnBase | None:
    """The base branch's latest completed run of `workflow` when it failed as run `run_id` did."""
    mine = signature(diagnosis)
    base_sha = gh.branch_sha(base)
    if not mine or base_sha is None:
        return None
    runs = [
        r
        for r in gh.runs_for_commit(base_sha, branch=base)
        if r.workflow_path == workflow and r.status == "completed" and r.id != run_id
    ]
    if not runs:
        return None
    latest = max(runs, key=lambda r: r.id)
    if latest.conclusion != "failure":
        return None
    if failed_steps(gh, latest.id, latest.run_attempt) != failed_steps(gh, run_id, run_attempt):
        return None
    logs.mkdir(exist_ok=True)
    try:
        theirs, _ = triage_run(gh, latest.id, latest.run_attempt, logs, max_tokens=max_tokens)
    except Halt:  # its logs are gone: nothing to compare with
        return None
    return OnBase(base, latest) if signature(theirs) == mine else None
