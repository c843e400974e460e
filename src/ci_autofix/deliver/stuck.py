"""The stuck report: what a human reads when a lineage has used all its attempts.

One comment, on the failing PR (or on the failing commit when no PR is open for the branch),
updated in place on re-runs: a row per attempt (the run that failed, what failed, the suggestion
and what it changed, its verification, what CI said about it once applied) and the last triage
excerpt. The PR also gets the label `ci-autofix:stuck`, which goes again when a human pushes
or CI passes. The records a row is built from sit in PR bodies anyone with write access can
edit, so every field is shown as code, never as Markdown.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ci_autofix.deliver.notice import Where, upsert
from ci_autofix.github import PullInfo
from ci_autofix.github.api import GitHubAPI
from ci_autofix.markdown import code_span, untrusted_block
from ci_autofix.redact import Redacted
from ci_autofix.state.ledger import Lineage, Suggested

STUCK_LABEL = "ci-autofix:stuck"
MARKER = "<!-- ci-autofix:stuck -->"
MAX_EXCERPT_CHARS = 6_000


@dataclass(frozen=True)
class Limits:
    """The lineage's caps, as the report names the one that stopped it."""

    max_attempts: int
    max_lineage_cost_usd: float | None = None


def render(
    lineage: Lineage,
    limits: Limits,
    *,
    run_id: int,
    run_link: Callable[[int], str],
    excerpt: str,
    breaker: str = "",
) -> str:
    """The report's Markdown (our marker first, so a re-run finds it and edits it). Links are
    built by `run_link` from the settings and run ids, never taken from a payload or a record.
    `breaker`: our own words on why the circuit breaker stopped the loop before the cap."""
    rows = [
        "| Attempt | Failed run | What failed | Suggestion | Changed | Verification | CI on the fix |",
        "|---|---|---|---|---|---|---|",
    ]
    run_url = run_link(run_id)
    applied = {fix.sha for fix in lineage.applied}
    # oldest first: each applied fix failed in the run the next attempt was made for
    order = [*reversed(lineage.applied)]
    for number, fix in enumerate(order, start=1):
        suggestion = lineage.suggestion_for(fix.sha)
        next_run = order[number].run_id if number < len(order) else None
        ci = (
            f"failed ([run {next_run}]({run_link(next_run)}))"
            if next_run
            else f"failed ([this run]({run_url}))"
        )
        rows.append(_row(number, fix.run_id, run_link(fix.run_id), suggestion, ci))
    for number, suggestion in enumerate(lineage.open_for_head, start=len(order) + 1):
        record = suggestion.record
        if record is not None and record.fix_sha not in applied:
            page = run_link(record.run_id)
            rows.append(_row(number, record.run_id, page, suggestion, "not applied yet"))
    for number, attempt in enumerate(lineage.halted, start=len(rows) - 1):
        page = run_link(attempt.run_id)
        rows.append(
            f"| {number} | [run {attempt.run_id}]({page}) (attempt {attempt.run_attempt}) | ? | "
            f"halted `{attempt.reason}`, spent ${attempt.cost_usd:.4f} | none | none | not proposed |"
        )
    limit = (
        "the circuit breaker stopped the loop"
        if breaker
        else f"the most `max-attempts` ({limits.max_attempts}) allows"
        if lineage.attempts >= limits.max_attempts or limits.max_lineage_cost_usd is None
        else f"spending ${lineage.cost_usd:.4f}, the most `max-lineage-cost-usd` ({limits.max_lineage_cost_usd}) allows"
    )
    return (
        f"{MARKER}\n## ci-autofix is stuck on this branch\n\n"
        f"ci-autofix made {lineage.attempts} attempt(s), {limit}, "
        f"and CI still fails: [the latest failed run]({run_url}). It will not try again on this lineage; "
        "a commit you push starts a new one.\n\n"
        + (f"{breaker}\n\n" if breaker else "")
        + "\n".join(rows)
        + "\n\n### The latest failure\n\n"
        + untrusted_block(excerpt[-MAX_EXCERPT_CHARS:] or "(no excerpt)")
        + "\n"
    )


def _row(number: int, run_id: int, page: str, suggestion: Suggested | None, ci: str) -> str:
    record = suggestion.record if suggestion else None
    link = f"[#{suggestion.pull.number}]({suggestion.pull.html_url})" if suggestion else "(not found)"
    failed = code_span(record.failed, table=True) if record and record.failed else "?"
    changed = (
        ", ".join(code_span(f, table=True) for f in record.files[:5]) if record and record.files else "?"
    )
    verification = code_span(record.verification, table=True) if record else "?"
    return f"| {number} | [run {run_id}]({page}) | {failed} | {link} | {changed} | {verification} | {ci} |"


def post(gh: GitHubAPI, target: Where, body: Redacted, trusted: str, *, marker: str = MARKER) -> str:
    """Create the report, or edit the one posted before (found by `marker`, which `body` starts
    with: the CI loop's or review mode's); label the PR; returns the report's URL."""
    comment = upsert(gh, target, marker, body, trusted)
    if target.pull is not None and STUCK_LABEL not in target.pull.labels:
        gh.add_labels(target.pull.number, [STUCK_LABEL])
    return comment.html_url


def unstick(gh: GitHubAPI, pull: PullInfo | None) -> bool:
    """Take the stuck label off the failing PR (a human pushed, or CI passed); whether it was there."""
    if pull is None or STUCK_LABEL not in pull.labels:
        return False
    gh.remove_label(pull.number, STUCK_LABEL)
    return True
