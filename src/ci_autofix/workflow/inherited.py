"""Inherited failures: the failing branch's base is red with the very same failure.

A PR whose base branch already fails the same way did not break anything: a fix proposed into the
PR's branch would hide that the base is red. Before an attempt, propose compares the failure with
the base branch's latest completed run of the same workflow at the base's head: it must have
failed, in the same jobs and steps, with the same signature (tests, file:line findings; a failure
triage cannot locate never matches). Only what GitHub reports is compared (runs, jobs, logs).

A failure in a file the failing PR changed is the PR's, whatever the base does: the PR's changed
files (GitHub's list, renames by both names) must not include a file the failures name (a test's
file, a finding's file). A failure that names no file is never called inherited: nothing shows
that the PR left it alone. A push without a PR has no changed files to check.
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

PULL_FILES_LISTED = 3000  # GitHub lists at most this many of a PR's files


@dataclass(frozen=True)
class OnBase:
    """The base branch's run that failed the same way; `pull`: the failing PR whose files were
    checked (None for a push without a PR: nothing was compared but the failures)."""

    branch: str
    run: RunInfo
    pull: int | None = None


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
    pull: int | None,
) -> OnBase | None:
    """The base branch's latest completed run of `workflow` when it failed as run `run_id` did,
    in files PR #`pull` (the failing PR, if any) did not change."""
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
    if pull is not None and touched(gh, pull, diagnosis):
        return None
    logs.mkdir(exist_ok=True)
    try:
        theirs, _ = triage_run(gh, latest.id, latest.run_attempt, logs, max_tokens=max_tokens)
    except Halt:  # its logs are gone: nothing to compare with
        return None
    return OnBase(base, latest, pull) if signature(theirs) == mine else None


def failing_files(diagnosis: Diagnosis) -> set[str]:
    """The files the failures name: a finding's file, a test's file (its id up to `::`)."""
    named = {f.file for f in diagnosis.failures if f.file}
    named |= {f.test_id.split("::", 1)[0] for f in diagnosis.failures if f.test_id and "::" in f.test_id}
    return {name.removeprefix("./") for name in named if name}


def touched(gh: GitHubAPI, pull: int, diagnosis: Diagnosis) -> bool:
    """Whether PR #pull changed a file the failures name, or the failures name none (then nothing
    shows the PR left them alone), or GitHub lists as many files as it ever does (3,000: the list
    may be cut short before the failing file). A log may name a file by a longer (absolute) or shorter (relative
    to the step's directory) path than the repository's: a path suffix at a `/` matches."""
    failing = failing_files(diagnosis)
    if not failing:
        return True
    files = gh.pull_files(pull)
    if len(files) >= PULL_FILES_LISTED:
        return True
    changed = {name for f in files for name in (f.filename, f.previous_filename) if name}
    return any(_same_file(a, b) for a in failing for b in changed)


def _same_file(logged: str, changed: str) -> bool:
    return logged == changed or logged.endswith(f"/{changed}") or changed.endswith(f"/{logged}")
