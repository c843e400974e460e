"""Delivery: the fix commit on a side branch, a PR into the failing branch, reviewers, labels, CI.

The side branch is created with a lease that says it must not exist yet, so two runs never
write the same branch. If anything after the push fails, the side branch is deleted again:
a failed delivery leaves nothing half-made.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ci_autofix import report
from ci_autofix.errors import UserError
from ci_autofix.git import Git, remote_url
from ci_autofix.github import GitHub, PullInfo
from ci_autofix.ladder import Proposal
from ci_autofix.marker import Suggestion
from ci_autofix.settings import Settings
from ci_autofix.triage.model import Diagnosis

UNVERIFIED_LABEL = "ci-autofix:unverified"


@dataclass
class Delivery:
    pull: PullInfo
    record: Suggestion
    unrequested_reviewers: list[str] = field(default_factory=list)
    ci_note: str = ""


@dataclass(frozen=True)
class CiOnFix:
    note: str
    run_id: int | None = None
    run_url: str | None = None


def deliver(
    gh: GitHub,
    git: Git,
    settings: Settings,
    ctx: report.RunContext,
    diagnosis: Diagnosis,
    proposal: Proposal,
    record: Suggestion,
    reviewers: list[str],
    workflow_file: str,
) -> Delivery:
    token = _push_token(settings)
    push = git.push(
        remote_url(settings.server_url, settings.repository),
        f"{proposal.fix_sha}:refs/heads/{record.fix_branch}",
        token=token,
        server_url=settings.server_url,
        lease=(f"refs/heads/{record.fix_branch}", ""),
    )
    if not push.ok:
        raise UserError(
            f"The suggestion branch `{record.fix_branch}` already exists on the remote, but has no "
            "suggestion pull request: another run may be delivering the same fix.",
            "Use the example workflow's `concurrency:` group so runs for one branch queue up; "
            "delete the stray branch and re-run this job.",
        )
    try:
        ci = trigger_ci(gh, settings, workflow_file, record.fix_branch)
        record = record.model_copy(update={"ci_run_id": ci.run_id, "ci_run_url": ci.run_url})
        unverified = proposal.verification is None or proposal.verification.outcome != "verified"
        title = report.pr_title(diagnosis, ctx.failing_branch)

        def body(number: int | None) -> str:
            return report.pr_body(
                ctx,
                diagnosis,
                proposal,
                record,
                apply_workflow=settings.apply_workflow,
                number=number,
                ci_note=ci.note,
            )

        pull = gh.create_pull(
            base=ctx.failing_branch, head=record.fix_branch, title=title, body=body(None), draft=unverified
        )
    except BaseException:
        gh.delete_branch(record.fix_branch)
        raise
    gh.update_pull(pull.number, body=body(pull.number))
    labels = [*settings.labels, *([UNVERIFIED_LABEL] if unverified else [])]
    if labels:
        gh.add_labels(pull.number, labels)
    unrequested = gh.request_reviewers(pull.number, reviewers) if reviewers else []
    return Delivery(pull=pull, record=record, unrequested_reviewers=unrequested, ci_note=ci.note)


def _push_token(settings: Settings) -> str:
    secret = settings.ci_token or settings.github_token
    if secret is None:
        raise UserError(
            "No token to push the suggestion branch with.",
            "Pass `github-token: ${{ secrets.GITHUB_TOKEN }}` to the action.",
        )
    return secret.get_secret_value()


def trigger_ci(gh: GitHub, settings: Settings, workflow_file: str, ref: str) -> CiOnFix:
    """Make the repository's CI run on the fix, or say plainly why it will not."""
    if settings.ci_token is not None:
        return CiOnFix("CI runs on this branch: it was pushed with the `ci-token`.")
    if workflow_file and gh.workflow_dispatchable(workflow_file):
        try:
            run = gh.dispatch_workflow(workflow_file, ref=ref, inputs={})
        except UserError as exc:
            return CiOnFix(f"CI could not be started on this fix: {exc.cause} {exc.remedy}")
        link = f" ([run]({run.html_url}))" if run.html_url else ""
        return CiOnFix(
            f"CI was started on this branch with a `workflow_dispatch` of `{workflow_file}`{link}.",
            run.run_id,
            run.html_url,
        )
    return CiOnFix(
        "**CI will not run on this fix**: pushes made with `GITHUB_TOKEN` start no workflow. To have CI check "
        f"fixes, add a `workflow_dispatch:` trigger to `{workflow_file or 'your CI workflow'}` (ci-autofix then "
        "dispatches it, with `actions: write`), or pass a GitHub App token or PAT as `ci-token`."
    )


def reviewers_for(gh: GitHub, settings: Settings, *, pr_numbers: list[int], head_sha: str) -> list[str]:
    """The author of the failing change (PR author, else commit author) and the configured reviewers."""
    people: list[str] = []
    numbers = pr_numbers or [p.number for p in gh.pulls_for_commit(head_sha)]
    for number in numbers[:1]:
        people.append(gh.get_pull(number).author)
    if not people and (login := gh.commit_author_login(head_sha)):
        people.append(login)
    people.extend(settings.reviewers)
    return [p for p in dict.fromkeys(people) if p and not p.endswith("[bot]")]
