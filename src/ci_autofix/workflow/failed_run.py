"""One failed run as GitHub describes it: its failed jobs, their logs (streamed to files of ours),
their annotations, and the failed steps' commands as the workflow file defines them.

The log and the annotations are untrusted text: they feed triage, never a command. The commands
come from the workflow file at the failing commit (`definition`), named by the steps the API
says failed.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ci_autofix.errors import Halt, HaltReason
from ci_autofix.git import Git
from ci_autofix.github import JobInfo
from ci_autofix.triage import diagnose_jobs
from ci_autofix.triage.model import Diagnosis, Failure
from ci_autofix.workflow.context import Context
from ci_autofix.workflow.definition import FailedStep, WorkflowCommands, failed_step_commands

if TYPE_CHECKING:
    from ci_autofix.agent.joblogs import JobLog
    from ci_autofix.github.api import GitHubAPI


def triage_run(
    gh: GitHubAPI, run_id: int, run_attempt: int, logs: Path, *, max_tokens: int
) -> tuple[Diagnosis, list[JobInfo]]:
    """The failed jobs of one attempt of a run, and the diagnosis of their logs and annotations.
    Each job's log is streamed to `logs/job-<id>.log` (kept until the flow ends, for whatever reads
    the whole log later) and triaged from there."""
    jobs = gh.failed_jobs(run_id, run_attempt)
    if not jobs:
        raise Halt(
            HaltReason.NO_FAILED_JOBS,
            f"Attempt {run_attempt} of run {run_id} has no failed job "
            "(it may have been re-run since): nothing to fix.",
        )
    diagnosis = diagnose_jobs(
        [(job.name, gh.job_log(job.id, logs / f"job-{job.id}.log")) for job in jobs],
        max_tokens=max_tokens,
    )
    located = {(f.file, f.line) for f in diagnosis.failures}
    for job in jobs:
        for note in gh.annotations(job.id):
            if (
                note.level == "failure"
                and note.path != ".github"
                and (note.path, note.start_line) not in located
            ):
                diagnosis.failures.append(
                    Failure(
                        tool="annotation",
                        kind="error",
                        message=note.message,
                        file=note.path,
                        line=note.start_line,
                        where=[job.name],
                    )
                )
                located.add((note.path, note.start_line))
    return diagnosis, jobs


def job_logs(jobs: list[JobInfo], logs: Path) -> list[JobLog]:
    """The failed jobs' logs where `triage_run` streamed them, for the agent's `logs` tool."""
    from ci_autofix.agent.joblogs import JobLog  # with the fix stages: only when they run

    return [JobLog(job.name, logs / f"job-{job.id}.log") for job in jobs]


def failed_commands(
    git: Git, head_sha: str, workflow_file: str, jobs: list[JobInfo], github: Context | None = None
) -> WorkflowCommands:
    """The failed steps (named by the API) and their commands, from the workflow file the run
    executed as it was at the failing commit, with the run's `github` context values. The log's own
    claims are never used here."""
    failed: list[FailedStep] = []
    notes: list[str] = []
    for job in jobs:
        if not job.failed_steps:
            notes.append(
                f"GitHub names no failed step in job `{job.name}`, so none of its commands is re-run."
            )
        for step in job.failed_steps:
            earlier = sum(1 for s in job.steps if s.name == step.name and s.number < step.number)
            failed.append(FailedStep(job.name, step.name, earlier))
    found = failed_step_commands(git, head_sha, workflow_file, failed, github)
    found.notes[:0] = notes
    return found
