"""The propose flow's context: one attempt at a failed run, as each step of the flow takes it.

`Attempt` is built once, when the flow knows the failed run, its checkout and the GitHub client,
and is frozen from then on (a step that narrows it, such as the attempt's budget, makes a copy).
`AttemptSoFar` is the one part that grows as the flow goes: what its ending needs when a halt cuts it short.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ci_autofix.deliver import report
from ci_autofix.flows.clients import Clients
from ci_autofix.flows.event import WorkflowRun, WorkflowRunEvent
from ci_autofix.git import Git
from ci_autofix.github import JobInfo
from ci_autofix.github.api import GitHubAPI
from ci_autofix.runner import Runner
from ci_autofix.settings import Settings
from ci_autofix.state.ledger import Lineage
from ci_autofix.triage.model import Diagnosis
from ci_autofix.workflow.context import Context, Pull, of_run
from ci_autofix.workflow.failed_run import triage_run


@dataclass
class AttemptSoFar:
    """What the flow learned before it halted: for the summary, and the suggestions it supersedes."""

    diagnosis: Diagnosis | None = None
    gh: GitHubAPI | None = None
    lineage: Lineage | None = None
    run_url: str = ""
    name: str = "run"  # of the files that keep a halted attempt's work
    attempting: WorkflowRun | None = None  # the failed run, once an attempt at it has begun


@dataclass(frozen=True)
class Attempt:
    """An attempt at the failed run of `event`: the settings (`max_cost_usd` narrowed to what the
    lineage has left), the clients, the checkout of the failing commit (`git`: the workspace, or
    ours in a dispatch), the suggestion branch it delivers to, and the directory of the failed
    jobs' logs (removed when the flow ends)."""

    settings: Settings
    clients: Clients
    runner: Runner
    gh: GitHubAPI
    git: Git
    event: WorkflowRunEvent
    fix_branch: str
    logs: Path
    seen: AttemptSoFar
    asked: bool  # a person dispatched this attempt (`ask-first` asked, and was answered)

    @property
    def run(self) -> WorkflowRun:
        return self.event.run

    @property
    def branch(self) -> str:
        """The failing branch."""
        return self.event.run.head_branch or ""


def context(settings: Settings, event: WorkflowRunEvent) -> report.RunContext:
    """The failed run as the suggestion PR and its notes link to it."""
    run = event.run
    return report.RunContext(
        repository=settings.repository,
        server_url=settings.server_url,
        workflow_name=run.name or run.workflow_file or "CI",
        run_url=run.html_url,
        failing_branch=run.head_branch or "",
        head_sha=run.head_sha,
    )


def github_context(at: Attempt) -> Context:
    """The failed run's `github.*` values, for the failed steps that use them (`workflow.context`)."""
    run = at.run
    return of_run(
        event=run.event,
        sha=run.head_sha,
        branch=run.head_branch,
        run_id=run.id,
        repository=at.event.repository.full_name,
        pulls=[Pull(p.number, p.head.ref, p.base.ref) for p in run.pull_requests],
    )


def triage(at: Attempt) -> tuple[Diagnosis, list[JobInfo]]:
    """The failed jobs of the run's attempt and their diagnosis; their logs stay in `at.logs`."""
    run = at.run
    return triage_run(at.gh, run.id, run.run_attempt, at.logs, max_tokens=at.settings.max_log_tokens)
