"""An attempt someone asked for: the propose flow started by a `workflow_dispatch` with `run-id`.

Everything in the dispatch is untrusted input, checked before any git call: the id is plain
digits (`flows.event.dispatched_run_id`); a person with write access dispatched it (never the
identity ci-autofix acts as); the run exists in this repository (the API is scoped to it, so
another repository's run id is a 404), completed with `failure`, and is of a workflow the propose
workflow watches (its `workflow_run: workflows:` on the default branch). The run as GitHub's API
reports it then passes the guards a `workflow_run` payload does (a fork's run, a suggestion
branch, the branch filters), and the flow checks that the branch is still at the run's commit.

The dispatch job has no checkout of the failing commit: `fetch_failing` fetches the branch into
a private bare repository and checks git's view of it against the run's commit once more.
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml
from pydantic import ValidationError

from ci_autofix.errors import Halt, HaltReason, UserError
from ci_autofix.flows import access
from ci_autofix.flows.event import (
    Repository,
    WorkflowRun,
    WorkflowRunEvent,
    parse_dispatch,
    read_payload,
    validation_problems,
)
from ci_autofix.git import Git, GitError, fetch_bare, remote_url
from ci_autofix.github import GitHubError
from ci_autofix.github.api import GitHubAPI
from ci_autofix.refs import check_branch_name
from ci_autofix.settings import Settings

FAILING_REF = "refs/ci-autofix/failing"
DEFAULT_WORKFLOW_FILE = "ci-autofix-propose.yml"
_WORKFLOW_FILE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-]*\.ya?ml")
ASK_AGAIN = "Dispatch the propose workflow again with the run id of the newest failure."


def dispatched_event(gh: GitHubAPI, settings: Settings, run_id: int) -> WorkflowRunEvent:
    """The failed run `run_id` as a `workflow_run` event, once the dispatch may start an attempt."""
    dispatch = parse_dispatch(read_payload(settings.event_path))
    if dispatch.repository.full_name != settings.repository:
        raise UserError(
            f"The dispatch payload is for {dispatch.repository.full_name}, but this job runs in "
            f"{settings.repository or '(GITHUB_REPOSITORY unset)'}.",
            "Run ci-autofix in the repository whose workflow was dispatched.",
        )
    people = access.starters(settings)
    if own := [login for login in people if access.is_own_bot(login, settings)]:
        raise Halt(
            HaltReason.REFUSED,
            f"@{own[0]}, the identity ci-autofix proposes as, dispatched this attempt: an attempt is "
            "started by a person who read the failure. Ask someone with write access to run the "
            "command in the ask-first comment.",
        )
    access.check_writers(gh, people, doing="attempting a fix", ask="run the command in the ask-first comment")
    try:
        data = gh.workflow_run_json(run_id)
    except GitHubError as exc:
        if exc.status != 404:
            raise
        raise Halt(
            HaltReason.REFUSED,
            f"Run {run_id} is not a workflow run of {settings.repository}: nothing is attempted. "
            "Pass the id of a failed run of this repository (the number in its URL).",
        ) from None
    run = _run(data, run_id)
    if run.repository is None or run.repository.id != dispatch.repository.id:
        raise Halt(
            HaltReason.REFUSED,
            f"GitHub does not report run {run_id} as a run of {settings.repository}: nothing is attempted.",
        )
    if run.status != "completed":
        raise Halt(
            HaltReason.NOT_A_FAILURE,
            f"Run {run_id} has not completed (it is `{run.status}`): wait for it to fail, then dispatch again.",
        )
    if run.conclusion != "failure":
        raise Halt(
            HaltReason.NOT_A_FAILURE,
            f"Run {run_id} concluded `{run.conclusion}`, not `failure`: there is nothing to fix.",
        )
    watched = watched_workflows(gh, settings)
    if (run.name or "") not in watched:
        raise Halt(
            HaltReason.REFUSED,
            f"Run {run_id} is a run of `{run.name or run.workflow_file}`, which the propose workflow "
            f"(`{own_workflow_file(settings)}`) does not watch ({', '.join(f'`{w}`' for w in watched)}): "
            "nothing is attempted. Dispatch it with a failed run of a workflow its `workflow_run: "
            "workflows:` lists.",
        )
    return WorkflowRunEvent(
        action="completed",
        workflow_run=run,
        repository=Repository(id=dispatch.repository.id, full_name=dispatch.repository.full_name),
    )


def failed_run_event(gh: GitHubAPI, run_id: int, repository: Repository) -> WorkflowRunEvent:
    """Run `run_id` of this repository, as GitHub's API reports it, as a `workflow_run` event (the
    base branch's own failed run, for a fix proposed against the base)."""
    run = _run(gh.workflow_run_json(run_id), run_id)
    return WorkflowRunEvent(action="completed", workflow_run=run, repository=repository)


def own_workflow_file(settings: Settings) -> str:
    """This job's workflow file name, from GITHUB_WORKFLOW_REF (`owner/repo/.github/workflows/x.yml@ref`)."""
    name = settings.workflow_ref.split("@", 1)[0].rsplit("/", 1)[-1]
    return name if _WORKFLOW_FILE.fullmatch(name) else DEFAULT_WORKFLOW_FILE


def watched_workflows(gh: GitHubAPI, settings: Settings) -> list[str]:
    """The workflow names the propose workflow's `workflow_run: workflows:` lists, as its file on the
    default branch says (the file GitHub runs for `workflow_run`): a dispatched attempt is for a
    failure the propose workflow would have handled by itself, never a deploy's or its own."""
    path = f".github/workflows/{own_workflow_file(settings)}"
    text = gh.default_branch_file(path)
    try:
        data = yaml.safe_load(text) if text is not None else None
    except yaml.YAMLError:
        data = None
    triggers = data.get("on", data.get(True)) if isinstance(data, dict) else None
    chained = triggers.get("workflow_run") if isinstance(triggers, dict) else None
    names = chained.get("workflows") if isinstance(chained, dict) else None
    if isinstance(names, str):
        names = [names]
    if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
        raise UserError(
            f"`{path}` on the default branch does not list the workflows it watches "
            "(`on: workflow_run: workflows: [...]`), so a dispatched attempt cannot be checked against it.",
            "Give the propose workflow its `workflow_run` trigger with the names of your CI workflows "
            "(see ci-autofix's examples/ci-autofix-propose.yml).",
        )
    return names


def _run(data: dict[str, object], run_id: int) -> WorkflowRun:
    try:
        return WorkflowRun.model_validate(data)
    except ValidationError as exc:
        problems = validation_problems(exc)
        raise UserError(
            f"GitHub's answer for run {run_id} is not a workflow run ({problems}).",
            "Re-run the job; if it happens again, report it with this message.",
        ) from None


def fetch_failing(root: Path, settings: Settings, event: WorkflowRunEvent) -> Git:
    """The failing branch's head, one commit deep, in a fresh bare repository at `root`: it must
    still be the run's commit (the API said so a moment ago; this is git's view)."""
    run = event.run
    branch = check_branch_name(run.head_branch or "", what="the failing run's branch")
    token = settings.github_token or settings.ci_token
    if token is None:
        raise UserError(
            "No token to fetch the failing commit with.",
            "Pass `github-token: ${{ secrets.GITHUB_TOKEN }}` to the action.",
        )
    try:
        git = fetch_bare(
            root,
            remote_url(settings.server_url, settings.repository),
            f"+refs/heads/{branch}:{FAILING_REF}",
            token=token.get_secret_value(),
            server_url=settings.server_url,
            depth=1,
        )
    except GitError as exc:
        raise UserError(
            f"git could not fetch `{branch}`, the failing branch:\n{exc.result.tail(10)}",
            "Check that the job's `permissions:` include `contents: write` (or `read`) and that the "
            "branch still exists, then dispatch again.",
        ) from None
    fetched = git.rev_parse(FAILING_REF)
    if fetched != run.head_sha:
        raise Halt(
            HaltReason.BRANCH_MOVED,
            f"`{branch}` moved on to {fetched[:12]} since run {run.id} ran on {run.head_sha[:12]}: the "
            f"approval was for that commit, so nothing is attempted. {ASK_AGAIN}",
        )
    return git
