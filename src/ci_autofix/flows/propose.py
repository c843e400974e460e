"""The propose flow: from a failed `workflow_run` to a suggestion PR that asks for review.

event ─► guards ─► existing? ─► lineage (attempts) ─► stuck at the cap? ─► failed jobs' logs
      ─► triage ─► fix ladder ─► deliver ─► supersede the suggestions for older commits

A run that concluded `success` on a fix ci-autofix made ends the loop: `status: success`.
Each step takes the one `Attempt` (`flows.attempt`); the lineage's bookkeeping is in
`flows.lineage`, the places the flow stops short of a suggestion in `flows.stops`.
"""

from __future__ import annotations

import tempfile
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from ci_autofix.deliver import ask, notice, report, stuck
from ci_autofix.deliver.ci import dispatchable
from ci_autofix.errors import Halt, HaltReason, UserError
from ci_autofix.flows.attempt import Attempt, AttemptSoFar, context, github_context, triage
from ci_autofix.flows.clients import Clients
from ci_autofix.flows.dispatch import dispatched_event, failed_run_event, fetch_failing, own_workflow_file
from ci_autofix.flows.ended import ended
from ci_autofix.flows.event import (
    RUN_ID_REMEDY,
    check_guards,
    dispatched_run_id,
    parse_workflow_run,
    read_payload,
)
from ci_autofix.flows.lineage import (
    again,
    counts,
    lineage_of,
    record,
    still_at_head,
    succeeded,
    supersede_stale,
    sweep_strays,
    twin_stands,
)
from ci_autofix.flows.stops import (
    at_the_cap,
    break_on_the_same_failure,
    halt_if_inherited,
    halt_infra,
    unless_flaky,
)
from ci_autofix.git import Git, GitError
from ci_autofix.outcome import Outcome
from ci_autofix.runner import Runner
from ci_autofix.settings import Settings
from ci_autofix.state.ledger import Lineage, find_existing, same_failure, side_branch
from ci_autofix.state.marker import MAX_FAILED_CHARS, MAX_FILES, Suggestion
from ci_autofix.triage.locate import locate_failures
from ci_autofix.triage.model import Diagnosis
from ci_autofix.workflow.failed_run import failed_commands, job_logs

if TYPE_CHECKING:
    from ci_autofix.deliver.suggestion import Delivery
    from ci_autofix.ladder.run import Proposal
    from ci_autofix.workflow.inherited import OnBase


def propose(settings: Settings, clients: Clients, runner: Runner) -> Outcome:
    runner.mask(settings.secrets())  # done already by the entrypoint; `runner.redact` needs them
    seen = AttemptSoFar()
    with tempfile.TemporaryDirectory(prefix="ci-autofix-logs-") as logs:
        try:
            return _propose(settings, clients, runner, seen, Path(logs))
        except Halt as halt:
            return _halted(halt, settings, runner, seen)


def _halted(halt: Halt, settings: Settings, runner: Runner, seen: AttemptSoFar) -> Outcome:
    """The shared ending; then an attempt the halt cut short is recorded (when it counts), and the
    suggestions made for older commits are closed as after any attempt."""
    outcome = ended(
        halt,
        runner,
        keep_in=settings.runner_temp,
        name=seen.name,
        summary=partial(report.summary, diagnosis=seen.diagnosis),
        run_url=seen.run_url,
    )
    if seen.gh is not None and seen.lineage is not None:
        if seen.attempting is not None and counts(halt):
            spent = halt.spent.cost_usd if halt.spent else None
            record(seen.gh, settings, seen.lineage, seen.attempting, spent, halt)
        supersede_stale(seen.gh, runner, seen.lineage, newer=None)
    return outcome


def _propose(settings: Settings, clients: Clients, runner: Runner, seen: AttemptSoFar, logs: Path) -> Outcome:
    """The failed run (from the payload, or as GitHub's API reports a dispatched one) and its
    checkout (the workspace, or ours in a dispatch): the attempt's context."""
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
        return succeeded(gh or clients.github(), settings, runner, event, seen)
    fix_branch = side_branch(settings.branch_prefix, run.head_branch or "", run.id)
    at = partial(Attempt, settings, clients, runner, event=event, fix_branch=fix_branch, logs=logs, seen=seen)
    if gh is None:
        git = _checkout(settings.workspace, run.head_sha)
        gh = seen.gh = clients.github()
        still_at_head(gh, event)  # a run for an older commit must not act on what is newer
        return _attempt(at(gh=gh, git=git, asked=False))
    still_at_head(gh, event, dispatched=True)
    # The dispatch job has no checkout of the failing commit: we fetch it, into a directory of ours.
    with tempfile.TemporaryDirectory(prefix="ci-autofix-failing-") as root:
        git = fetch_failing(Path(root), settings, event)
        return _attempt(at(gh=gh, git=git, asked=True))


def _attempt(at: Attempt) -> Outcome:
    """From the lineage to the attempt's number and budget: whether an attempt is made at all."""
    gh, settings, runner, run = at.gh, at.settings, at.runner, at.run
    runner.stage(f"run {run.id} failed on {at.branch} at {run.head_sha[:12]}")
    sweep_strays(at)
    if existing := find_existing(gh, at.fix_branch):
        return again(at, existing)
    line = at.seen.lineage = lineage_of(gh, settings, at.event)
    if twin := same_failure(gh, line, run.id, run.run_attempt):
        return twin_stands(at, twin)
    failing = notice.where(gh, at.branch, run.head_sha, [p.number for p in run.pull_requests])
    if line.fresh and stuck.unstick(gh, failing.pull):
        runner.info(f"  a new lineage: the `{stuck.STUCK_LABEL}` label is off the failing PR")
    if line.attempts >= settings.max_attempts or line.cost_usd >= settings.max_lineage_cost_usd:
        at_the_cap(at, line, failing)
    number = line.attempts + 1
    if settings.ask_first and not at.asked:
        _ask(at, number, failing)
    runner.info(f"  attempt {number} of {settings.max_attempts} on this lineage")
    left = settings.max_lineage_cost_usd - line.cost_usd
    if left < settings.max_cost_usd:  # this attempt gets what the lineage has left
        runner.info(f"  the lineage has ${left:.4f} of `max-lineage-cost-usd` left: this attempt's budget")
        at = replace(at, settings=settings.model_copy(update={"max_cost_usd": left}))
    at.seen.attempting = run
    return _fix(at, line, failing, number)


def _fix(at: Attempt, line: Lineage, failing: notice.Where, number: int) -> Outcome:
    """The attempt `number`: triage, the stops before any spend, the fix ladder in a work area,
    the delivery, then the attempt's record and what follows a suggestion."""
    # The fix stages are imported only now: a run that halts earlier starts faster.
    from ci_autofix.deliver.inline_failing import suggest_on_failing_pr
    from ci_autofix.ladder.run import LadderInput, run_ladder
    from ci_autofix.ladder.workarea import workarea

    gh, settings, runner, run = at.gh, at.settings, at.runner, at.run
    runner.stage("downloading the failed jobs' logs")
    diagnosis, jobs = triage(at)
    logs = job_logs(jobs, at.logs)  # as downloaded once: the agent's `logs` tool reads them
    at.seen.diagnosis = diagnosis
    commands = failed_commands(at.git, run.head_sha, run.workflow_file, jobs, github_context(at))
    if diagnosis.is_infra:
        halt_infra(at, diagnosis)
    if settings.inherited_failures != "fix-here" and (on_base := halt_if_inherited(at, failing, diagnosis)):
        return _fix_on_base(at, on_base, failing)
    if not line.fresh:
        break_on_the_same_failure(at, line, failing, diagnosis)

    # Everything run for the repository runs in a copy owned by a uid of its own; the fix is
    # made and pushed from our private git directory there. All of it is gone afterwards.
    with workarea(at.git.repo, run.head_sha) as area:
        locate_failures(diagnosis, area.work)  # the copy is exactly the failing commit's tree
        runner.annotate(diagnosis.failures)
        job = LadderInput(
            area=area,
            head_sha=run.head_sha,
            diagnosis=diagnosis,
            settings=settings,
            commit_message=_commit_message(at, diagnosis, commands.lines, number),
            tools_dir=area.tools_dir,
            llm_factory=at.clients.llm,
            failed=commands,
            logs=logs,
        )
        proposal = unless_flaky(at, run_ladder, job)
        outcome, delivery = _deliver(at, area.git, diagnosis, proposal, number)
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
        record(gh, settings, line, run, proposal.cost_usd, delivery.pull.number)
    if settings.auto_apply:
        outcome = _auto_apply(at, proposal, delivery, outcome)
    supersede_stale(gh, runner, line, newer=delivery.pull)
    runner.summary(report.summary(outcome, diagnosis=diagnosis, proposal=proposal))
    return outcome


def _fix_on_base(at: Attempt, found: OnBase, failing: notice.Where) -> Outcome:
    """`inherited-failures: fix-base`: the attempt is made for the base branch's own failed run, as
    its own propose run would make it: the base's head is the fix's parent, the suggestion PR goes
    into the base branch, through the same apply gate. The failing PR is told where, once."""
    from ci_autofix.deliver import inherited

    settings, runner = at.settings, at.runner
    where = {"server_url": settings.server_url, "repository": settings.repository}
    runner.stage(
        f"the failure is inherited from `{found.branch}`: attempting it there, for run {found.run.id}"
    )
    here = settings.model_copy(update={"inherited_failures": "fix-here"})
    with tempfile.TemporaryDirectory(prefix="ci-autofix-base-") as root:
        try:
            base = failed_run_event(at.gh, found.run.id, at.event.repository)
            check_guards(base, settings)  # the base's run passes the guards its own propose run would
            git = fetch_failing(Path(root), settings, base)
            fix_branch = side_branch(settings.branch_prefix, found.branch, found.run.id)
            outcome = _attempt(replace(at, settings=here, event=base, git=git, fix_branch=fix_branch))
        except Halt as halt:
            halt.details.update(inherited.details(found, **where))
            raise
    outcome.details.update(inherited.details(found, **where), proposed_against=found.branch)
    text = inherited.said(found, **where, proposed=outcome.pull_request_url)
    inherited.tell(at.gh, failing, runner.redact(f"{inherited.MARKER}\n{text}"), settings.trusted_author)
    outcome.message = f"{text} {outcome.message}"
    runner.summary(f"\n{text}\n")
    return outcome


def _deliver(
    at: Attempt, git: Git, diagnosis: Diagnosis, proposal: Proposal, number: int
) -> tuple[Outcome, Delivery]:
    """The suggestion, pushed from `git` (the work area's) and opened into the failing branch."""
    from ci_autofix.deliver.suggestion import deliver, delivered, reviewers_for

    run = at.run
    at.runner.stage("delivering the suggestion")
    record = Suggestion(
        run_id=run.id,
        run_attempt=run.run_attempt,
        workflow=run.workflow_file,
        failing_branch=at.branch,
        head_sha=run.head_sha,
        fix_sha=proposal.fix_sha,
        fix_branch=at.fix_branch,
        attempt=number,
        verification=proposal.verification.outcome if proposal.verification else "skipped",
        policy=proposal.verdict.status,
        failed=report.failed_plain(diagnosis, proposal.commands)[:MAX_FAILED_CHARS],
        files=proposal.changed_files[:MAX_FILES],
    )
    reviewers = reviewers_for(
        at.gh, at.settings.reviewers, pr_numbers=[p.number for p in run.pull_requests], head_sha=run.head_sha
    )
    brief = report.Brief(context(at.settings, at.event), proposal, record, answers=diagnosis)
    delivery = deliver(at.gh, git, at.settings, brief, reviewers)
    message = f"Suggestion {delivery.pull.html_url} is waiting for review."
    return delivered(at.runner, delivery, proposal, message=message, run_url=run.html_url), delivery


def _ask(at: Attempt, number: int, failing: notice.Where) -> NoReturn:
    """`ask-first`: triage only, then the comment that asks whether to attempt a fix, and the halt."""
    gh, settings, runner, run = at.gh, at.settings, at.runner, at.run
    runner.stage("ask-first: triaging the failure for a person to decide on")
    diagnosis, jobs = triage(at)
    at.seen.diagnosis = diagnosis
    locate_failures(diagnosis, at.git.repo)
    runner.annotate(diagnosis.failures)
    if diagnosis.is_infra:  # nothing to ask: no change would fix it
        halt_infra(at, diagnosis)
    workflow = own_workflow_file(settings)
    question = ask.Ask(
        run_id=run.id,
        run_url=report.run_link(settings.server_url, settings.repository, run.id),
        branch=at.branch,
        head_sha=run.head_sha,
        attempt=number,
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


def _auto_apply(at: Attempt, proposal: Proposal, delivery: Delivery, outcome: Outcome) -> Outcome:
    """`auto-apply`: dispatch apply for a verified, policy-clean suggestion; say why not otherwise."""
    from ci_autofix.deliver import auto_apply

    settings, runner = at.settings, at.runner
    if (reason := auto_apply.why_not(proposal)) is not None:
        runner.info(f"  auto-apply: not for this fix ({reason}); it waits for a person")
        outcome.auto_apply = "not-eligible"
        outcome.details["auto_apply"] = f"not applied automatically: {reason}"
        return outcome
    runner.stage(f"auto-apply: dispatching {settings.apply_workflow} for #{delivery.pull.number}")
    done = auto_apply.dispatch(
        at.gh,
        delivery.pull,
        delivery.record,
        ctx=context(settings, at.event),
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


def _commit_message(at: Attempt, diagnosis: Diagnosis, commands: list[str], number: int) -> str:
    run = at.run
    subject = f"Fix {report.what_failed(diagnosis, commands).strip('`').strip()} failing on {at.branch}"
    return (
        f"{subject[:72]}\n\nProposed by ci-autofix for the failed run {run.id}.\n\n"
        f"Autofix-Run: {run.id}\nAutofix-Attempt: {number}\nAutofix-Base: {run.head_sha}\n"
    )


__all__ = ["propose"]
