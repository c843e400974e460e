"""Attempts and idempotency, read back from GitHub: branches and suggestion records, no database.

A suggestion lives on `<prefix><failing branch>/<run id>`. A re-run of the same workflow run
finds that branch and its PR and changes nothing. Attempts for a branch are the suggestions
still open for it plus those made for the same failing commit: a new commit from a human
starts a new count.
"""

from __future__ import annotations

from dataclasses import dataclass

from ci_autofix.clients import GitHubAPI
from ci_autofix.errors import Halt, HaltReason
from ci_autofix.github import PullInfo
from ci_autofix.state import marker
from ci_autofix.state.refs import check_branch_name


def side_branch(prefix: str, failing_branch: str, run_id: int) -> str:
    return check_branch_name(f"{prefix}{failing_branch}/{run_id}", what="suggestion branch")


@dataclass(frozen=True)
class Existing:
    pull: PullInfo
    record: marker.Suggestion | None


def find_existing(gh: GitHubAPI, branch: str) -> Existing | None:
    """The suggestion already proposed on `branch` (a re-run of the same workflow run)."""
    pull = gh.find_pull(branch)
    if pull is None:
        return None
    return Existing(pull, marker.parse(pull.body))


def next_attempt(gh: GitHubAPI, *, prefix: str, failing_branch: str, head_sha: str, max_attempts: int) -> int:
    """The attempt number for a new suggestion, or a halt when the budget is spent."""
    ours = f"{prefix}{failing_branch}/"
    counted = []
    for pull in gh.list_pulls(base=failing_branch):
        if not pull.head_ref.startswith(ours):
            continue
        record = marker.parse(pull.body)
        if pull.state == "open" or (record is not None and record.head_sha == head_sha):
            counted.append(pull)
    if len(counted) >= max_attempts:
        numbers = ", ".join(f"#{p.number}" for p in sorted(counted, key=lambda p: p.number))
        raise Halt(
            HaltReason.ATTEMPTS_EXHAUSTED,
            f"{len(counted)} suggestion(s) already made for `{failing_branch}` ({numbers}); "
            f"`max-attempts` is {max_attempts}. Review or close them, or push a fix yourself.",
        )
    return len(counted) + 1
