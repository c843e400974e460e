"""Auto-apply: with `auto-apply: true`, propose dispatches the apply workflow itself.

Only for a fix nobody needs to read first: verified (the failure reproduced here and the fix
passes on a clean tree), policy-clean (no finding at all), and passing without changes to its
own tests. Anything else is never auto-applied, and its PR says why. The dispatch is made once,
by the run that proposed the fix (re-runs never make it: they would have to believe the PR's
editable record): first the `ci-autofix/auto-apply` status on the fix commit (apply accepts a
dispatch by ci-autofix's own identity only for a PR so marked), then a marker comment on the
PR, then the dispatch, whose run the comment then links. The apply job still runs in its
environment: with required reviewers that is the gate as before; without, the unattended mode.
Apply's checks are the same either way, and the attempt cap still ends the loop.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ci_autofix.deliver.notice import ours
from ci_autofix.deliver.report import RunContext, approve_command
from ci_autofix.errors import UserError
from ci_autofix.github import PullInfo
from ci_autofix.github.api import GitHubAPI
from ci_autofix.markdown import code_span
from ci_autofix.redact import Redacted
from ci_autofix.state import provenance
from ci_autofix.state.marker import Suggestion

if TYPE_CHECKING:
    from ci_autofix.ladder.run import Proposal

MARKER = "<!-- ci-autofix:auto-apply -->"


@dataclass(frozen=True)
class AutoApply:
    state: str  # "dispatched", "not-eligible", "failed"
    note: str  # for the outcome's message, in our words
    run_url: str = ""


def why_not(proposal: Proposal) -> str | None:
    """Why the fix is not auto-applied, or None when it qualifies."""
    verification = proposal.verification
    if verification is None or verification.outcome != "verified":
        return "it could not be verified here"
    if proposal.verdict.status != "clean":
        codes = ", ".join(f"`{code}`" for code in proposal.verdict.codes)
        return f"the patch policy flagged it ({codes})"
    if verification.changes_tests:
        return "it passes only with its own changes to the tests"
    return None


def pr_note(proposal: Proposal) -> str:
    """The PR body's line about auto-apply (the setting is on)."""
    reason = why_not(proposal)
    if reason is not None:
        return (
            f"**Auto-apply is on, but this fix is not applied automatically**: {reason}. It waits for "
            "a person to review it and dispatch apply, as below."
        )
    return (
        "**Auto-apply is on**: the fix is verified and policy-clean, so ci-autofix dispatches the apply "
        "workflow for it itself once this pull request is complete; a comment below says when it did (or "
        "why it could not). The apply job still waits for its environment's required reviewers, when it "
        "has some; close this pull request to reject the fix."
    )


def dispatch(
    gh: GitHubAPI,
    pull: PullInfo,
    record: Suggestion,
    *,
    ctx: RunContext,
    apply_workflow: str,
    trusted: str,
    redact: Callable[[str], Redacted],
) -> AutoApply:
    """Mark the fix, say so on the PR, and dispatch apply for it, once: only the run that made the
    PR calls this, and not when a comment of ours says it was done (two propose jobs for one run,
    a dispatched attempt beside the `workflow_run` job, may both reach here with one PR)."""
    if ours(gh.comments(pull.number), MARKER, trusted) is not None:
        return AutoApply(
            "dispatched", "auto-apply was already dispatched for this suggestion by another run."
        )
    manual = approve_command(ctx, apply_workflow, pull.number)
    provenance.mark_for_auto_apply(gh, record, pull.number, ctx.run_url)
    comment = gh.comment(
        pull.number, redact(f"{MARKER}\nAuto-apply: dispatching {code_span(apply_workflow)} for this fix…")
    )
    try:
        started = gh.dispatch_workflow(
            apply_workflow, ref=gh.default_branch(), inputs={"pull-request": str(pull.number)}
        )
    except UserError as exc:
        text = (
            f"{MARKER}\nAuto-apply could not dispatch {code_span(apply_workflow)}: {code_span(exc.cause)}. "
            f"Dispatch it yourself after reviewing the fix: {code_span(manual)}"
        )
        gh.edit_comment(comment.id, redact(text))
        return AutoApply(
            "failed", f"auto-apply could not dispatch `{apply_workflow}` ({exc.cause}); dispatch it by hand."
        )
    link = f" ([run]({started.html_url}))" if started.html_url else ""
    gh.edit_comment(
        comment.id,
        redact(
            f"{MARKER}\nAuto-apply: ci-autofix dispatched {code_span(apply_workflow)} for this fix{link}. "
            "Its job runs in its environment: it waits for the required reviewers when there are some."
        ),
    )
    return AutoApply("dispatched", f"auto-apply dispatched `{apply_workflow}`.", started.html_url or "")
