"""The reviewed pull request's head, as the review flow needs it: its CI runs (the one that anchors
the suggestion, and the failing ones whose failed steps verify the fix), and its head and base
branches fetched into a bare repository of ours, with their merge base (the PR's diff is from it).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ci_autofix.errors import Halt, HaltReason, UserError
from ci_autofix.flows.cycle import Cycle
from ci_autofix.flows.dispatch import own_workflow_file
from ci_autofix.git import Git, GitError, auth_env, fetch_bare, remote_url
from ci_autofix.github import PullInfo, RunInfo
from ci_autofix.github.api import GitHubAPI
from ci_autofix.refs import check_branch_name
from ci_autofix.settings import Settings
from ci_autofix.triage.model import Category, Diagnosis
from ci_autofix.workflow.context import Pull, of_run
from ci_autofix.workflow.definition import WorkflowCommands
from ci_autofix.workflow.failed_run import failed_commands, job_logs, triage_run

if TYPE_CHECKING:
    from ci_autofix.agent.joblogs import JobLog

HISTORY_DEPTH = 200  # commits fetched first; the whole history only when the merge base is deeper
HEAD_REF, BASE_REF = "refs/ci-autofix/head", "refs/ci-autofix/base"
CI_EVENTS = frozenset({"push", "pull_request"})  # what starts CI; a review's own workflows never anchor


def head_ci(gh: GitHubAPI, settings: Settings, pull: PullInfo) -> tuple[RunInfo, list[RunInfo]]:
    """The run that anchors the suggestion (apply checks that it ran on this branch and commit,
    and its workflow is the one CI is started with on the fix), and the newest run of each
    workflow that failed on the head. Only CI counts: runs started by a push or a pull request,
    never one the review itself started (a labeler, a deploy preview); the anchor is the newest
    failing one, else the newest."""
    own = f".github/workflows/{own_workflow_file(settings)}"
    runs = [
        r
        for r in gh.runs_for_commit(pull.head_sha, branch=pull.head_ref)
        if r.event in CI_EVENTS
        and r.workflow_path != own
        and r.head_sha == pull.head_sha
        and r.head_branch == pull.head_ref
    ]
    if not runs:
        raise Halt(
            HaltReason.NO_CI_RUN,
            f"#{pull.number}'s head {pull.head_sha[:12]} has no CI run (one started by a push or a pull "
            "request): a suggestion is anchored to the CI run of the commit it changes (apply checks it), "
            "and verified with its failed steps or `test-command`. Let CI run on the head, then re-run this job.",
        )
    newest: dict[str, RunInfo] = {}
    for run in runs:  # newest first
        newest.setdefault(run.workflow_path, run)
    failing = [r for r in newest.values() if r.conclusion == "failure"]
    return (failing or runs)[0], failing


def fetch(root: Path, settings: Settings, pull: PullInfo) -> tuple[Git, str]:
    """The PR's head and base branches in a fresh bare repository of ours, and their merge base
    (the PR's diff is from it, as GitHub shows it); the head must still be the reviewed commit."""
    token = settings.github_token or settings.ci_token
    if token is None:
        raise UserError(
            "No token to fetch the pull request's branches with.",
            "Pass `github-token: ${{ secrets.GITHUB_TOKEN }}` to the action.",
        )
    head = check_branch_name(pull.head_ref, what="the pull request's head branch")
    base = check_branch_name(pull.base_ref, what="the pull request's base branch")
    url = remote_url(settings.server_url, settings.repository)
    specs = (f"+refs/heads/{head}:{HEAD_REF}", f"+refs/heads/{base}:{BASE_REF}")
    try:
        git = fetch_bare(
            root,
            url,
            *specs,
            token=token.get_secret_value(),
            server_url=settings.server_url,
            depth=HISTORY_DEPTH,
        )
        merge_base = merge_base_of(git)
        if merge_base is None:  # deeper than HISTORY_DEPTH: the whole history, once
            git.run(
                "fetch",
                "--no-tags",
                "--no-recurse-submodules",
                "--unshallow",
                "--",
                url,
                *specs,
                env=auth_env(settings.server_url, token.get_secret_value()),
            )
            merge_base = merge_base_of(git)
    except GitError as exc:
        raise UserError(
            f"git could not fetch `{head}` and `{base}`, the pull request's branches:\n{exc.result.tail(10)}",
            "Check that the job's `permissions:` include `contents: write` (or `read`), then re-run the job.",
        ) from None
    if git.rev_parse(HEAD_REF) != pull.head_sha:
        raise Halt(
            HaltReason.BRANCH_MOVED,
            f"`{head}` moved on since the review was made on {pull.head_sha[:12]}: nothing is done. Request "
            "changes again on the new head if they still apply.",
        )
    if merge_base is None:
        raise UserError(
            f"`{head}` and `{base}` have no common commit, so the pull request's diff cannot be made.",
            "Rebase the pull request onto its base branch, then request changes again.",
        )
    return git, merge_base


def merge_base_of(git: Git) -> str | None:
    result = git.run("merge-base", HEAD_REF, BASE_REF, check=False)
    found = result.output.strip()
    return found if result.ok and found else None


def checks(
    cy: Cycle, git: Git, failing: list[RunInfo], root: Path
) -> tuple[Diagnosis, WorkflowCommands, list[JobLog]]:
    """What verifies the fix: the failed steps of the head's failing CI runs (their diagnosis and
    their whole logs are the agent's too), and `test-command` (the ladder adds it)."""
    settings, pull = cy.settings, cy.pull
    commands = WorkflowCommands()
    diagnoses: list[Diagnosis] = []
    kept: list[JobLog] = []
    for run in failing:
        cy.runner.info(
            f"  CI fails on the head: {run.workflow_path} (run {run.id}); its failed steps verify the fix"
        )
        try:
            logs = root / f"logs-{run.id}"  # ours, removed with `root`
            logs.mkdir(mode=0o700, exist_ok=True)
            found, jobs = triage_run(cy.gh, run.id, run.run_attempt, logs, max_tokens=settings.max_log_tokens)
        except Halt:  # no failed job in that attempt (re-run since): nothing to re-run from it
            continue
        if found.is_infra:  # no change would fix it, and re-running it proves nothing about the fix
            continue
        diagnoses.append(found)
        kept.extend(job_logs(jobs, logs))
        github = of_run(
            event=run.event,
            sha=run.head_sha,
            branch=run.head_branch,
            run_id=run.id,
            repository=settings.repository,
            pulls=[Pull(pull.number, pull.head_ref, pull.base_ref)]
            if run.event.startswith("pull_request")
            else [],
        )
        more = failed_commands(git, pull.head_sha, run.workflow_path, jobs, github)
        commands.commands.extend(more.commands)
        commands.actions.extend(more.actions)
        commands.notes.extend(more.notes)
        commands.setup.extend(more.setup)
        if not commands.job:  # the first failed job's runtimes, as for a failed run
            commands.job, commands.matrix = more.job, more.matrix
    diagnosis = diagnoses[0] if diagnoses else no_failure(settings)
    if not commands.lines and not settings.test_command:
        commands.notes.append(
            "CI passes on the pull request's head (or no failed step can be re-run), and no `test-command` "
            "is set: the fix cannot be verified here."
        )
    return diagnosis, commands, kept


def no_failure(settings: Settings) -> Diagnosis:
    return Diagnosis(
        failures=[],
        log_commands=[],
        category=Category.UNKNOWN,
        excerpt="",
        excerpt_tokens=0,
        budget_tokens=settings.max_log_tokens,
    )
