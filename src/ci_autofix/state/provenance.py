"""Provenance: the commit status by which ci-autofix vouches for a fix commit it made.

After pushing a suggestion branch, propose sets the status `ci-autofix/provenance` on the fix
commit, described as `fix of <failing head sha> for run <failing run id>`. GitHub records who
created a status (the identity of the token that made it) and nobody can create one in another
account's name; a commit id names exactly one content, so a commit amended after the proposal
carries no such status. Apply believes a suggestion only when the fix commit it is about to push
carries this status from the trusted identity, and the status names what the record claims.

With `auto-apply: true`, propose also sets `ci-autofix/auto-apply`, described as `apply #<PR>:
verified, policy clean`, on a fix it found verified and clean, before it dispatches apply itself:
apply takes a dispatch made by ci-autofix's own identity only for a PR so marked.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ci_autofix.github import StatusInfo
from ci_autofix.github.api import GitHubAPI
from ci_autofix.state.marker import Suggestion

CONTEXT = "ci-autofix/provenance"
AUTO_APPLY_CONTEXT = "ci-autofix/auto-apply"
_DESCRIPTION = re.compile(r"fix of (?P<head>[0-9a-f]{40}) for run (?P<run>[1-9][0-9]{0,19})")


@dataclass(frozen=True)
class Vouched:
    """What a provenance status says about its commit."""

    head_sha: str
    run_id: int


def description(record: Suggestion) -> str:
    """The status's description: the failing commit and run the fix was made for (under
    GitHub's 140 characters)."""
    return f"fix of {record.head_sha} for run {record.run_id}"


def vouch(gh: GitHubAPI, record: Suggestion, target_url: str) -> None:
    """Mark `record.fix_sha` as made by ci-autofix, as the identity `gh`'s token acts as."""
    gh.create_status(
        record.fix_sha,
        context=CONTEXT,
        state="success",
        description=description(record),
        target_url=target_url,
    )


def vouched_by(statuses: Sequence[StatusInfo], trusted: str) -> Vouched | None:
    """What the newest provenance status created by `trusted` says, or None when there is none
    (statuses with our context created by anyone else are ignored: anyone who may write can make
    them)."""
    status = _newest(statuses, CONTEXT, trusted)
    match = _DESCRIPTION.fullmatch(status.description) if status is not None else None
    if status is None or status.state != "success" or match is None:
        return None
    return Vouched(match["head"], int(match["run"]))


def auto_apply_description(number: int) -> str:
    return f"apply #{number}: verified, policy clean"


def mark_for_auto_apply(gh: GitHubAPI, record: Suggestion, number: int, target_url: str) -> None:
    """Mark `record.fix_sha` as one that propose itself dispatches apply for (as suggestion #number)."""
    gh.create_status(
        record.fix_sha,
        context=AUTO_APPLY_CONTEXT,
        state="success",
        description=auto_apply_description(number),
        target_url=target_url,
    )


def marked_for_auto_apply(statuses: Sequence[StatusInfo], trusted: str, number: int) -> bool:
    """Whether the newest auto-apply status created by `trusted` marks the commit for suggestion #number."""
    status = _newest(statuses, AUTO_APPLY_CONTEXT, trusted)
    return (
        status is not None
        and status.state == "success"
        and status.description == auto_apply_description(number)
    )


def _newest(statuses: Sequence[StatusInfo], context: str, trusted: str) -> StatusInfo | None:
    """The newest status with `context` that `trusted` created (GitHub lists them newest first);
    ones with our context created by anyone else are ignored: anyone who may write can make them."""
    return next((s for s in statuses if s.context == context and s.creator == trusted), None)
