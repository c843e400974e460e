"""The propose flow's bookkeeping across attempts: the lineage, what earlier runs left, what a run
that ends the loop or needs no attempt says.

A lineage is the chain of fixes ci-autofix made on a failing branch since a person's last commit
(`state.ledger`); each attempt is recorded on the failing commit (`state.attempts`), and the
suggestions made for older commits of the branch are closed when a newer one exists.
"""

from __future__ import annotations

from ci_autofix.deliver import notice, report, stuck
from ci_autofix.deliver.supersede import supersede, sweep
from ci_autofix.errors import Halt, HaltReason, UserError
from ci_autofix.flows.attempt import Attempt, AttemptSoFar
from ci_autofix.flows.dispatch import ASK_AGAIN
from ci_autofix.flows.event import WorkflowRun, WorkflowRunEvent
from ci_autofix.github import PullInfo
from ci_autofix.github.api import GitHubAPI
from ci_autofix.outcome import Outcome
from ci_autofix.runner import Runner
from ci_autofix.settings import Settings
from ci_autofix.state import attempts
from ci_autofix.state.ledger import Existing, Lineage, Suggested, lineage, strays


def still_at_head(gh: GitHubAPI, event: WorkflowRunEvent, *, dispatched: bool = False) -> None:
    """Halt when the failing branch no longer points at the run's commit: the newer commit's own
    CI run decides what happens next (a re-run of an old run would otherwise supersede newer work,
    and an approval given for one commit would be spent on another)."""
    run = event.run
    live = gh.branch_sha(run.head_branch or "")
    if live != run.head_sha:
        where = f"moved on to {live[:12]}" if live else "no longer exists"
        then = (
            f"the approval was for that commit, so nothing is attempted. {ASK_AGAIN}"
            if dispatched
            else "nothing is done for this run. The newer commit's CI run is the one that counts."
        )
        raise Halt(
            HaltReason.BRANCH_MOVED,
            f"`{run.head_branch}` {where} since run {run.id} ran on {run.head_sha[:12]}: {then}",
        )


def lineage_of(gh: GitHubAPI, settings: Settings, event: WorkflowRunEvent) -> Lineage:
    return lineage(
        gh,
        prefix=settings.branch_prefix,
        failing_branch=event.run.head_branch or "",
        head_sha=event.run.head_sha,
        workflow=event.run.workflow_file,
        trusted=settings.trusted_author,
        max_attempts=settings.max_attempts,
    )


def succeeded(
    gh: GitHubAPI, settings: Settings, runner: Runner, event: WorkflowRunEvent, seen: AttemptSoFar
) -> Outcome:
    """A green run: when the branch's head is a fix ci-autofix made, the loop ended well."""
    run = event.run
    still_at_head(gh, event)
    seen.gh = gh
    line = seen.lineage = lineage_of(gh, settings, event)
    failing = notice.where(gh, run.head_branch or "", run.head_sha, [p.number for p in run.pull_requests])
    stuck.unstick(gh, failing.pull)
    if line.fresh:
        raise Halt(
            HaltReason.NOT_A_FAILURE,
            f"The workflow run concluded `success` on {run.head_sha[:12]}, a commit ci-autofix did not make: "
            "nothing to fix.",
        )
    fix = line.applied[0]
    fixed = gh.workflow_run(fix.run_id).workflow_path  # by the run id GitHub authenticated
    if fixed != run.workflow_file:
        raise Halt(
            HaltReason.NOT_A_FAILURE,
            f"`{run.workflow_file}` passed on {fix.sha[:12]}, but that fix was made for a failure of "
            f"`{fixed}`: that workflow's own run says whether the loop ended well.",
        )
    suggestion = line.suggestion_for(fix.sha)
    attempts = len(line.applied)
    run_link = report.run_link(settings.server_url, settings.repository, run.id)
    message = (
        f"CI passes on `{run.head_branch}` at {fix.sha[:12]}, the fix ci-autofix made "
        f"({attempts} attempt(s)): {run.html_url}"
    )
    if suggestion is not None:
        say_once(
            gh,
            settings,
            runner,
            suggestion.pull.number,
            f"<!-- ci-autofix:success {run.id} -->",
            (
                f"CI passed on this fix after it was applied: [run {run.id}]({run_link}). "
                f"It took {attempts} attempt(s)."
            ),
        )
    supersede_stale(gh, runner, line, newer=None)
    outcome = Outcome(
        "success",
        message=message,
        fix_sha=fix.sha,
        pull_request=suggestion.pull.number if suggestion else None,
        pull_request_url=suggestion.pull.html_url if suggestion else "",
        attempt=attempts,
        run_url=run.html_url,
    )
    runner.summary(report.summary(outcome))
    return outcome


def again(at: Attempt, existing: Existing) -> Outcome:
    """A run already handled: finish what its delivery left undone (labels, review requests, the
    apply instructions), else change nothing."""
    from ci_autofix.deliver.suggestion import finish, reviewers_for, unfinished

    settings, runner, fix_branch = at.settings, at.runner, at.fix_branch
    run, pull, record = at.run, existing.pull, existing.record
    if pull.author != settings.trusted_author:
        raise UserError(
            f"#{pull.number} is open from `{fix_branch}`, the suggestion branch of this run, but @{pull.author} "
            f"opened it, not @{settings.trusted_author}: it is not a suggestion of ci-autofix.",
            f"Close #{pull.number} and delete `{fix_branch}`, then re-run this job.",
        )
    reason, message = "already-proposed", f"This run was already handled: {pull.html_url}. Nothing changed."
    if record is not None and pull.state == "open" and unfinished(pull):
        runner.stage(f"finishing the delivery of #{pull.number}, which stopped half-way")
        reviewers = reviewers_for(
            at.gh, settings.reviewers, pr_numbers=[p.number for p in run.pull_requests], head_sha=run.head_sha
        )
        sealed = pull.body.replace(report.APPLY_PLACEHOLDER, f"-f pull-request={pull.number}")
        finish(at.gh, pull, record, reviewers, runner.redact(sealed))
        reason = "repaired"
        message = (
            f"The earlier delivery of this run stopped half-way; {pull.html_url} now has its labels, "
            "review requests and apply instructions."
        )
    return Outcome(
        "proposed",
        reason=reason,
        message=message,
        fix_branch=fix_branch,
        fix_sha=record.fix_sha if record else "",
        pull_request=pull.number,
        pull_request_url=pull.html_url,
        attempt=record.attempt if record else None,
        run_url=run.html_url,
    )


def twin_stands(at: Attempt, twin: Suggested) -> Outcome:
    """Another run of this workflow failed the same way on this commit and has its suggestion: it
    stands for this run too. Nothing is attempted, spent or counted again."""
    run, pull, record = at.run, twin.pull, twin.record
    other = twin.run.id if twin.run else record.run_id if record else 0
    outcome = Outcome(
        "proposed",
        reason="same-failure",
        message=(
            f"Run {run.id} failed the same jobs and steps on {run.head_sha[:12]} as run {other}, whose "
            f"suggestion {pull.html_url} is open: it stands for this run too. Nothing was attempted."
        ),
        fix_branch=pull.head_ref,
        fix_sha=pull.head_sha,
        pull_request=pull.number,
        pull_request_url=pull.html_url,
        attempt=record.attempt if record else None,
        run_url=run.html_url,
    )
    at.runner.info(f"  {outcome.message}")
    at.runner.summary(report.summary(outcome))
    return outcome


def sweep_strays(at: Attempt) -> None:
    """Delete the suggestion branches of the failing branch left without an open PR: closed means gone."""
    settings = at.settings
    stray = strays(
        at.gh,
        prefix=settings.branch_prefix,
        failing_branch=at.branch,
        trusted=settings.trusted_author,
        keep=at.fix_branch,
    )
    problems = sweep(at.gh, stray)
    if len(stray) > len(problems):
        at.runner.info(f"  deleted {len(stray) - len(problems)} suggestion branch(es) without an open PR")
    for problem in problems:
        at.runner.warning(problem)


def supersede_stale(gh: GitHubAPI, runner: Runner, line: Lineage, *, newer: PullInfo | None) -> None:
    """Close the lineage's open suggestions made for older commits of the branch."""
    if not line.stale:
        return
    branch = line.stale[0].pull.base_ref
    problems = supersede(
        gh,
        line.stale,
        branch=branch,
        head_sha=line.head_sha,
        newer=newer,
        redact=runner.redact,
    )
    closed = len(line.stale) - len(problems)
    if closed:
        runner.info(f"  closed {closed} suggestion(s) made for older commits of `{branch}`")
    for problem in problems:
        runner.warning(problem)


def counts(halt: Halt) -> bool:
    """Whether the halted attempt counts: it reached the model or made a change."""
    kept = halt.kept
    return halt.spent is not None or (kept is not None and bool(kept.diff or kept.transcript))


def record(
    gh: GitHubAPI,
    settings: Settings,
    line: Lineage,
    run: WorkflowRun,
    cost_usd: float | None,
    ended: Halt | int,
) -> None:
    """Record the attempt at `run` on its failing commit: halted (`ended` is the halt) or proposed
    (`ended` is the suggestion's number). A re-run of this job for the same attempt of the failed
    run adds to that attempt's spend."""
    before = sum(a.cost_usd for a in line.recorded if (a.run_id, a.run_attempt) == (run.id, run.run_attempt))
    attempts.record(
        gh,
        run.head_sha,
        run_id=run.id,
        run_attempt=run.run_attempt,
        cost_usd=before + (cost_usd or 0.0),
        reason=ended.reason.value if isinstance(ended, Halt) else "",
        pull=ended if isinstance(ended, int) else None,
        target_url=report.run_link(settings.server_url, settings.repository, run.id),
    )


def say_once(gh: GitHubAPI, settings: Settings, runner: Runner, number: int, marker: str, text: str) -> None:
    """Comment on #number unless a comment of ours with `marker` is there already (a re-run)."""
    if notice.ours(gh.comments(number), marker, settings.trusted_author) is not None:
        return
    gh.comment(number, runner.redact(f"{marker}\n{text}"))
