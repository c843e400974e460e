"""The checks apply makes before it pushes: each one passes or refuses with a reason.

A refusal is a `Halt(REFUSED, …)` whose message says what was found and what to do; the apply
flow posts it on the suggestion PR. Everything read from the PR's body (the record), its labels
and its branch name is a claim made by whoever could edit it, so each check compares it with
what GitHub authenticates: the PR's author, the provenance status on the fix commit and who
created it, the failing run as the API reports it, the live branches, the fetched commit and
its real diff (re-checked by the patch policy), GitHub's record of who may write.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ci_autofix.errors import Halt, HaltReason
from ci_autofix.flows import access
from ci_autofix.github import GitHubError, PullInfo, RunInfo, StatusInfo
from ci_autofix.github.api import GitHubAPI
from ci_autofix.policy import check_diff
from ci_autofix.policy.contents import BlobReader
from ci_autofix.refs import branch_problem, check_branch_name, check_sha, plain_number
from ci_autofix.settings import Settings
from ci_autofix.state import marker, provenance
from ci_autofix.state.marker import Suggestion

_WORKFLOW_FILE = re.compile(r"(?:\.github/workflows/)?[A-Za-z0-9_][A-Za-z0-9_.\-]*\.ya?ml")


def refuse(message: str) -> Halt:
    return Halt(HaltReason.REFUSED, message)


def pull_number(value: object, *, what: str = "the `pull-request` input") -> int:
    """A suggestion PR number from an input or the dispatch payload: plain decimal digits only."""
    return plain_number(
        value,
        what=what,
        kind="pull request number",
        max_digits=10,
        remedy="Dispatch the apply workflow with the suggestion PR's number, as the PR's approval "
        "instructions show (`gh workflow run ci-autofix-apply.yml -f pull-request=42`).",
    )


def suggestion(pull: PullInfo, settings: Settings) -> Suggestion:
    """The PR's suggestion record, when the PR's author is the identity ci-autofix proposes as
    (`trusted-author`), and the record, the label, the branch prefix and the PR's own branches
    all agree that it was opened for this failing branch."""
    record = marker.parse(pull.body)
    if record is None:
        raise refuse(
            f"#{pull.number} is not a ci-autofix suggestion: its description has no valid "
            "ci-autofix record. Only suggestion PRs opened by ci-autofix can be applied."
        )
    problems = []
    if pull.author != settings.trusted_author:
        problems.append(
            f"it was opened by @{pull.author or 'an unknown account'}, not by @{settings.trusted_author}, "
            "the identity ci-autofix proposes as (the `trusted-author` input)"
        )
    if settings.labels and not set(settings.labels) & set(pull.labels):
        wanted = ", ".join(f"`{label}`" for label in settings.labels)
        problems.append(f"it does not carry the label {wanted}")
    if branch_problem(pull.head_ref) or not pull.head_ref.startswith(settings.branch_prefix):
        problems.append(f"its head branch is not under the prefix `{settings.branch_prefix}`")
    if record.fix_branch != pull.head_ref:
        problems.append("its record names another suggestion branch than the PR's head branch")
    if record.failing_branch != pull.base_ref:
        problems.append("its record names another failing branch than the PR's base branch")
    if record.failing_branch.startswith(settings.branch_prefix):
        problems.append("its record's failing branch is itself a suggestion branch")
    if problems:
        raise refuse(
            f"#{pull.number} is not a ci-autofix suggestion as proposed: {'; '.join(problems)}. "
            "Only an unmodified suggestion PR opened by ci-autofix can be applied."
        )
    # The record validated these already; check again with the messages meant for inputs.
    check_branch_name(record.failing_branch, what="the failing branch")
    check_branch_name(record.fix_branch, what="the suggestion branch")
    check_sha(record.head_sha, what="recorded head commit")
    check_sha(record.fix_sha, what="fix commit")
    return record


def vouched(statuses: list[StatusInfo], record: Suggestion, settings: Settings) -> None:
    """The fix commit carries the provenance status created by the trusted identity, and that
    status names the failing commit and run the record names."""
    trusted = settings.trusted_author
    found = provenance.vouched_by(statuses, trusted)
    if found is None:
        raise refuse(
            f"The fix commit {record.fix_sha[:12]} has no `{provenance.CONTEXT}` status set by "
            f"@{trusted}, so it is not a commit ci-autofix made (a commit changed after it was "
            "proposed has another id, and no such status). Nothing is applied. Let ci-autofix "
            "propose again; if the propose job runs with another token than `GITHUB_TOKEN`, set "
            "`trusted-author` to the login that token acts as, and give it `statuses: write`."
        )
    if (found.head_sha, found.run_id) != (record.head_sha, record.run_id):
        raise refuse(
            f"The `{provenance.CONTEXT}` status of {record.fix_sha[:12]} says it fixes "
            f"{found.head_sha[:12]} of run {found.run_id}, but the PR's record says "
            f"{record.head_sha[:12]} of run {record.run_id}: the record was edited after the "
            "proposal. Nothing is applied. Let ci-autofix propose again."
        )


def failing_run(gh: GitHubAPI, record: Suggestion) -> RunInfo:
    """The failing run the record names, as the API reports it: it ran on the recorded failing
    branch and commit. Its workflow, not the record's, is the one CI is started with."""
    try:
        run = gh.workflow_run(record.run_id)
    except GitHubError as exc:
        if exc.status != 404:
            raise
        raise refuse(
            f"The failing run {record.run_id} that the record names does not exist, so what the "
            "fix was made for cannot be checked. Nothing is applied."
        ) from None
    if (run.head_sha, run.head_branch) != (record.head_sha, record.failing_branch):
        raise refuse(
            f"The failing run {run.id} ran on `{run.head_branch}` at {run.head_sha[:12]}, not on "
            f"`{record.failing_branch}` at {record.head_sha[:12]} as the record says. Nothing is "
            "applied. Let ci-autofix propose again."
        )
    return run


def policy_on_diff(
    diff: str, settings: Settings, *, read_blob: BlobReader | None = None, require_clean: bool = False
) -> None:
    """The patch policy, with this run's settings, on the real diff between the fix commit and
    its parent: what was clean when proposed may be blocked now, or was never what was recorded.
    `require_clean` (an auto-apply: nobody dispatched it): any finding refuses, not only a block."""
    verdict = check_diff(
        diff,
        protected=settings.protected_paths,
        max_changed_lines=settings.max_changed_lines,
        max_files=settings.max_files,
        read_blob=read_blob,  # whole files, as propose checked them
    )
    if verdict.blocked:
        rules = "; ".join(
            f"`{f.code}`{f' {f.path}' if f.path else ''}: {f.message}"
            for f in verdict.findings
            if f.severity == "block"
        )
        raise refuse(
            f"The patch policy blocks the fix commit as it is: {rules[:600]}. Nothing is applied. "
            "Make the change yourself if you still want it."
        )
    if require_clean and verdict.findings:
        codes = ", ".join(f"`{f.code}`" for f in verdict.findings)
        raise refuse(
            f"The patch policy flags the fix commit as it is ({codes[:400]}), and an auto-apply is only "
            "for a fix with no finding at all. Nothing is applied. Ask someone with write access to "
            "review it and dispatch the apply workflow."
        )


def open_pull(pull: PullInfo) -> None:
    if pull.state != "open":
        raise refuse(
            f"#{pull.number} is {'merged' if pull.merged else 'closed'}: a closed suggestion is not "
            "applied. Reopen it first if you still want it."
        )


def actors(
    gh: GitHubAPI, settings: Settings, number: int, record: Suggestion, statuses: list[StatusInfo]
) -> bool:
    """Everyone who started this run (the dispatcher, and whoever re-ran it) may write, or is the
    bot ci-autofix proposes as, dispatching a suggestion that its propose run marked for auto-apply
    (verified and policy-clean: the `ci-autofix/auto-apply` status on the fix commit). Whether the
    run is such an auto-apply."""
    logins = access.starters(settings)
    people = [login for login in logins if not access.is_own_bot(login, settings)]
    if len(people) < len(logins):
        if not provenance.marked_for_auto_apply(statuses, settings.trusted_author, number):
            raise refuse(
                f"@{settings.trusted_author}, the identity ci-autofix proposes as, started this run, but "
                f"ci-autofix did not mark #{number} for auto-apply (no "
                f"`{provenance.AUTO_APPLY_CONTEXT}` status of it on {record.fix_sha[:12]}): only a verified, "
                "policy-clean suggestion of a propose run with `auto-apply: true` is applied this way. "
                "Ask someone with write access to dispatch the apply workflow."
            )
        if (record.verification, record.policy) != ("verified", "clean"):
            raise refuse(
                f"The record says the fix is `{record.verification}` and `{record.policy}`, and only a "
                "verified, policy-clean fix is applied without a person dispatching it. Ask someone with "
                "write access to dispatch the apply workflow."
            )
    if people or not logins:
        access.check_writers(gh, people, doing="applying a suggestion", ask="dispatch the apply workflow")
    return len(people) < len(logins)


def policy(record: Suggestion) -> None:
    if record.policy == "blocked":
        raise refuse(
            "The patch policy blocked this fix when it was proposed, so it is never applied. "
            "Make the change yourself if you still want it."
        )


def ci_green(gh: GitHubAPI, record: Suggestion, workflow: str) -> str:
    """`require-ci-green`: the newest CI run of `workflow` (the failing run's) on the fix commit
    concluded success; its URL."""
    if record.ci_run_id is not None:
        runs = [gh.workflow_run(record.ci_run_id)]
    else:
        runs = [r for r in gh.runs_for_commit(record.fix_sha) if r.workflow_path == workflow]
    if not runs:
        raise refuse(
            "`require-ci-green` is on, but no CI run on the fix is recorded or found. Start CI on "
            f"`{record.fix_branch}` (or add a `workflow_dispatch:` trigger to your CI workflow, or "
            "pass `ci-token`), wait for it to pass, then dispatch apply again."
        )
    run = runs[0]
    if run.workflow_path != workflow:
        raise refuse(
            f"`require-ci-green` is on, but the recorded CI run {run.id} is of `{run.workflow_path}`, "
            f"not of the failing run's workflow `{workflow}`."
        )
    if run.head_sha != record.fix_sha:
        raise refuse(
            f"`require-ci-green` is on, but the recorded CI run {run.id} ran on "
            f"{run.head_sha[:12]}, not on the fix {record.fix_sha[:12]}."
        )
    if run.status != "completed" or run.conclusion != "success":
        state = run.conclusion if run.status == "completed" else f"still {run.status or 'pending'}"
        raise refuse(
            f"`require-ci-green` is on, but CI on the fix ({run.html_url or f'run {run.id}'}) is "
            f"`{state}`, not `success`. Wait for CI to pass (or fix it), then dispatch apply again."
        )
    return run.html_url


def side_branch(live_sha: str | None, record: Suggestion) -> None:
    """The suggestion branch still holds exactly the commit that was proposed (and reviewed)."""
    if live_sha is None:
        raise refuse(
            f"The suggestion branch `{record.fix_branch}` no longer exists, so the reviewed commit "
            "cannot be verified. Let ci-autofix propose the fix again."
        )
    if live_sha != record.fix_sha:
        raise refuse(
            f"The suggestion branch `{record.fix_branch}` changed after it was proposed: it is at "
            f"{live_sha[:12]}, but {record.fix_sha[:12]} was proposed. What was reviewed is not what "
            "is there now, so nothing is applied. Push your change to the branch yourself, or let "
            "ci-autofix propose again."
        )


def fix_parent(parents: Sequence[str], record: Suggestion) -> None:
    """The fetched fix commit has the recorded head as its only parent."""
    if list(parents) != [record.head_sha]:
        found = ", ".join(p[:12] for p in parents) or "none"
        raise refuse(
            f"The fix commit {record.fix_sha[:12]} does not sit on the commit it was proposed for: "
            f"its parent is {found}, not {record.head_sha[:12]}. Nothing is applied."
        )


def dispatchable_workflow(workflow: str) -> str:
    """A workflow path, when it is a plain workflow file name (else empty: not used)."""
    if _WORKFLOW_FILE.fullmatch(workflow) and ".." not in workflow:
        return workflow
    return ""
