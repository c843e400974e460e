"""The checks apply makes before it pushes: each one passes or refuses with a reason.

A refusal is a `Halt(REFUSED, …)` whose message says what was found and what to do; the apply
flow posts it on the suggestion PR. Everything read from the PR (its body, branches, labels) is a
claim made by whoever could edit it, so each check compares it with another source: the PR's
own fields, the live branches, the fetched commit, GitHub's record of who may write.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ci_autofix import marker
from ci_autofix.errors import Halt, HaltReason, UserError
from ci_autofix.github import GitHub, PullInfo
from ci_autofix.marker import Suggestion
from ci_autofix.refs import branch_problem, check_branch_name, check_sha
from ci_autofix.settings import Settings

WRITE_LEVELS = frozenset({"admin", "maintain", "write"})
MAX_PULL_NUMBER_DIGITS = 10
_PULL_NUMBER = re.compile(rf"[1-9][0-9]{{0,{MAX_PULL_NUMBER_DIGITS - 1}}}")
_WORKFLOW_FILE = re.compile(r"(?:\.github/workflows/)?[A-Za-z0-9_][A-Za-z0-9_.\-]*\.ya?ml")


def refuse(message: str) -> Halt:
    return Halt(HaltReason.REFUSED, message)


def pull_number(value: object, *, what: str = "the `pull-request` input") -> int:
    """A suggestion PR number from an input or the dispatch payload: plain decimal digits only."""
    text = str(value).strip() if isinstance(value, (int, str)) and not isinstance(value, bool) else ""
    if not _PULL_NUMBER.fullmatch(text):
        shown = repr(str(value)[:40] + ("..." if len(str(value)) > 40 else ""))
        raise UserError(
            f"{what} ({shown}) is not a pull request number.",
            "Dispatch the apply workflow with the suggestion PR's number, as the PR's approval "
            "instructions show (`gh workflow run ci-autofix-apply.yml -f pull-request=42`).",
        )
    return int(text)


def provenance(pull: PullInfo, settings: Settings) -> Suggestion:
    """The PR's suggestion record, when the record, the label, the branch prefix and the PR's own
    branches all agree that ci-autofix opened it for this failing branch."""
    record = marker.parse(pull.body)
    if record is None:
        raise refuse(
            f"#{pull.number} is not a ci-autofix suggestion: its description has no valid "
            "ci-autofix record. Only suggestion PRs opened by ci-autofix can be applied."
        )
    problems = []
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


def open_pull(pull: PullInfo) -> None:
    if pull.state != "open":
        raise refuse(
            f"#{pull.number} is {'merged' if pull.merged else 'closed'}: a closed suggestion is not "
            "applied. Reopen it first if you still want it."
        )


def actors(gh: GitHub, settings: Settings) -> list[str]:
    """Everyone who started this run (the dispatcher, and whoever re-ran it) may write."""
    logins = list(dict.fromkeys(a for a in (settings.actor, settings.triggering_actor) if a))
    if not logins:
        raise refuse(
            "Nobody is known to have started this run (GITHUB_ACTOR is empty), so no write "
            "permission can be checked. Start apply from the apply workflow."
        )
    for login in logins:
        level = gh.permission(login)
        if level not in WRITE_LEVELS:
            raise refuse(
                f"@{login} started this run but has `{level}` access to the repository; applying a "
                "suggestion needs write access. Ask someone with write access to dispatch the apply "
                "workflow."
            )
    return logins


def policy(record: Suggestion) -> None:
    if record.policy == "blocked":
        raise refuse(
            "The patch policy blocked this fix when it was proposed, so it is never applied. "
            "Make the change yourself if you still want it."
        )


def ci_green(gh: GitHub, record: Suggestion) -> str:
    """`require-ci-green`: the newest CI run on the fix commit concluded success; its URL."""
    if record.ci_run_id is not None:
        runs = [gh.workflow_run(record.ci_run_id)]
    else:
        runs = gh.runs_for_commit(record.fix_sha)
        if record.workflow:
            runs = [r for r in runs if r.workflow_path == record.workflow]
    if not runs:
        raise refuse(
            "`require-ci-green` is on, but no CI run on the fix is recorded or found. Start CI on "
            f"`{record.fix_branch}` (or add a `workflow_dispatch:` trigger to your CI workflow, or "
            "pass `ci-token`), wait for it to pass, then dispatch apply again."
        )
    run = runs[0]
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
    """The recorded CI workflow, when it is a plain workflow file name (else empty: not used)."""
    if _WORKFLOW_FILE.fullmatch(workflow) and ".." not in workflow:
        return workflow
    return ""
