"""Delivery: the fix commit on a side branch, a PR into the failing branch, labels, reviewers, CI.

The side branch is pushed with a lease: it must not exist yet, or still be where an earlier
delivery of the same run left it without a PR (`_left_behind`: adopted when that head is our
fix for this run, replaced and named otherwise), so two runs never overwrite each other's work.
If the push fails (refused, or its answer lost after git wrote the branch) or opening the PR
fails, the side branch is deleted again. Once the PR exists, the rest (labels, review requests,
then the apply instructions, which seal the delivery) is done in `finish`; a failure on the way
leaves an unsealed PR that the next run for the same failed run finishes.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import partial
from typing import TYPE_CHECKING

from ci_autofix.deliver import auto_apply, report
from ci_autofix.deliver.ci import held_back, may_start_unreviewed, trigger_ci
from ci_autofix.errors import UserError
from ci_autofix.git import Git, PushResult, push_error, remote_url
from ci_autofix.github import PullInfo
from ci_autofix.github.api import GitHubAPI
from ci_autofix.outcome import Outcome
from ci_autofix.redact import Redacted, Redactor
from ci_autofix.runner import Runner
from ci_autofix.settings import Settings
from ci_autofix.state import provenance
from ci_autofix.state.marker import Suggestion

if TYPE_CHECKING:
    from ci_autofix.ladder.run import Proposal

UNVERIFIED_LABEL = "ci-autofix:unverified"
CHANGES_TESTS_LABEL = "ci-autofix:changes-tests"  # passes only with its own changes to the tests


@dataclass(frozen=True)
class LeftBehind:
    """The side branch as an earlier delivery of the same run left it: pushed, but no PR."""

    sha: str
    ours: bool  # its head is the fix ci-autofix made for this run (its provenance status says so)


@dataclass
class Delivery:
    pull: PullInfo
    record: Suggestion
    unrequested_reviewers: list[str] = field(default_factory=list)
    ci_note: str = ""
    replaced: LeftBehind | None = None


def deliver(
    gh: GitHubAPI, git: Git, settings: Settings, brief: report.Brief, reviewers: list[str]
) -> Delivery:
    """The fix of `brief` pushed from `git` to its side branch, and the suggestion PR into the
    failing branch; the side branch is deleted again if the PR could not be opened."""
    record, proposal = brief.record, brief.proposal
    start_ci = may_start_unreviewed(proposal.verdict)  # nobody has reviewed the fix yet
    left = _push(gh, git, settings, brief, start_ci=start_ci)
    try:
        provenance.vouch(gh, record, brief.ctx.run_url)
        ci = (
            trigger_ci(gh, settings, record.workflow, record.fix_branch)
            if start_ci
            else held_back(gh, settings, record.workflow, record.fix_branch, proposal.verdict)
        )
        record = record.model_copy(
            update={
                "ci_run_id": ci.run_id,
                "ci_run_url": ci.run_url,
                "labels": labels_for(settings, proposal),
            }
        )
        brief = replace(brief, record=record)
        unverified = UNVERIFIED_LABEL in record.labels
        redacted = Redactor(settings.secrets())  # the whole title and body, in one place
        body = partial(_body, settings, brief, redacted, ci.note)
        pull = gh.create_pull(
            base=brief.ctx.failing_branch,
            head=record.fix_branch,
            title=redacted(report.pr_title(brief)),
            body=body(None),
            draft=unverified,
        )
    except BaseException:
        gh.delete_branch(record.fix_branch)
        raise
    delivery = finish(gh, pull, record, reviewers, body(pull.number), ci.note)
    if left is not None:
        delivery.replaced = left
    return delivery


def _push(
    gh: GitHubAPI, git: Git, settings: Settings, brief: report.Brief, *, start_ci: bool
) -> LeftBehind | None:
    """Push the fix to the side branch, leased on where an earlier delivery left it (`_left_behind`),
    else on its absence; returns what it replaced."""
    record = brief.record
    token = _push_token(settings, start_ci=start_ci)
    left = _left_behind(gh, settings, record)
    push = git.push(
        remote_url(settings.server_url, settings.repository),
        f"{brief.proposal.fix_sha}:refs/heads/{record.fix_branch}",
        token=token,
        server_url=settings.server_url,
        lease=(f"refs/heads/{record.fix_branch}", left.sha if left else ""),
    )
    if push.stale:
        raise UserError(
            f"The suggestion branch `{record.fix_branch}` already exists on the remote, but has no "
            "suggestion pull request: another run may be delivering the same fix.",
            "Use the example workflow's `concurrency:` group so runs for one branch queue up; "
            "delete the stray branch and re-run this job.",
        )
    if not push.ok:
        raise _push_failed(gh, push, record)
    return left


def _body(
    settings: Settings, brief: report.Brief, redacted: Redactor, ci_note: str, number: int | None
) -> Redacted:
    """The PR's body, with the apply instructions for PR `number` once it is known."""
    answers_a_review = isinstance(brief.answers, report.Answering)
    return redacted(
        report.pr_body(
            brief,
            apply_workflow=settings.apply_workflow,
            number=number,
            ci_note=ci_note,
            # review mode never dispatches apply itself: no note that says it would
            auto_apply=auto_apply.pr_note(brief.proposal)
            if settings.auto_apply and not answers_a_review
            else "",
        )
    )


def finish(
    gh: GitHubAPI,
    pull: PullInfo,
    record: Suggestion,
    reviewers: list[str],
    sealed: Redacted,
    ci_note: str = "",
) -> Delivery:
    """What follows the PR's creation: its labels, the review requests, and last the body with the
    apply instructions for this PR's number, which marks the delivery complete. A delivery that
    failed on the way is finished by the next run for the same failed run (`unfinished`)."""
    if missing := [label for label in record.labels if label not in pull.labels]:
        gh.add_labels(pull.number, missing)
    unrequested = gh.request_reviewers(pull.number, reviewers) if reviewers else []
    gh.update_pull(pull.number, body=sealed)
    return Delivery(pull=pull, record=record, unrequested_reviewers=unrequested, ci_note=ci_note)


def unfinished(pull: PullInfo) -> bool:
    """Whether the PR's body still lacks its apply instructions (the last step of a delivery)."""
    return report.APPLY_PLACEHOLDER in pull.body


def labels_for(settings: Settings, proposal: Proposal) -> list[str]:
    """The labels a suggestion carries: the configured ones, and what the evidence says of the fix."""
    unverified = proposal.verification is None or proposal.verification.outcome != "verified"
    changes_tests = proposal.verification is not None and proposal.verification.changes_tests
    return [
        *settings.labels,
        *([UNVERIFIED_LABEL] if unverified else []),
        *([CHANGES_TESTS_LABEL] if changes_tests else []),
    ]


def _left_behind(gh: GitHubAPI, settings: Settings, record: Suggestion) -> LeftBehind | None:
    """The side branch of this run, when it exists without a PR (the caller found none): a delivery
    that could neither open the PR nor delete the branch. Its head is adopted when it is our fix for
    this run, replaced otherwise; either way the push is leased on it, so nothing newer is lost."""
    sha = gh.branch_sha(record.fix_branch)
    if sha is None:
        return None
    vouched = provenance.vouched_by(gh.statuses(sha), settings.trusted_author)
    ours = vouched is not None and (vouched.head_sha, vouched.run_id) == (record.head_sha, record.run_id)
    return LeftBehind(sha, ours)


def _push_failed(gh: GitHubAPI, push: PushResult, record: Suggestion) -> UserError:
    """The error for a failed push of the side branch, once the branch is gone: git may have
    written it before the answer was lost, and then it is at our fix commit (the lease said it
    did not exist before), so it is ours to delete."""
    branch = record.fix_branch
    note = ""
    try:
        created = gh.branch_sha(branch) == record.fix_sha
    except UserError as exc:
        created = False
        note = f"Whether `{branch}` was created even so could not be checked ({exc.cause}): delete it if it exists."
    if created:
        try:
            gh.delete_branch(branch)
            note = f"The branch `{branch}` was created even so and has been deleted."
        except UserError as exc:
            note = f"The branch `{branch}` was created even so and could not be deleted ({exc.cause}): delete it."
    return push_error(
        push, doing=f"push the suggestion branch `{branch}`", again="re-run this job", note=note
    )


def _push_token(settings: Settings, *, start_ci: bool) -> str:
    """The `ci-token` when the push may start CI (a push with it does), else `GITHUB_TOKEN`."""
    secret = (settings.ci_token if start_ci else None) or settings.github_token
    if secret is None and settings.ci_token is not None:
        raise UserError(
            "The patch policy flagged this fix, so it must be pushed without starting CI, but the only "
            "token given is the `ci-token`, and a push made with it starts CI.",
            "Pass `github-token: ${{ secrets.GITHUB_TOKEN }}` to the action as well (the default).",
        )
    if secret is None:
        raise UserError(
            "No token to push the suggestion branch with.",
            "Pass `github-token: ${{ secrets.GITHUB_TOKEN }}` to the action.",
        )
    return secret.get_secret_value()


def reviewers_for(gh: GitHubAPI, reviewers: list[str], *, pr_numbers: list[int], head_sha: str) -> list[str]:
    """The author of the failing change (PR author, else commit author) and `reviewers`, the configured ones."""
    people: list[str] = []
    numbers = pr_numbers or [p.number for p in gh.pulls_for_commit(head_sha) if p.head_repo == gh.repository]
    for number in numbers[:1]:
        if author := gh.get_pull(number).author:
            people.append(author)
    if not people and (login := gh.commit_author_login(head_sha)):
        people.append(login)
    people.extend(reviewers)
    return [p for p in dict.fromkeys(people) if p and not p.endswith("[bot]")]


def delivered(
    runner: Runner, delivery: Delivery, proposal: Proposal, *, message: str, run_url: str
) -> Outcome:
    """The `proposed` outcome of a delivery, after the warnings of what it could not do."""
    record, fix_branch = delivery.record, delivery.record.fix_branch
    for login in delivery.unrequested_reviewers:
        runner.warning(f"Could not request a review from {login} (not a collaborator, or the PR's author).")
    if (left := delivery.replaced) is not None:
        whose = "this run's earlier fix" if left.ours else "a commit ci-autofix did not make for this run"
        runner.warning(
            f"The side branch `{fix_branch}` was left without a PR at {left.sha[:12]} ({whose}); "
            "it now holds this fix."
        )
    return Outcome(
        "proposed",
        message=message,
        fix_branch=fix_branch,
        fix_sha=proposal.fix_sha,
        pull_request=delivery.pull.number,
        pull_request_url=delivery.pull.html_url,
        attempt=record.attempt,
        cost_usd=proposal.cost_usd,
        run_url=run_url,
        agent_turns=proposal.agent.turns if proposal.agent else None,
        details={"verification": record.verification, "policy": record.policy, "ci": delivery.ci_note},
    )
