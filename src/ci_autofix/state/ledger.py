"""Attempts and idempotency, read back from GitHub: commits, statuses and suggestion PRs, no database.

A suggestion lives on `<prefix><failing branch>/<run id>`; a re-run of the same workflow run finds
that branch and its PR. The attempts of a lineage are the fixes ci-autofix made that the failing
branch's head is reached through, newest first, back to the first commit it did not make, plus the
open suggestions made for the current head by other runs. A fix counts only when GitHub
authenticates it as ours: its provenance status, created by the trusted identity, names its parent
(the commit it fixed); the `Autofix-Base:` trailer only spares the status lookup for commits that
do not claim to be ours. An open suggestion counts likewise: by the status on its head commit,
never by the record in its body. A human commit on top starts a new lineage. Open suggestions made for
other commits of the branch are stale: they no longer count, and the flow closes them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ci_autofix.github import PullInfo, RunInfo
from ci_autofix.github.api import GitHubAPI
from ci_autofix.refs import check_branch_name
from ci_autofix.state import attempts, marker, provenance
from ci_autofix.state.attempts import Attempt


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


@dataclass(frozen=True)
class Applied:
    """A fix ci-autofix made that is now on the failing branch."""

    sha: str
    base: str  # the commit it fixed (its parent)
    run_id: int  # the failed run it was made for


@dataclass(frozen=True)
class Suggested:
    """One of our suggestion PRs for the failing branch, with its record (None: unreadable)."""

    pull: PullInfo
    record: marker.Suggestion | None
    run: RunInfo | None = None  # the failed run its provenance status names (open ones for the head)


@dataclass(frozen=True)
class Lineage:
    head_sha: str
    applied: list[Applied]  # newest first
    open_for_head: list[Suggested]  # open suggestions made for the current head
    stale: list[Suggested]  # open suggestions made for another commit of the branch
    suggestions: list[Suggested]  # every suggestion PR for the branch, open or closed, newest first
    # the attempts recorded on the lineage's commits for this workflow (`state.attempts`)
    recorded: list[Attempt] = field(default_factory=list)

    @property
    def halted(self) -> list[Attempt]:
        """The attempts that halted after they reached the model or made a change."""
        return [a for a in self.recorded if a.halted]

    @property
    def attempts(self) -> int:
        return len(self.applied) + len(self.open_for_head) + len(self.halted)

    @property
    def cost_usd(self) -> float:
        """What the lineage's attempts spent on the model, halted or proposed."""
        return sum(a.cost_usd for a in self.recorded)

    @property
    def fresh(self) -> bool:
        """The head is not a fix of ours: a human's commit started this lineage."""
        return not self.applied

    def suggestion_for(self, fix_sha: str) -> Suggested | None:
        return next((s for s in self.suggestions if s.record and s.record.fix_sha == fix_sha), None)


def lineage(
    gh: GitHubAPI,
    *,
    prefix: str,
    failing_branch: str,
    head_sha: str,
    workflow: str,
    trusted: str,
    max_attempts: int,
) -> Lineage:
    """The lineage of `head_sha` on `failing_branch` (looking back at most `max_attempts` fixes).
    Open suggestions for the head count when GitHub shows they are ours for it (the provenance
    status on the PR's head commit names `head_sha`) and they were made for a failure of the same
    `workflow`: two workflows failing on one commit are two problems, not two attempts."""
    applied: list[Applied] = []
    sha = head_sha
    while len(applied) <= max_attempts:
        fix = _ours(gh, sha, trusted)
        if fix is None:
            break
        applied.append(fix)
        sha = fix.base
    ours = f"{prefix}{failing_branch}/"
    suggestions = [
        Suggested(pull, marker.parse(pull.body))
        for pull in sorted(gh.list_pulls(base=failing_branch), key=lambda p: -p.number)
        if pull.head_ref.startswith(ours) and pull.author == trusted
    ]
    open_for_head, stale = [], []
    for suggestion in (s for s in suggestions if s.pull.state == "open"):
        vouched = provenance.vouched_by(gh.statuses(suggestion.pull.head_sha), trusted)
        made_for = vouched.head_sha if vouched else suggestion.record.head_sha if suggestion.record else None
        if made_for != head_sha:
            stale.append(suggestion)
        elif vouched is not None and (run := gh.workflow_run(vouched.run_id)).workflow_path == workflow:
            open_for_head.append(Suggested(suggestion.pull, suggestion.record, run))
    return Lineage(
        head_sha=head_sha,
        applied=applied,
        open_for_head=open_for_head,
        stale=stale,
        suggestions=suggestions,
        recorded=_recorded(gh, [head_sha, *(fix.base for fix in applied)], workflow, trusted),
    )


def strays(gh: GitHubAPI, *, prefix: str, failing_branch: str, trusted: str, keep: str) -> list[str]:
    """The suggestion branches of `failing_branch` that no open PR stands on (closed by a person,
    superseded, applied, or left by a delivery that stopped before its PR), except `keep` (this
    run's own, which a re-run adopts) while it never had a PR: once its PR is closed, the re-run
    has nothing to adopt. Only a branch whose head GitHub shows ci-autofix made (its provenance
    status by `trusted`) is a suggestion branch: anything else under the prefix is left."""
    candidates = gh.branches(f"{prefix}{failing_branch}/")
    if not candidates:
        return []
    open_heads = {pull.head_ref for pull in gh.list_pulls(base=failing_branch, state="open")}
    if keep in candidates and keep not in open_heads and gh.find_pull(keep) is not None:
        keep = ""  # its PR was closed: closed means gone
    return sorted(
        branch
        for branch, sha in candidates.items()
        if branch not in open_heads and branch != keep and provenance.vouched_by(gh.statuses(sha), trusted)
    )


def _recorded(gh: GitHubAPI, shas: list[str], workflow: str, trusted: str) -> list[Attempt]:
    """The attempts recorded on the lineage's commits (each was the branch's head once) for failures
    of `workflow`, by the failed run GitHub names, not by anything the record says of itself."""
    found = [a for sha in shas for a in attempts.recorded(sha, gh.statuses(sha), trusted)]
    workflows = {run_id: gh.workflow_run(run_id).workflow_path for run_id in {a.run_id for a in found}}
    return [a for a in found if workflows[a.run_id] == workflow]


def _ours(gh: GitHubAPI, sha: str, trusted: str) -> Applied | None:
    """The fix `sha` is, when GitHub shows ci-autofix made it: its provenance status by `trusted`
    names its only parent."""
    commit = gh.commit(sha)
    if len(commit.parents) != 1 or f"Autofix-Base: {commit.parents[0]}" not in commit.message:
        return None
    vouched = provenance.vouched_by(gh.statuses(sha), trusted)
    if vouched is None or vouched.head_sha != commit.parents[0]:
        return None
    return Applied(sha, commit.parents[0], vouched.run_id)


def failed_steps(gh: GitHubAPI, run_id: int, attempt: int) -> frozenset[tuple[str, str]]:
    """The (job, step) names that failed in attempt `attempt` of run `run_id`, as GitHub reports them."""
    return frozenset(
        (job.name, step.name) for job in gh.failed_jobs(run_id, attempt) for step in job.failed_steps
    )


def same_failure(gh: GitHubAPI, line: Lineage, run_id: int, attempt: int) -> Suggested | None:
    """The open suggestion for this head that answers the very failure run `run_id` reports: made
    for another run of the same workflow on the same commit (`open_for_head` holds only those, by
    their provenance), whose failed jobs and steps are the same. One failure on one commit gets
    one suggestion: a workflow on `[push, pull_request]` fails twice for every red commit."""
    twins = [(s, s.run) for s in line.open_for_head if s.run is not None and s.run.id != run_id]
    failed = failed_steps(gh, run_id, attempt) if twins else frozenset()
    for twin, run in twins:
        if failed and failed_steps(gh, run.id, run.run_attempt) == failed:
            return twin
    return None
