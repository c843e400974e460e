"""The apply flow: the approval gate's second half, run by `workflow_dispatch` after approval.

number ─► suggestion PR (author) + record ─► provenance status on the fix commit (creator, what
       it names) ─► the failing run (branch, commit, workflow) ─► already applied? ─► open,
       actors, policy, CI ─► side branch ─► fetch into a temporary bare repository ─► fix commit
       and parent ─► the patch policy on the real diff
       ─► git push --force-with-lease=refs/heads/<branch>:<recorded head> <fix>:refs/heads/<branch>
       ─► comment and close the suggestion, delete its branch, CI on the branch, outputs, summary

Nothing reaches the failing branch unless every check passed, and the push itself is leased on
the commit the suggestion was made for: if the branch moved, nobody's work is overwritten.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn, TypeVar

from ci_autofix.deliver.ci import trigger_ci
from ci_autofix.errors import Halt, HaltReason, UserError
from ci_autofix.flows import apply_checks as checks
from ci_autofix.flows.clients import Clients
from ci_autofix.flows.ended import ended
from ci_autofix.flows.event import read_payload
from ci_autofix.git import Git, GitError, PushResult, fetch_bare, push_error, remote_url
from ci_autofix.github import PullInfo
from ci_autofix.github.api import GitHubAPI
from ci_autofix.outcome import Outcome
from ci_autofix.policy.contents import git_blob_reader
from ci_autofix.runner import Runner
from ci_autofix.settings import Settings
from ci_autofix.state.marker import Suggestion

FETCHED_REF = "refs/ci-autofix/fix"
COMMENT_HEADER = "**ci-autofix apply**"
_T = TypeVar("_T")


@dataclass
class _RequestSoFar:
    """What the flow learned before it halted: where to comment, what to report."""

    gh: GitHubAPI | None = None
    pull: PullInfo | None = None
    record: Suggestion | None = None


@dataclass(frozen=True)
class Request:
    """The approved request, as each step of the flow takes it: apply the suggestion `pull`, whose
    `record` says which fix commit goes onto which branch, leased on which commit."""

    settings: Settings
    runner: Runner
    gh: GitHubAPI
    pull: PullInfo
    record: Suggestion


@dataclass(frozen=True)
class _Checked:
    """What the checks before the push found: the failing run's workflow (CI is started with it),
    whether propose dispatched this apply itself (`auto`), and the green CI run on the fix."""

    workflow: str
    auto: bool
    ci_url: str


def apply(settings: Settings, clients: Clients, runner: Runner) -> Outcome:
    seen = _RequestSoFar()
    try:
        return _apply(settings, clients, runner, seen)
    except Halt as halt:
        if halt.reason == HaltReason.REFUSED and seen.gh is not None and seen.pull is not None:
            _comment(seen.gh, seen.pull.number, f"Not applied: {halt.message}", runner)
        if halt.reason != HaltReason.ALREADY_APPLIED:
            runner.warning(f"ci-autofix did not apply the suggestion ({halt.reason.value}): {halt.message}")
        known = _known(seen.pull, seen.record)
        if halt.reason == HaltReason.ALREADY_APPLIED:
            known["head_sha"] = known["fix_sha"]  # the branch's head, as after the first apply
        name = f"apply-{seen.pull.number}" if seen.pull else "apply"
        return ended(halt, runner, keep_in=settings.runner_temp, name=name, summary=summary, **known)


def _apply(settings: Settings, clients: Clients, runner: Runner, seen: _RequestSoFar) -> Outcome:
    number = requested_pull(settings)  # validated before any API or git call
    gh = seen.gh = clients.github()
    pull = seen.pull = gh.get_pull(number)
    runner.stage(f"checking suggestion #{number}")
    record = seen.record = checks.suggestion(pull, settings)
    request = Request(settings, runner, gh, pull, record)
    checked = _checked(request)
    runner.stage(
        f"pushing {record.fix_sha[:12]} onto {record.failing_branch} (lease: {record.head_sha[:12]})"
    )
    _push(request, auto=checked.auto)
    runner.stage(f"{record.failing_branch} is now at {record.fix_sha[:12]}")
    return _landed(request, checked)


def _checked(request: Request) -> _Checked:
    """Every check before the push, on what GitHub's API says: provenance, the failing run, not
    applied yet, open, the actors, the policy, CI on the fix, the side branch, the failing branch."""
    settings, gh, pull, record = request.settings, request.gh, request.pull, request.record
    branch = record.failing_branch
    statuses = gh.statuses(record.fix_sha)
    checks.vouched(statuses, record, settings)
    failing = checks.failing_run(gh, record)
    workflow = failing.workflow_path
    if record.workflow and record.workflow != workflow:
        request.runner.warning(
            f"The record of #{pull.number} names the workflow `{record.workflow[:100]}`, but the failing run "
            f"{failing.id} is of `{workflow}`: CI is started with the failing run's."
        )

    branch_head = gh.branch_sha(branch)
    if branch_head == record.fix_sha:
        raise Halt(
            HaltReason.ALREADY_APPLIED,
            f"`{branch}` is already at the fix {record.fix_sha[:12]} of #{pull.number}: it was applied "
            "before. Nothing changed.",
        )
    checks.open_pull(pull)
    auto = checks.actors(gh, settings, pull.number, record, statuses)  # dispatched by propose itself
    checks.policy(record)
    ci_url = checks.ci_green(gh, record, workflow) if settings.require_ci_green else ""
    checks.side_branch(gh.branch_sha(record.fix_branch), record)
    if branch_head is None:
        raise checks.refuse(
            f"The failing branch `{branch}` no longer exists: there is nothing to apply the fix to."
        )
    return _Checked(workflow, auto, ci_url)


def _push(request: Request, *, auto: bool) -> None:
    """The fix commit fetched into a repository of ours, checked by git (the side branch, the
    parent, the policy on the real diff; `auto`: with no finding at all), and pushed onto the
    failing branch, leased on the commit the suggestion was made for."""
    settings, record = request.settings, request.record
    branch = record.failing_branch
    read_token, push_token = _tokens(settings)
    url = remote_url(settings.server_url, settings.repository)
    with tempfile.TemporaryDirectory(prefix="ci-autofix-apply-") as tmp:
        git = _fetch_fix(Path(tmp), url, record, read_token, settings.server_url)
        checks.side_branch(git.rev_parse(FETCHED_REF), record)  # git's view, after the API's
        checks.fix_parent(_parents(git, record.fix_sha), record)
        checks.policy_on_diff(
            git.diff(record.head_sha, record.fix_sha),
            settings,
            read_blob=git_blob_reader(git),
            require_clean=auto,
        )
        push = git.push(
            url,
            f"{record.fix_sha}:refs/heads/{branch}",
            token=push_token,
            server_url=settings.server_url,
            lease=(f"refs/heads/{branch}", record.head_sha),
        )
    if push.stale:
        _stale(request)
    if not push.ok:
        _push_failed(request, push)


def _landed(request: Request, checked: _Checked) -> Outcome:
    """The fix has landed: what follows is housekeeping, and a failure there must not hide that."""
    settings, runner, gh, pull, record = (
        request.settings,
        request.runner,
        request.gh,
        request.pull,
        request.record,
    )
    branch, number = record.failing_branch, pull.number
    problems: list[str] = []
    ci = _after(
        problems,
        runner,
        "start CI",
        lambda: trigger_ci(gh, settings, checks.dispatchable_workflow(checked.workflow), branch),
    )
    note = ci.note if ci else "CI could not be started on the branch (see the warnings)."
    closing = _after(problems, runner, f"close #{number}", lambda: _close(request, note))
    if not settings.keep_branch:
        _after(problems, runner, f"delete `{record.fix_branch}`", lambda: gh.delete_branch(record.fix_branch))
    kept = f" The suggestion branch `{record.fix_branch}` was kept." if settings.keep_branch else ""
    outcome = Outcome(
        "applied",
        message=f"The fix {record.fix_sha[:12]} from #{number} is on `{branch}`; "
        f"{closing or f'#{number} could not be closed'}.{kept}",
        head_sha=record.fix_sha,
        **_known(pull, record),
        details={
            "ci": note,
            "ci_run_url": (ci.run_url if ci else None) or "",
            "ci_on_fix": checked.ci_url,
            "warnings": problems,
        },
    )
    runner.summary(summary(outcome))
    return outcome


def _after(problems: list[str], runner: Runner, doing: str, step: Callable[[], _T]) -> _T | None:
    """One housekeeping step after the push: a failure becomes a warning, not an error."""
    try:
        return step()
    except UserError as exc:
        problems.append(f"Could not {doing}: {exc.cause} {exc.remedy}")
        runner.warning(problems[-1])
        return None


def requested_pull(settings: Settings) -> int:
    """The suggestion PR's number: the `pull-request` input, else the dispatch's own inputs."""
    if settings.pull_request is not None:
        return checks.pull_number(settings.pull_request)
    if settings.event_name == "workflow_dispatch" and settings.event_path is not None:
        inputs = read_payload(settings.event_path).get("inputs") or {}
        if isinstance(inputs, dict):
            for key in ("pull-request", "pull_request"):
                if key in inputs:
                    return checks.pull_number(inputs[key], what=f"the dispatch input `{key}`")
    raise UserError(
        "No suggestion pull request was named.",
        "Pass `pull-request: ${{ inputs.pull-request }}` to the action in the apply workflow "
        "(see ci-autofix's examples/ci-autofix-apply.yml), and dispatch it with the suggestion PR's number.",
    )


def _tokens(settings: Settings) -> tuple[str, str]:
    """The token to fetch with (`github-token`) and the one to push with (`ci-token` when given,
    so that the push starts CI; else `github-token`)."""
    read = settings.github_token or settings.ci_token
    push = settings.ci_token or settings.github_token
    if read is None or push is None:
        raise UserError(
            "No token to push the fix with.",
            "Pass `github-token: ${{ secrets.GITHUB_TOKEN }}` (and optionally `ci-token`) to the action.",
        )
    return read.get_secret_value(), push.get_secret_value()


def _fetch_fix(root: Path, url: str, record: Suggestion, token: str, server_url: str) -> Git:
    """The fix commit and its parent in a fresh bare repository (the apply job has no checkout)."""
    try:
        return fetch_bare(
            root,
            url,
            f"+refs/heads/{record.fix_branch}:{FETCHED_REF}",
            token=token,
            server_url=server_url,
            depth=2,
        )
    except GitError as exc:
        raise _git_failed(f"fetch the suggestion branch `{record.fix_branch}`", exc) from None


def _push_failed(request: Request, push: PushResult) -> None:
    """A push that failed, but not on the lease: when its answer was lost after GitHub took it
    (the branch is at the fix), the fix has landed and apply goes on; otherwise an error that
    says what refused it and what to do."""
    record = request.record
    branch = record.failing_branch
    try:
        landed = request.gh.branch_sha(branch) == record.fix_sha
    except UserError:
        landed = False
    error = push_error(
        push,
        doing=f"push the fix onto `{branch}`",
        again="dispatch apply again (it reports `already-applied` if the fix did land)",
    )
    if not landed:
        raise error
    request.runner.warning(
        f"{error.cause}\nThe branch is at the fix {record.fix_sha[:12]} even so: the push landed."
    )


def _git_failed(doing: str, exc: GitError) -> UserError:
    return UserError(
        f"git could not {doing}:\n{exc.result.tail(10)}",
        "Check that the token may do this: `contents: write` in the job's `permissions:`; the "
        "`ci-token`, when given, is used to push and must be valid; a protected branch must allow "
        "the token's identity to push. Then dispatch apply again.",
    )


def _parents(git: Git, sha: str) -> list[str]:
    """A commit's parents as written in the commit object (a shallow boundary hides them from rev-list)."""
    header = git.out("cat-file", "commit", sha).split("\n\n", 1)[0]
    return [line.split(" ", 1)[1].strip() for line in header.splitlines() if line.startswith("parent ")]


def _stale(request: Request) -> NoReturn:
    """The lease refused the push: the branch moved, so the suggestion is stale and closed."""
    gh, pull, record, runner = request.gh, request.pull, request.record, request.runner
    branch = record.failing_branch
    message = (
        f"`{branch}` moved after this fix was proposed (it was at {record.head_sha[:12]}), so the "
        "lease refused the push and nothing on the branch changed. This suggestion is stale and is "
        f"closed; its branch `{record.fix_branch}` is kept. If CI fails again on the new commits, "
        "ci-autofix proposes a new fix."
    )
    _comment(gh, pull.number, message, runner)
    try:
        gh.close_pull(pull.number)
    except UserError as exc:
        runner.warning(f"Could not close the stale suggestion #{pull.number}: {exc.cause}")
    raise Halt(HaltReason.BRANCH_MOVED, message)


def _close(request: Request, ci_note: str) -> str:
    """Tell the suggestion PR it was applied and close it, unless GitHub shows it merged already."""
    gh, pull, record = request.gh, request.pull, request.record
    applied = f"Applied: `{record.failing_branch}` is now at {record.fix_sha}."
    notes = [applied, f"CI on `{record.failing_branch}`: {ci_note}"] if ci_note else [applied]
    _comment(gh, pull.number, "\n\n".join(notes), request.runner)
    if gh.get_pull(pull.number).merged:
        return f"GitHub shows #{pull.number} as merged"
    gh.close_pull(pull.number)
    return f"#{pull.number} was closed"


def _comment(gh: GitHubAPI, number: int, text: str, runner: Runner) -> None:
    try:
        gh.comment(number, runner.redact(f"{COMMENT_HEADER}: {text}"))
    except UserError as exc:  # a refusal or a stale notice must not be hidden by a failed comment
        runner.warning(f"Could not comment on #{number}: {exc.cause}")


def _known(pull: PullInfo | None, record: Suggestion | None) -> dict[str, Any]:
    """The outcome's fields for the suggestion, as far as the flow got before it ended."""
    return {
        "fix_branch": record.fix_branch if record else "",
        "fix_sha": record.fix_sha if record else "",
        "pull_request": pull.number if pull else None,
        "pull_request_url": pull.html_url if pull else "",
        "attempt": record.attempt if record else None,
    }


def summary(outcome: Outcome) -> str:
    """The apply job's summary."""
    if outcome.status == "applied":
        parts = [f"## ci-autofix: fix applied\n\n{outcome.message}"]
    elif outcome.reason == HaltReason.ALREADY_APPLIED:
        parts = [f"## ci-autofix: already applied\n\n{outcome.message}"]
    else:
        parts = [f"## ci-autofix: not applied (`{outcome.reason}`)\n\n{outcome.message}"]
    rows = [
        (
            "Suggestion",
            outcome.pull_request_url or (f"#{outcome.pull_request}" if outcome.pull_request else ""),
        ),
        ("Fix commit", f"`{outcome.fix_sha}`" if outcome.fix_sha else ""),
        ("New head", f"`{outcome.head_sha}`" if outcome.head_sha else ""),
    ]
    table = "\n".join(f"| {name} | {value} |" for name, value in rows if value)
    if table:
        parts.append("| | |\n|---|---|\n" + table)
    if note := outcome.details.get("ci"):
        parts.append(f"**CI on the branch**: {note}")
    if warnings := outcome.details.get("warnings"):
        parts.append("**Warnings**\n" + "\n".join(f"- {w}" for w in warnings))
    return "\n\n".join(parts) + "\n"


__all__ = ["apply", "requested_pull", "summary"]
