"""The attempt record: a commit status by which ci-autofix records, on the failing commit, an
attempt that spent or changed something, halted or proposed.

A halted attempt leaves no branch and no PR, yet it may have called the model and spent; without a
record each re-run of the failed job would spend again, without limit. So propose sets, on the
failing head sha, the status `ci-autofix/attempt/<run id>.<run attempt>` (one per attempt of the
failed run: a re-run of the failed job is a new attempt), described as
`halted <reason> for run <run id>; spent <usd> USD` or `proposed #<PR> for run <run id>; spent
<usd> USD`. Like the provenance status, it is believed only when the trusted identity created it:
nobody can create a status in another account's name. Its state is `failure`: the commit it sits
on failed, whatever the attempt did.

The ledger counts the halted ones toward `max-attempts` (a proposed one is counted by its
suggestion) and every one's spend toward `max-lineage-cost-usd`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ci_autofix.github import StatusInfo
from ci_autofix.github.api import GitHubAPI

PREFIX = "ci-autofix/attempt/"
_CONTEXT = re.compile(re.escape(PREFIX) + r"(?P<run>[1-9][0-9]{0,19})\.(?P<attempt>[1-9][0-9]{0,4})")
_DESCRIPTION = re.compile(
    r"(?:halted (?P<reason>[a-z-]{1,40})|proposed #(?P<pull>[1-9][0-9]{0,9})) for run (?P<run>[1-9][0-9]{0,19}); "
    r"spent (?P<usd>[0-9]{1,6}\.[0-9]{4}) USD"
)


@dataclass(frozen=True)
class Attempt:
    """One recorded attempt on a commit of the lineage."""

    sha: str  # the failing commit it was made for
    run_id: int
    run_attempt: int
    reason: str  # the halt reason; "" for a proposed attempt
    pull: int | None  # the suggestion it proposed
    cost_usd: float

    @property
    def halted(self) -> bool:
        return self.pull is None


def context(run_id: int, run_attempt: int) -> str:
    return f"{PREFIX}{run_id}.{run_attempt}"


def record(
    gh: GitHubAPI,
    sha: str,
    *,
    run_id: int,
    run_attempt: int,
    cost_usd: float | None,
    reason: str = "",
    pull: int | None = None,
    target_url: str = "",
) -> None:
    """Record on `sha` that the attempt for run `run_id` (attempt `run_attempt`) halted with
    `reason`, or proposed suggestion #`pull`, having spent `cost_usd`."""
    what = f"proposed #{pull}" if pull is not None else f"halted {reason}"
    gh.create_status(
        sha,
        context=context(run_id, run_attempt),
        state="failure",
        description=f"{what} for run {run_id}; spent {cost_usd or 0.0:.4f} USD",
        target_url=target_url,
    )


def recorded(sha: str, statuses: Sequence[StatusInfo], trusted: str) -> list[Attempt]:
    """The attempts recorded on `sha` by `trusted`, the newest status per context (GitHub lists
    them newest first); statuses of that shape created by anyone else are ignored."""
    seen: set[str] = set()
    found: list[Attempt] = []
    for status in statuses:
        where = _CONTEXT.fullmatch(status.context)
        if where is None or status.creator != trusted or status.context in seen:
            continue
        seen.add(status.context)
        said = _DESCRIPTION.fullmatch(status.description)
        if said is None or said["run"] != where["run"]:
            continue
        found.append(
            Attempt(
                sha=sha,
                run_id=int(where["run"]),
                run_attempt=int(where["attempt"]),
                reason=said["reason"] or "",
                pull=int(said["pull"]) if said["pull"] else None,
                cost_usd=float(said["usd"]),
            )
        )
    return found
