"""The propose flow: from a failed `workflow_run` to a suggestion PR that asks for review.

event ─► guards ─► existing? ─► lineage (attempts) ─► stuck at the cap? ─► failed jobs' logs
      ─► triage ─► fix ladder ─► deliver ─► supersede the suggestions for older commits

A run that concluded `success` on a fix ci-autofix made ends the loop: `status: success`.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from ci_autofix.deliver import ask, kept, notice, report, stuck
from ci_autofix.deliver.ci import dispatchable
from ci_autofix.deliver.supersede import supersede, sweep
from ci_autofix.errors import Halt, HaltReason, UserError
from ci_autofix.flows.clients import Clients
from ci_autofix.flows.dispatch import (
    ASK_AGAIN,
    dispatched_event,
    failed_run_event,
    fetch_failing,
    own_workflow_file,
)
from ci_autofix.flows.event import (
    RUN_ID_REMEDY,
    WorkflowRun,
    WorkflowRunEvent,
    check_guards,
    dispatched_run_id,
    parse_workflow_run,
    read_payload,
)
from ci_autofix.flows.halts import halted, keep_work
from ci_autofix.git import Git, GitError
from ci_autofix.github import JobInfo, PullInfo
from ci_autofix.github.api import GitHubAPI
from ci_autofix.outcome import Outcome
from ci_autofix.runner import Runner
from ci_autofix.settings import Settings
from ci_autofix.state import attempts
from ci_autofix.state.ledger import (
    Existing,
    Lineage,
    Suggested,
    failed_steps,
    find_existing,
    lineage,
    same_failure,
    side_branch,
    strays,
)
from ci_autofix.state.marker import MAX_FAILED_CHARS, MAX_FILES, Suggestion
from ci_autofix.triage.locate import locate_failures
from ci_autofix.triage.model import Diagnosis
from ci_autofix.triage.signature import signature
from ci_autofix.workflow.failed_run import failed_commands, job_logs, triage_run

if TYPE_CHECKING:
    from ci_autofix.deliver.suggestion import Delivery
    from ci_autofix.ladder.run import LadderInput, Proposal
    from ci_autofix.workflow.inherited import OnBase


@dataclass
class _Seen:
    """What the flow learned before it halted: for the summary, and the suggestions it supersedes."""

    diagnosis: Diagnosis | None = None
    gh: GitHubAPI | None = None
    lineage: Lineage | None = None
    run_url: str = ""
    name: str = "run"  # of the files that keep a halted attempt's work
    logs: Path | None = None  # the failed jobs' logs, downloaded there; removed when the flow ends
    attempting: WorkflowRun | None = None  # the failed run, once an attempt at it has begun


def propose(settings: Settings, clients: Clients, runner: Runner) -> Outcome:
    runner.mask(settings.secrets())  # done already by the entrypoint; `runner.redact` needs them
    seen = _Seen()
    logs = tempfile.TemporaryDirectory(prefix="ci-autofix-logs-")
    seen.logs = Path(logs.name)
    try:
        return _propose(settings, clients, runner, seen)
    except Halt as halt:
        spent = halt.spent  # set when the halt came after the agent ran
        outcome = halted(
            halt,
            run_url=seen.run_url,
            cost_usd=spent.cost_usd if spent else None,
            agent_turns=spent.turns if spent else None,
            **(keep_work(halt.kept, settings.runner_temp, runner, seen.name) if halt.kept else {}),
        )
        if seen.gh is not None and seen.lineage is not None:
            if seen.attempting is not None and _an_attempt(halt):
                _record(
                    seen.gh, settings, seen.lineage, seen.attempting, spent.cost_usd if spent else None, halt
                )
            _supersede(seen.gh, settings, runner, seen.lineage, newer=None)
        summary = report.summary(outcome, diagnosis=seen.diagnosis)
        runner.summary(summary + (f"\n{kept.summary(halt.kept)}\n" if halt.kept else ""))
        return outcome
    finally:
        logs.cleanup()


def _propose(settings: Settings, clients: Clients, runner: Runner, seen: _Seen) -> Outcome:
    run_id = dispatched_run_id(settings)  # a dispatch's: validated before any API or git call
    if run_id is None and settings.event_name == "workflow_dispatch":
        raise UserError(
            "The propose flow was dispatched without naming the failed run to attempt a fix for.",
            RUN_ID_REMEDY,
        )
    if run_id is None:
        event = parse_workflow_run(read_payload(settings.event_path))
        check_guards(event, settings)  # from the payload alone: no API call before this
        gh = None
    else:  # an attempt someone asked for: the run as GitHub's API reports it, if they may ask
        gh = seen.gh = clients.github()
        event = dispatched_event(gh, settings, run_id)
        check_guards(event, settings)
    run = event.run
    seen.run_url = run.html_url
    seen.name = f"run-{run.id}-{run.run_attempt}"
    if run.conclusion == "success":
        return _succeeded(gh or clients.github(), settings, runner, event, seen)
    fix_branch = side_branch(settings.branch_prefix, run.head_branch or "", run.id)
    if gh is None:
        git = _checkout(settings.workspace, run.head_sha)
        gh = seen.gh = clients.github()
        _still_at_head(gh, event)  # a run for an older commit must not act on what is newer
        return _attempt(gh, git, settings, clients, runner, event, fix_branch, seen, asked=False)
    _still_at_head(gh, event, dispatched=True)
    # The dispatch job has no checkout of the failing commit: we fetch it, into a directory of ours.
    with tempfile.TemporaryDirectory(prefix="ci-autofix-failing-") as root:
        git = fetch_failing(Path(root), settings, event)
        return _attempt(gh, git, settings, clients, runner, event, fix_branch, seen, asked=True)


def _attempt(
    gh: GitHubAPI,
    git: Git,
    settings: Settings,
    clients: Clients,
    runner: Runner,
    event: WorkflowRunEvent,
    fix_branch: str,
    seen: _Seen,
    *,
    asked: bool,
) -> Outcome:
    """From the lineage to the delivered suggestion; `asked`: a person dispatched this attempt."""
    run = event.run
    branch = run.head_branch or ""
    runner.stage(f"run {run.id} failed on {branch} at {run.head_sha[:12]}")
    _sweep(gh, settings, runner, branch, keep=fix_branch)
    if existing := find_existing(gh, fix_branch):
        return _again(gh, settings, runner, event, existing, fix_branch)
    line = seen.lineage = _lineage(gh, settings, event)
    if twin := same_failure(gh, line, run.id, run.run_attempt):
        return _same_failure(runner, event, twin)
    failing = notice.where(gh, branch, run.head_sha, [p.number for p in run.pull_requests])
    if line.fresh and stuck.unstick(gh, failing.pull):
        runner.info(f"  a new lineage: the `{stuck.STUCK_LABEL}` label is off the failing PR")
    if line.attempts >= settings.max_attempts or line.cost_usd >= settings.max_lineage_cost_usd:
        _stuck(gh, settings, runner, event, line, failing, seen)
    attempt = line.attempts + 1
    if settings.ask_first and not asked:
        _ask(gh, git, settings, runner, event, attempt, failing, seen)
    runner.info(f"  attempt {attempt} of {settings.max_attempts} on this lineage")
    left = settings.max_lineage_cost_usd - line.cost_usd
    if left < settings.max_cost_usd:  # this attempt gets what the lineage has left
        runner.info(f"  the lineage has ${left:.4f} of `max-lineage-cost-usd` left: this attempt's budget")
        settings = settings.model_copy(update={"max_cost_usd": left})
    seen.attempting = run

    # The fix stages are imported only now: a run that halts earlier starts faster.
    from ci_autofix.deliver.inline_failing import suggest_on_failing_pr
    from ci_autofix.ladder.run import LadderInput, run_ladder
    from ci_autofix.ladder.workarea import workarea

    runner.stage("downloading the failed jobs' logs")
    diagnosis, jobs = _triage(gh, event, settings, seen.logs)
    logs = (
        job_logs(jobs, seen.logs) if seen.logs else []
    )  # as downloaded once: the agent's `logs` tool reads them
    seen.diagnosis = diagnosis
    commands = failed_commands(git, run.head_sha, run.workflow_file, jobs)
    if diagnosis.is_infra:
        _halt_infra(gh, event, settings, diagnosis)
    if settings.inherited_failures != "fix-here" and (
        on_base := _halt_if_inherited(gh, settings, runner, event, failing, diagnosis, seen)
    ):
        return _fix_on_base(gh, settings, clients, runner, event, on_base, failing, seen, asked=asked)
    if not line.fresh:
        _break_on_the_same_failure(gh, settings, runner, event, line, failing, diagnosis, seen)

    # Everything run for the repository runs in a copy owned by a uid of its own; the fix is
    # made and pushed from our private git directory there. All of it is gone afterwards.
    with workarea(git.repo, run.head_sha) as area:
        locate_failures(diagnosis, area.work)  # the copy is exactly the failing commit's tree
        runner.annotate(diagnosis.failures)
        proposal = _unless_flaky(
            gh,
            settings,
            event,
            run_ladder,
            LadderInput(
                area=area,
                head_sha=run.head_sha,
                diagnosis=diagnosis,
                settings=settings,
                commit_message=_commit_message(
                    diagnosis, commands.lines, run.id, attempt, run.head_sha, branch
                ),
                tools_dir=area.tools_dir,
                llm_factory=clients.llm,
                commands=commands.lines,
                actions=commands.actions,
                notes=commands.notes,
                workflow_job=commands.job,
                matrix=commands.matrix,
                setup=commands.setup,
                logs=logs,
            ),
            runner,
        )
        outcome, delivery = _deliver(
            gh, area.git, settings, runner, event, diagnosis, proposal, fix_branch, attempt
        )
    suggest_on_failing_pr(
        gh,
        enabled=settings.inline_suggestions,
        failing=failing,
        proposal=proposal,
        suggestion=delivery.pull,
        runner=runner,
        outcome=outcome,
    )
    if proposal.cost_usd:
        _record(gh, settings, line, run, proposal.cost_usd, delivery.pull.number)
    if settings.auto_apply:
        outcome = _auto_apply(gh, settings, runner, event, proposal, delivery, outcome)
    _supersede(gh, settings, runner, line, newer=delivery.pull)
    runner.summary(report.summary(outcome, diagnosis=diagnosis, proposal=proposal))
    return outcome


def _again(
    gh: GitHubAPI,
    settings: Settings,
    runner: Runner,
    event: WorkflowRunEvent,
    existing: Existing,
    fix_branch: str,
) -> Outcome:
    """A run already handled: finish what its delivery left undone (labels, review requests, the
    apply instructions), else change nothing."""
    from ci_autofix.deliver.suggestion import finish, reviewers_for, unfinished

    run, pull, record = event.run, existing.pull, existing.record
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
            gh, settings, pr_numbers=[p.number for p in run.pull_requests], head_sha=run.head_sha
        )
        sealed = pull.body.replace(report.APPLY_PLACEHOLDER, f"-f pull-request={pull.number}")
        finish(gh, pull, record, reviewers, runner.redact(sealed))
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


def _same_failure(runner: Runner, event: WorkflowRunEvent, twin: Suggested) -> Outcome:
    """Another run of this workflow failed the same way on this commit and has its suggestion: it
    stands for this run too. Nothing is attempted, spent or counted again."""
    run, pull, record = event.run, twin.pull, twin.record
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
    runner.info(f"  {outcome.message}")
    runner.summary(report.summary(outcome))
    return outcome


def _still_at_head(gh: GitHubAPI, event: WorkflowRunEvent, *, dispatched: bool = False) -> None:
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


def _lineage(gh: GitHubAPI, settings: Settings, event: WorkflowRunEvent) -> Lineage:
    return lineage(
        gh,
        prefix=settings.branch_prefix,
        failing_branch=event.run.head_branch or "",
        head_sha=event.run.head_sha,
        workflow=event.run.workflow_file,
        trusted=settings.trusted_author,
        max_attempts=settings.max_attempts,
    )


def _an_attempt(halt: Halt) -> bool:
    """Whether the halted attempt counts: it reached the model or made a change."""
    kept = halt.kept
    return halt.spent is not None or (kept is not None and bool(kept.diff or kept.transcript))


def _record(
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


def _halt_if_inherited(
    gh: GitHubAPI,
    settings: Settings,
    runner: Runner,
    event: WorkflowRunEvent,
    failing: notice.Where,
    diagnosis: Diagnosis,
    seen: _Seen,
) -> OnBase | None:
    """Halt `failing-on-base` when the base branch's latest completed run of this workflow failed
    the same way: the failure is inherited; a fix belongs on the base. Said once on the failing PR.
    With `inherited-failures: fix-base`, the base's run is returned instead, for the fix there."""
    from ci_autofix.deliver import inherited
    from ci_autofix.workflow.inherited import failing_on_base

    run = event.run
    base = failing.pull.base_ref if failing.pull is not None else gh.default_branch()
    if base == run.head_branch or seen.logs is None:
        return None
    runner.stage(f"comparing with `{base}`'s latest run of the workflow")
    found = failing_on_base(
        gh,
        base=base,
        workflow=run.workflow_file,
        run_id=run.id,
        run_attempt=run.run_attempt,
        diagnosis=diagnosis,
        logs=seen.logs / "base",
        max_tokens=settings.max_log_tokens,
        pull=failing.pull.number if failing.pull is not None else None,
    )
    if found is None or settings.inherited_failures == "fix-base":
        return found
    where = {"server_url": settings.server_url, "repository": settings.repository}
    text = inherited.said(found, **where)
    inherited.tell(gh, failing, runner.redact(f"{inherited.MARKER}\n{text}"), settings.trusted_author)
    raise Halt(HaltReason.FAILING_ON_BASE, text, details=inherited.details(found, **where))


def _fix_on_base(
    gh: GitHubAPI,
    settings: Settings,
    clients: Clients,
    runner: Runner,
    event: WorkflowRunEvent,
    found: OnBase,
    failing: notice.Where,
    seen: _Seen,
    *,
    asked: bool,
) -> Outcome:
    """`inherited-failures: fix-base`: the attempt is made for the base branch's own failed run, as
    its own propose run would make it: the base's head is the fix's parent, the suggestion PR goes
    into the base branch, through the same apply gate. The failing PR is told where, once."""
    from ci_autofix.deliver import inherited

    where = {"server_url": settings.server_url, "repository": settings.repository}
    runner.stage(
        f"the failure is inherited from `{found.branch}`: attempting it there, for run {found.run.id}"
    )
    fix_branch = side_branch(settings.branch_prefix, found.branch, found.run.id)
    here = settings.model_copy(update={"inherited_failures": "fix-here"})
    with tempfile.TemporaryDirectory(prefix="ci-autofix-base-") as root:
        try:
            base = failed_run_event(gh, found.run.id, event.repository)
            check_guards(base, settings)  # the base's run passes the guards its own propose run would
            git = fetch_failing(Path(root), settings, base)
            outcome = _attempt(gh, git, here, clients, runner, base, fix_branch, seen, asked=asked)
        except Halt as halt:
            halt.details.update(inherited.details(found, **where))
            raise
    outcome.details.update(inherited.details(found, **where), proposed_against=found.branch)
    text = inherited.said(found, **where, proposed=outcome.pull_request_url)
    inherited.tell(gh, failing, runner.redact(f"{inherited.MARKER}\n{text}"), settings.trusted_author)
    outcome.message = f"{text} {outcome.message}"
    runner.summary(f"\n{text}\n")
    return outcome


def _break_on_the_same_failure(
    gh: GitHubAPI,
    settings: Settings,
    runner: Runner,
    event: WorkflowRunEvent,
    line: Lineage,
    failing: notice.Where,
    diagnosis: Diagnosis,
    seen: _Seen,
) -> None:
    """The circuit breaker: CI failed on the fix at the head with the very failure (same failed
    steps, same signature) of the run that fix was made for. Trying the same again would spend for
    nothing: stuck at once, both runs in the report."""
    run, fix = event.run, line.applied[0]
    before = gh.workflow_run(fix.run_id)  # the run GitHub's provenance names, not a record's claim
    mine = signature(diagnosis)
    if before.workflow_path != run.workflow_file or not mine or seen.logs is None:
        return
    if failed_steps(gh, run.id, run.run_attempt) != failed_steps(gh, before.id, before.run_attempt):
        return
    earlier_logs = seen.logs / f"run-{before.id}"
    earlier_logs.mkdir(exist_ok=True)
    try:
        earlier, _ = triage_run(
            gh, before.id, before.run_attempt, earlier_logs, max_tokens=settings.max_log_tokens
        )
    except Halt:  # its logs are gone: nothing to compare with, the loop goes on
        return
    if signature(earlier) != mine:
        return
    link = partial(report.run_link, settings.server_url, settings.repository)
    note = (
        f"CI failed on the applied fix {fix.sha[:12]} ([run {run.id}]({link(run.id)})) with the same failure "
        f"as [run {before.id}]({link(before.id)}), the run that fix was made for: the same failed steps "
        "and the same tests and findings. Trying the same again would spend for nothing."
    )
    _stuck(gh, settings, runner, event, line, failing, seen, breaker=note, diagnosis=diagnosis)


def _stuck(
    gh: GitHubAPI,
    settings: Settings,
    runner: Runner,
    event: WorkflowRunEvent,
    line: Lineage,
    failing: notice.Where,
    seen: _Seen,
    *,
    breaker: str = "",
    diagnosis: Diagnosis | None = None,
) -> NoReturn:
    """At the cap (or the circuit breaker's `breaker` note): the stuck report (with this failure's
    excerpt) for a human, then the halt."""
    run = event.run
    runner.stage(
        "the same failure again: reporting for a human"
        if breaker
        else "attempts exhausted: reporting for a human"
    )
    if diagnosis is None:
        diagnosis, _ = _triage(gh, event, settings, seen.logs)
    seen.diagnosis = diagnosis
    body = stuck.render(
        line,
        run_id=run.id,
        server_url=settings.server_url,
        repository=settings.repository,
        excerpt=diagnosis.excerpt,
        max_attempts=settings.max_attempts,
        max_lineage_cost_usd=settings.max_lineage_cost_usd,
        breaker=breaker,
    )
    url = stuck.post(gh, failing, runner.redact(body), settings.trusted_author)
    if breaker:
        fix = line.applied[0]
        raise Halt(
            HaltReason.SAME_FAILURE_AGAIN,
            f"CI fails on `{run.head_branch}` at the applied fix {fix.sha[:12]} with the same failure as run "
            f"{fix.run_id}, the run that fix was made for; ci-autofix will not try the same again. The stuck "
            f"report: {url}. Push a fix yourself (a commit of yours starts a new lineage).",
            details={"stuck_report": url, "attempts": line.attempts, "runs": [fix.run_id, run.id]},
        )
    if line.attempts < settings.max_attempts:
        raise Halt(
            HaltReason.LINEAGE_BUDGET,
            f"ci-autofix's attempts for `{run.head_branch}` on this lineage spent ${line.cost_usd:.4f} on the "
            f"model and CI still fails; `max-lineage-cost-usd` is {settings.max_lineage_cost_usd}. The stuck "
            f"report: {url}. Push a fix yourself (a commit of yours starts a new lineage), or raise "
            "`max-lineage-cost-usd`.",
            details={"stuck_report": url, "attempts": line.attempts, "lineage_cost_usd": line.cost_usd},
        )
    raise Halt(
        HaltReason.ATTEMPTS_EXHAUSTED,
        f"ci-autofix made {line.attempts} attempt(s) for `{run.head_branch}` on this lineage and CI still "
        f"fails; `max-attempts` is {settings.max_attempts}. The stuck report: {url}. Push a fix yourself "
        "(a commit of yours starts a new lineage), or raise `max-attempts`.",
        details={"stuck_report": url, "attempts": line.attempts},
    )


def _succeeded(
    gh: GitHubAPI, settings: Settings, runner: Runner, event: WorkflowRunEvent, seen: _Seen
) -> Outcome:
    """A green run: when the branch's head is a fix ci-autofix made, the loop ended well."""
    run = event.run
    _still_at_head(gh, event)
    seen.gh = gh
    line = seen.lineage = _lineage(gh, settings, event)
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
        _say_once(
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
    _supersede(gh, settings, runner, line, newer=None)
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


def _say_once(gh: GitHubAPI, settings: Settings, runner: Runner, number: int, marker: str, text: str) -> None:
    """Comment on #number unless a comment of ours with `marker` is there already (a re-run)."""
    if notice.ours(gh.comments(number), marker, settings.trusted_author) is not None:
        return
    gh.comment(number, runner.redact(f"{marker}\n{text}"))


def _sweep(gh: GitHubAPI, settings: Settings, runner: Runner, branch: str, *, keep: str) -> None:
    """Delete the suggestion branches of `branch` left without an open PR: closed means gone."""
    stray = strays(
        gh, prefix=settings.branch_prefix, failing_branch=branch, trusted=settings.trusted_author, keep=keep
    )
    problems = sweep(gh, stray)
    if len(stray) > len(problems):
        runner.info(f"  deleted {len(stray) - len(problems)} suggestion branch(es) without an open PR")
    for problem in problems:
        runner.warning(problem)


def _supersede(
    gh: GitHubAPI, settings: Settings, runner: Runner, line: Lineage, *, newer: PullInfo | None
) -> None:
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


def _deliver(
    gh: GitHubAPI,
    git: Git,
    settings: Settings,
    runner: Runner,
    event: WorkflowRunEvent,
    diagnosis: Diagnosis,
    proposal: Proposal,
    fix_branch: str,
    attempt: int,
) -> tuple[Outcome, Delivery]:
    from ci_autofix.deliver.suggestion import deliver, delivered, reviewers_for

    run = event.run
    branch = run.head_branch or ""
    runner.stage("delivering the suggestion")
    ctx = _context(settings, event)
    record = Suggestion(
        run_id=run.id,
        run_attempt=run.run_attempt,
        workflow=run.workflow_file,
        failing_branch=branch,
        head_sha=run.head_sha,
        fix_sha=proposal.fix_sha,
        fix_branch=fix_branch,
        attempt=attempt,
        verification=proposal.verification.outcome if proposal.verification else "skipped",
        policy=proposal.verdict.status,
        failed=report.failed_plain(diagnosis, proposal.commands)[:MAX_FAILED_CHARS],
        files=proposal.changed_files[:MAX_FILES],
    )
    reviewers = reviewers_for(
        gh, settings, pr_numbers=[p.number for p in run.pull_requests], head_sha=run.head_sha
    )
    delivery = deliver(gh, git, settings, ctx, diagnosis, proposal, record, reviewers, run.workflow_file)
    message = f"Suggestion {delivery.pull.html_url} is waiting for review."
    return delivered(runner, delivery, proposal, message=message, run_url=run.html_url), delivery


def _ask(
    gh: GitHubAPI,
    git: Git,
    settings: Settings,
    runner: Runner,
    event: WorkflowRunEvent,
    attempt: int,
    failing: notice.Where,
    seen: _Seen,
) -> NoReturn:
    """`ask-first`: triage only, then the comment that asks whether to attempt a fix, and the halt."""
    run = event.run
    runner.stage("ask-first: triaging the failure for a person to decide on")
    diagnosis, jobs = _triage(gh, event, settings, seen.logs)
    seen.diagnosis = diagnosis
    locate_failures(diagnosis, git.repo)
    runner.annotate(diagnosis.failures)
    if diagnosis.is_infra:  # nothing to ask: no change would fix it
        _halt_infra(gh, event, settings, diagnosis)
    workflow = own_workflow_file(settings)
    question = ask.Ask(
        run_id=run.id,
        run_url=report.run_link(settings.server_url, settings.repository, run.id),
        branch=run.head_branch or "",
        head_sha=run.head_sha,
        attempt=attempt,
        max_attempts=settings.max_attempts,
        repository=settings.repository,
        workflow_file=workflow,
        workflow_url=f"{settings.server_url.rstrip('/')}/{settings.repository}/actions/workflows/{workflow}",
        failing_workflow=run.workflow_file,
        dispatchable=dispatchable(gh, workflow),
        max_cost_usd=settings.max_cost_usd,
        max_turns=settings.max_turns,
        max_minutes=settings.max_minutes,
    )
    if not question.dispatchable:
        runner.warning(
            f"`{workflow}` has no `workflow_dispatch` trigger on the default branch, so the ask-first "
            "comment's command cannot start an attempt: add the trigger with a `run-id` input (README, Approval)."
        )
    body = runner.redact(ask.render(question, diagnosis, jobs))
    comment = notice.upsert(gh, failing, ask.marker(question), body, settings.trusted_author)
    raise Halt(
        HaltReason.AWAITING_APPROVAL,
        f"ask-first is on: nothing was attempted for run {run.id}. The question is at {comment.html_url}; "
        f"to attempt a fix, run `{ask.command(question)}`. Doing nothing declines.",
        details={"ask_comment": comment.html_url},
    )


def _auto_apply(
    gh: GitHubAPI,
    settings: Settings,
    runner: Runner,
    event: WorkflowRunEvent,
    proposal: Proposal,
    delivery: Delivery,
    outcome: Outcome,
) -> Outcome:
    """`auto-apply`: dispatch apply for a verified, policy-clean suggestion; say why not otherwise."""
    from ci_autofix.deliver import auto_apply

    if (reason := auto_apply.why_not(proposal)) is not None:
        runner.info(f"  auto-apply: not for this fix ({reason}); it waits for a person")
        outcome.auto_apply = "not-eligible"
        outcome.details["auto_apply"] = f"not applied automatically: {reason}"
        return outcome
    runner.stage(f"auto-apply: dispatching {settings.apply_workflow} for #{delivery.pull.number}")
    done = auto_apply.dispatch(
        gh,
        delivery.pull,
        delivery.record,
        ctx=_context(settings, event),
        apply_workflow=settings.apply_workflow,
        trusted=settings.trusted_author,
        redact=runner.redact,
    )
    if done.state != "dispatched":
        runner.warning(done.note)
    outcome.auto_apply = done.state
    outcome.details["auto_apply"] = done.note
    outcome.details["apply_run_url"] = done.run_url
    return outcome


def _context(settings: Settings, event: WorkflowRunEvent) -> report.RunContext:
    run = event.run
    return report.RunContext(
        repository=settings.repository,
        server_url=settings.server_url,
        workflow_name=run.name or run.workflow_file or "CI",
        run_url=run.html_url,
        failing_branch=run.head_branch or "",
        head_sha=run.head_sha,
    )


def _triage(
    gh: GitHubAPI, event: WorkflowRunEvent, settings: Settings, logs: Path | None
) -> tuple[Diagnosis, list[JobInfo]]:
    if logs is None:
        raise RuntimeError("the flow made no directory for the logs")
    return triage_run(gh, event.run.id, event.run.run_attempt, logs, max_tokens=settings.max_log_tokens)


def _unless_flaky(
    gh: GitHubAPI,
    settings: Settings,
    event: WorkflowRunEvent,
    ladder: Callable[[LadderInput, Runner], Proposal],
    job: LadderInput,
    runner: Runner,
) -> Proposal:
    """The fix ladder; when the failure did not reproduce here and `rerun-flaky` is on, the failed
    jobs are re-run once (on the run's first attempt: a re-run that fails again is no flake)."""
    try:
        return ladder(job, runner)
    except Halt as halt:
        if (
            halt.reason is not HaltReason.NOT_REPRODUCED
            or not settings.rerun_flaky
            or event.run.run_attempt != 1
        ):
            raise
        gh.rerun_failed_jobs(event.run.id)
        raise Halt(
            halt.reason,
            f"{halt.message} `rerun-flaky` is on: the failed jobs were re-run once.",
            details={**halt.details, "rerun": True},
        ) from None


def _halt_infra(gh: GitHubAPI, event: WorkflowRunEvent, settings: Settings, diagnosis: Diagnosis) -> None:
    reason = diagnosis.infra_reason or diagnosis.category.value
    if settings.rerun_infra and event.run.run_attempt == 1:
        gh.rerun_failed_jobs(event.run.id)
        raise Halt(
            HaltReason.INFRA, f"The failure is infrastructure ({reason}); the failed jobs were re-run once."
        )
    raise Halt(
        HaltReason.INFRA,
        f"The failure is infrastructure ({reason}), not the code: no change would fix it. "
        "Re-run the jobs (or set `rerun-infra: true` to have ci-autofix do it once).",
    )


def _checkout(workspace: Path, head_sha: str) -> Git:
    git = Git(workspace)
    try:
        head = git.rev_parse("HEAD")
    except GitError:
        raise UserError(
            f"The workspace {workspace} is not a git checkout.",
            "Add `actions/checkout` with `ref: ${{ github.event.workflow_run.head_sha }}` before ci-autofix.",
        ) from None
    if head != head_sha:
        raise UserError(
            f"The checkout is at {head[:12]}, not at the failing commit {head_sha[:12]}.",
            "Check out the failing commit: `ref: ${{ github.event.workflow_run.head_sha }}` in "
            "actions/checkout (a workflow_run job otherwise checks out the default branch).",
        )
    return git


def _commit_message(
    diagnosis: Diagnosis, commands: list[str], run_id: int, attempt: int, head_sha: str, branch: str
) -> str:
    subject = f"Fix {report.what_failed(diagnosis, commands).strip('`').strip()} failing on {branch}"
    return (
        f"{subject[:72]}\n\nProposed by ci-autofix for the failed run {run_id}.\n\n"
        f"Autofix-Run: {run_id}\nAutofix-Attempt: {attempt}\nAutofix-Base: {head_sha}\n"
    )


__all__ = ["propose"]
