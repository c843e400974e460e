"""Where the propose flow stops short of a suggestion: the lineage at its cap, the circuit breaker,
a failure inherited from the base branch, infrastructure, a failure that did not reproduce.

Each either returns (the flow goes on) or raises the `Halt` that says why it stopped and what a
person can do; the ones that need a person leave a report on the failing PR first.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, NoReturn

from ci_autofix.deliver import notice, report, stuck
from ci_autofix.errors import Halt, HaltReason
from ci_autofix.flows.attempt import Attempt, triage
from ci_autofix.runner import Runner
from ci_autofix.state.ledger import Lineage, failed_steps
from ci_autofix.triage.model import Diagnosis
from ci_autofix.triage.signature import signature
from ci_autofix.workflow.failed_run import triage_run

if TYPE_CHECKING:
    from ci_autofix.ladder.run import LadderInput, Proposal
    from ci_autofix.workflow.inherited import OnBase


def at_the_cap(
    at: Attempt,
    line: Lineage,
    failing: notice.Where,
    *,
    breaker: str = "",
    diagnosis: Diagnosis | None = None,
) -> NoReturn:
    """At the cap (or the circuit breaker's `breaker` note): the stuck report (with this failure's
    excerpt) for a human, then the halt."""
    settings, run = at.settings, at.run
    at.runner.stage(
        "the same failure again: reporting for a human"
        if breaker
        else "attempts exhausted: reporting for a human"
    )
    if diagnosis is None:
        diagnosis, _ = triage(at)
    at.seen.diagnosis = diagnosis
    body = stuck.render(
        line,
        stuck.Limits(settings.max_attempts, settings.max_lineage_cost_usd),
        run_id=run.id,
        run_link=partial(report.run_link, settings.server_url, settings.repository),
        excerpt=diagnosis.excerpt,
        breaker=breaker,
    )
    url = stuck.post(at.gh, failing, at.runner.redact(body), settings.trusted_author)
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


def break_on_the_same_failure(
    at: Attempt, line: Lineage, failing: notice.Where, diagnosis: Diagnosis
) -> None:
    """The circuit breaker: CI failed on the fix at the head with the very failure (same failed
    steps, same signature) of the run that fix was made for. Trying the same again would spend for
    nothing: stuck at once, both runs in the report."""
    gh, run, fix = at.gh, at.run, line.applied[0]
    before = gh.workflow_run(fix.run_id)  # the run GitHub's provenance names, not a record's claim
    mine = signature(diagnosis)
    if before.workflow_path != run.workflow_file or not mine:
        return
    if failed_steps(gh, run.id, run.run_attempt) != failed_steps(gh, before.id, before.run_attempt):
        return
    earlier_logs = at.logs / f"run-{before.id}"
    earlier_logs.mkdir(exist_ok=True)
    try:
        earlier, _ = triage_run(
            gh, before.id, before.run_attempt, earlier_logs, max_tokens=at.settings.max_log_tokens
        )
    except Halt:  # its logs are gone: nothing to compare with, the loop goes on
        return
    if signature(earlier) != mine:
        return
    link = partial(report.run_link, at.settings.server_url, at.settings.repository)
    note = (
        f"CI failed on the applied fix {fix.sha[:12]} ([run {run.id}]({link(run.id)})) with the same failure "
        f"as [run {before.id}]({link(before.id)}), the run that fix was made for: the same failed steps "
        "and the same tests and findings. Trying the same again would spend for nothing."
    )
    at_the_cap(at, line, failing, breaker=note, diagnosis=diagnosis)


def halt_if_inherited(at: Attempt, failing: notice.Where, diagnosis: Diagnosis) -> OnBase | None:
    """Halt `failing-on-base` when the base branch's latest completed run of this workflow failed
    the same way: the failure is inherited; a fix belongs on the base. Said once on the failing PR.
    With `inherited-failures: fix-base`, the base's run is returned instead, for the fix there."""
    from ci_autofix.deliver import inherited
    from ci_autofix.workflow.inherited import failing_on_base

    gh, settings, run = at.gh, at.settings, at.run
    base = failing.pull.base_ref if failing.pull is not None else gh.default_branch()
    if base == run.head_branch:
        return None
    at.runner.stage(f"comparing with `{base}`'s latest run of the workflow")
    found = failing_on_base(
        gh,
        base=base,
        workflow=run.workflow_file,
        run_id=run.id,
        run_attempt=run.run_attempt,
        diagnosis=diagnosis,
        logs=at.logs / "base",
        max_tokens=settings.max_log_tokens,
        pull=failing.pull.number if failing.pull is not None else None,
    )
    if found is None or settings.inherited_failures == "fix-base":
        return found
    where = {"server_url": settings.server_url, "repository": settings.repository}
    text = inherited.said(found, **where)
    inherited.tell(gh, failing, at.runner.redact(f"{inherited.MARKER}\n{text}"), settings.trusted_author)
    raise Halt(HaltReason.FAILING_ON_BASE, text, details=inherited.details(found, **where))


def halt_infra(at: Attempt, diagnosis: Diagnosis) -> None:
    """Halt on an infrastructure failure (no change would fix it); `rerun-infra` re-runs it once."""
    reason = diagnosis.infra_reason or diagnosis.category.value
    if at.settings.rerun_infra and at.run.run_attempt == 1:
        at.gh.rerun_failed_jobs(at.run.id)
        raise Halt(
            HaltReason.INFRA, f"The failure is infrastructure ({reason}); the failed jobs were re-run once."
        )
    raise Halt(
        HaltReason.INFRA,
        f"The failure is infrastructure ({reason}), not the code: no change would fix it. "
        "Re-run the jobs (or set `rerun-infra: true` to have ci-autofix do it once).",
    )


def unless_flaky(
    at: Attempt, ladder: Callable[[LadderInput, Runner], Proposal], job: LadderInput
) -> Proposal:
    """The fix ladder; when the failure did not reproduce here and `rerun-flaky` is on, the failed
    jobs are re-run once (on the run's first attempt: a re-run that fails again is no flake)."""
    event = at.event
    try:
        return ladder(job, at.runner)
    except Halt as halt:
        if (
            halt.reason is not HaltReason.NOT_REPRODUCED
            or not at.settings.rerun_flaky
            or event.run.run_attempt != 1
        ):
            raise
        at.gh.rerun_failed_jobs(event.run.id)
        raise Halt(
            halt.reason,
            f"{halt.message} `rerun-flaky` is on: the failed jobs were re-run once.",
            details={**halt.details, "rerun": True},
        ) from None
