"""The review flow: a changes-requested review becomes a verified suggestion, thread by thread.

event ─► guards (payload) ─► the PR and the review as GitHub's API has them (a writer's, the head
      unmoved) ─► answered already? ─► cycles so far (at the cap: the stuck report) ─► threads
      ─► the PR head's CI (a push or pull_request run anchors the suggestion; failed steps re-run)
      ─► fetch head and base ─► fix ladder (the threads as untrusted context) ─► deliver into the
      PR's head branch (a table of threads) ─► one reply per thread ─► inline suggestions

The suggestion is delivered and applied exactly as propose's are (provenance, policy, lease, gate).
Each step takes the one `Cycle` (`flows.cycle`); the PR head's CI and branches are `flows.review_head`.
"""

from __future__ import annotations

import re
import tempfile
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from ci_autofix.agent import UntrustedText
from ci_autofix.deliver import notice, report, stuck
from ci_autofix.deliver.threads import Accounted, account, note_paths, table, threads_of
from ci_autofix.errors import Halt, HaltReason
from ci_autofix.flows.clients import Clients
from ci_autofix.flows.cycle import REVIEW_CYCLES, Cycle, CycleSoFar
from ci_autofix.flows.ended import ended
from ci_autofix.flows.event import read_payload
from ci_autofix.flows.review_event import check_review_guards, parse_review, the_review
from ci_autofix.flows.review_head import checks, fetch, head_ci
from ci_autofix.git import Git
from ci_autofix.github import PullInfo, RunInfo
from ci_autofix.github.api import GitHubAPI
from ci_autofix.markdown import code_span
from ci_autofix.outcome import Outcome
from ci_autofix.refs import check_branch_name
from ci_autofix.runner import Runner
from ci_autofix.settings import Settings
from ci_autofix.state.ledger import find_existing
from ci_autofix.state.marker import MAX_FILES, Suggestion

if TYPE_CHECKING:
    from ci_autofix.ladder.run import Proposal

STUCK_MARKER = "<!-- ci-autofix:review-stuck -->"
MAX_DIFF_CHARS = 40_000  # of the PR's diff, given to the agent


def review(settings: Settings, clients: Clients, runner: Runner) -> Outcome:
    runner.mask(settings.secrets())
    seen = CycleSoFar()
    try:
        return _review(settings, clients, runner, seen)
    except Halt as halt:
        return ended(
            halt,
            runner,
            keep_in=settings.runner_temp,
            name=seen.name,
            summary=partial(report.summary, diagnosis=seen.diagnosis),
        )


def _review(settings: Settings, clients: Clients, runner: Runner, seen: CycleSoFar) -> Outcome:
    """The review as GitHub's API has it, whether it is answered already, and the cycle's number."""
    event = parse_review(read_payload(settings.event_path))
    check_review_guards(event, settings)  # from the payload alone: no API call before this
    number = event.pull_request.number
    seen.name = f"review-{event.review.id}"
    gh = clients.github()
    pull = gh.get_pull(number)
    found = the_review(gh, settings, pull, event.review.id)
    runner.stage(
        f"review {found.id} by @{found.author} requested changes on #{number} at {pull.head_sha[:12]}"
    )
    fix_branch = check_branch_name(
        f"{settings.branch_prefix}{pull.head_ref}/review-{found.id}", what="suggestion branch"
    )
    if existing := find_existing(gh, fix_branch):
        return Outcome(
            "proposed",
            reason="already-proposed",
            message=f"This review was already answered: {existing.pull.html_url}. Nothing changed.",
            fix_branch=fix_branch,
            pull_request=existing.pull.number,
            pull_request_url=existing.pull.html_url,
        )
    threads = threads_of(gh.review_comments(number), found.id)
    cycles = _cycles(gh, settings, pull)
    cy = Cycle(settings, clients, runner, gh, pull, found, threads, fix_branch, number=len(cycles) + 1)
    if len(cycles) >= REVIEW_CYCLES:
        _stuck(cy, cycles)
    runner.info(f"  cycle {cy.number} of {REVIEW_CYCLES} on #{number}; {len(threads)} thread(s)")
    return _fix(cy, seen)


def _fix(cy: Cycle, seen: CycleSoFar) -> Outcome:
    """The PR's head and base fetched, what verifies the fix, the fix ladder in a work area of the
    head, the delivery, then the answer on the reviewed PR."""
    from ci_autofix.ladder.run import LadderInput, run_ladder
    from ci_autofix.ladder.workarea import workarea

    pull = cy.pull
    anchor, failing = head_ci(cy.gh, cy.settings, pull)
    with tempfile.TemporaryDirectory(prefix="ci-autofix-review-") as root:
        (Path(root) / "git").mkdir()
        git, merge_base = fetch(Path(root) / "git", cy.settings, pull)
        pr_diff = git.diff(merge_base, pull.head_sha)
        diagnosis, commands, logs = checks(cy, git, failing, Path(root))
        seen.diagnosis = diagnosis if failing else None
        with workarea(git.repo, pull.head_sha) as area:
            job = LadderInput(
                area=area,
                head_sha=pull.head_sha,
                diagnosis=diagnosis,
                settings=cy.settings,
                commit_message=_commit_message(cy, anchor),
                tools_dir=area.tools_dir,
                llm_factory=cy.clients.llm,
                context=_context(cy, pr_diff),
                task=_task(cy),
                failed=commands,
                threads=[t.id for t in cy.threads],
                logs=logs,
            )
            proposal = run_ladder(job, cy.runner)
            reports = proposal.agent.threads if proposal.agent else []
            accounted = account(cy.threads, reports, note_paths(proposal.diff))
            outcome, pull_url = _deliver(cy, area.git, anchor, proposal, accounted)
        _answer(cy, accounted, proposal, pr_diff, pull_url, outcome)
    cy.runner.summary(report.summary(outcome, proposal=proposal))
    return outcome


def _cycles(gh: GitHubAPI, settings: Settings, pull: PullInfo) -> list[PullInfo]:
    """The suggestions ci-autofix opened for reviews of this PR's branch, open or closed, oldest
    first: GitHub's record of who opened them and from which branch, not any PR body."""
    ours = re.compile(re.escape(f"{settings.branch_prefix}{pull.head_ref}/review-") + r"[1-9][0-9]*")
    return sorted(
        (
            p
            for p in gh.list_pulls(base=pull.head_ref)
            if p.author == settings.trusted_author and ours.fullmatch(p.head_ref)
        ),
        key=lambda p: p.number,
    )


def _stuck(cy: Cycle, cycles: list[PullInfo]) -> NoReturn:
    """At the cap: the stuck report (each cycle, and this review's open threads), then the halt."""
    pull, found = cy.pull, cy.review
    cy.runner.stage("review cycles exhausted: reporting for a human")
    rows = ["| Cycle | Suggestion | State |", "|---|---|---|"]
    for n, suggestion in enumerate(cycles, start=1):
        state = "merged" if suggestion.merged else suggestion.state
        rows.append(f"| {n} | [#{suggestion.number}]({suggestion.html_url}) | {state} |")
    open_rows = ["| Thread | Where | Finding |", "|---|---|---|"]
    for thread in cy.threads:
        open_rows.append(
            f"| [{thread.id}]({cy.thread_url(thread.id)}) | {code_span(thread.where, table=True)} | "
            f"{code_span(thread.finding, table=True)} |"
        )
    body = (
        f"{STUCK_MARKER}\n## ci-autofix is stuck on the review of this pull request\n\n"
        f"ci-autofix answered {len(cycles)} review(s) of this pull request, the most it does "
        f"({REVIEW_CYCLES}), and changes are requested again (review {found.id} by "
        f"{code_span('@' + (found.author or '?'))}). It will not try again: these threads need a person.\n\n"
        + "\n".join(rows)
        + "\n\n### Open threads of the latest review\n\n"
        + ("\n".join(open_rows) if cy.threads else "(the review has no threads: its body is the finding)")
        + "\n"
    )
    url = stuck.post(
        cy.gh,
        notice.Where(pull, pull.head_sha),
        cy.runner.redact(body),
        cy.settings.trusted_author,
        marker=STUCK_MARKER,
    )
    raise Halt(
        HaltReason.REVIEW_CYCLES_EXHAUSTED,
        f"ci-autofix answered {len(cycles)} review(s) of #{pull.number}, the most it does ({REVIEW_CYCLES}); "
        f"the stuck report: {url}. Address the findings yourself.",
        details={"stuck_report": url, "cycles": len(cycles)},
    )


def _context(cy: Cycle, pr_diff: str) -> list[UntrustedText]:
    """The review's body, each thread, and the PR's diff: all untrusted data for the agent."""
    found = cy.review
    items = [UntrustedText(f"review {found.id} by @{found.author}", found.body or "(no text)")]
    items.extend(t.context() for t in cy.threads)
    items.append(UntrustedText("the pull request's diff", report.clip(pr_diff, MAX_DIFF_CHARS)))
    return items


def _task(cy: Cycle) -> str:
    pull = cy.pull
    ids = ", ".join(str(t.id) for t in cy.threads) or "(none: the review's body is the only finding)"
    return (
        f"Pull request #{pull.number} (`{pull.head_ref}` into `{pull.base_ref}`) got review {cy.review.id}, which "
        f"requests changes. Its threads, by id: {ids}."
    )


def _commit_message(cy: Cycle, anchor: RunInfo) -> str:
    pull, found, cycle = cy.pull, cy.review, cy.number
    return (
        f"Address review {found.id} on #{pull.number}\n\n"
        f"Proposed by ci-autofix for the changes requested in review {found.id} of #{pull.number} "
        f"(cycle {cycle} of {REVIEW_CYCLES}).\n\n"
        f"Autofix-Run: {anchor.id}\nAutofix-Review: {found.id}\nAutofix-Attempt: {cycle}\n"
        f"Autofix-Base: {pull.head_sha}\n"
    )


def _deliver(
    cy: Cycle, git: Git, anchor: RunInfo, proposal: Proposal, accounted: list[Accounted]
) -> tuple[Outcome, str]:
    """The suggestion, pushed from `git` (the work area's) and opened into the PR's head branch,
    anchored to the head's CI run `anchor`; the outcome and the suggestion's URL."""
    from ci_autofix.deliver.suggestion import deliver, delivered

    settings, pull, found = cy.settings, cy.pull, cy.review
    cy.runner.stage("delivering the suggestion")
    record = Suggestion(
        run_id=anchor.id,
        run_attempt=anchor.run_attempt,
        workflow=anchor.workflow_path,
        failing_branch=pull.head_ref,
        head_sha=pull.head_sha,
        fix_sha=proposal.fix_sha,
        fix_branch=cy.fix_branch,
        attempt=cy.number,
        verification=proposal.verification.outcome if proposal.verification else "skipped",
        policy=proposal.verdict.status,
        failed=f"review {found.id} of #{pull.number}",
        files=proposal.changed_files[:MAX_FILES],
        review_id=found.id,
        reviewed_pull=pull.number,
    )
    ctx = report.RunContext(
        repository=settings.repository,
        server_url=settings.server_url,
        workflow_name=anchor.name or anchor.workflow_path,
        run_url=report.run_link(settings.server_url, settings.repository, anchor.id),
        failing_branch=pull.head_ref,
        head_sha=pull.head_sha,
    )
    counts = {o: sum(1 for a in accounted if a.outcome == o) for o in ("fixed", "annotated", "declined")}
    answering = report.Answering(
        title=f"ci-autofix: address review {found.id} on #{pull.number}",
        section=_section(cy, counts, accounted),
    )
    reviewers = [
        p for p in dict.fromkeys([pull.author or "", *settings.reviewers]) if p and not p.endswith("[bot]")
    ]
    delivery = deliver(
        cy.gh, git, settings, report.Brief(ctx, proposal, record, answers=answering), reviewers
    )
    outcome = delivered(
        cy.runner,
        delivery,
        proposal,
        message=f"Suggestion {delivery.pull.html_url} answers review {found.id} on #{pull.number}.",
        run_url=ctx.run_url,
    )
    outcome.details["threads"] = counts
    return outcome, delivery.pull.html_url


def _section(cy: Cycle, counts: dict[str, int], accounted: list[Accounted]) -> str:
    """The suggestion PR's account of the review: who asked for what, and each thread's outcome."""
    settings, pull, found = cy.settings, cy.pull, cy.review
    review_url = f"{settings.server_url.rstrip('/')}/{settings.repository}/pull/{pull.number}#pullrequestreview-{found.id}"
    return (
        f"{code_span('@' + (found.author or '?'))} requested changes on #{pull.number} "
        f"([review {found.id}]({review_url})) at `{pull.head_sha[:12]}`. This pull request answers it as one "
        f"commit on top of #{pull.number}'s head (cycle {cy.number} of {REVIEW_CYCLES}): {counts['fixed']} fixed, "
        f"{counts['annotated']} left as-is with a `NOTE:` comment, {counts['declined']} declined. "
        f"**Nothing reaches {code_span(pull.head_ref)} until someone approves it** (see the end).\n\n"
        "### Review threads\n"
        + (
            table(accounted, link=cy.thread_url)
            if accounted
            else "The review has no threads: its body was the finding."
        )
    )


def _answer(
    cy: Cycle,
    accounted: list[Accounted],
    proposal: Proposal,
    pr_diff: str,
    suggestion_url: str,
    outcome: Outcome,
) -> None:
    """One reply per thread, then the fix's hunks as inline suggestions on the reviewed PR."""
    from ci_autofix.deliver.inline_review import post_suggestions
    from ci_autofix.deliver.threads import reply

    pull, runner = cy.pull, cy.runner
    runner.stage(f"answering the review on #{pull.number}")
    problems = reply(
        cy.gh,
        pull.number,
        accounted,
        review_id=cy.review.id,
        suggestion_url=suggestion_url,
        trusted=cy.settings.trusted_author,
        redact=runner.redact,
    )
    posted = post_suggestions(
        cy.gh,
        pull.number,
        pull.head_sha,
        pr_diff=pr_diff,
        fix_diff=proposal.diff,
        suggestion_url=suggestion_url,
        redact=runner.redact,
    )
    problems.extend(posted.problems)
    runner.info(f"  {posted.describe()}")
    for problem in problems:
        runner.warning(problem)
    outcome.details["inline"] = posted.describe()
    outcome.details["warnings"] = problems


__all__ = ["review"]
