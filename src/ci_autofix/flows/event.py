"""Event payloads into typed models, and the guards decided from the payload alone.

The guards run before any API call: a run that should not be handled costs nothing.
"""

from __future__ import annotations

import fnmatch
import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ci_autofix.errors import Halt, HaltReason, UserError
from ci_autofix.refs import plain_number
from ci_autofix.settings import Settings

TIMED_OUT = (
    "The workflow run concluded `timed_out`, not `failure`: a job hit its time limit. ci-autofix does "
    "not fix job timeouts: the log stops where the runner killed the job, with no failed check to "
    "locate, and a fix for a hang could only be verified by waiting out the same time limit here. "
    "Find the step that hung in the run's log (or raise the job's `timeout-minutes` if it is just slow)."
)


class _Model(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class Account(_Model):
    login: str


class RepoRef(_Model):
    id: int
    full_name: str | None = None


class Person(_Model):
    name: str | None = None
    email: str | None = None


class HeadCommit(_Model):
    id: str
    message: str = ""
    author: Person | None = None


class PullRequestBranch(_Model):
    ref: str
    sha: str
    repo: RepoRef | None = None


class RunPullRequest(_Model):
    number: int
    head: PullRequestBranch
    base: PullRequestBranch


class WorkflowRun(_Model):
    id: int
    name: str | None = None
    head_branch: str | None
    head_sha: str
    path: str = ""
    run_attempt: int = 1
    event: str
    status: str | None = None
    conclusion: str | None
    workflow_id: int | None = None
    html_url: str = ""
    pull_requests: list[RunPullRequest] = Field(default_factory=list)
    actor: Account | None = None
    triggering_actor: Account | None = None
    head_commit: HeadCommit | None = None
    head_repository: RepoRef | None = None
    repository: RepoRef | None = None

    @property
    def workflow_file(self) -> str:
        """`.github/workflows/ci.yml`, also from the `owner/repo/.github/workflows/ci.yml@ref` form."""
        path = self.path.split("@", 1)[0]
        marker = ".github/workflows/"
        return path[path.index(marker) :] if marker in path else path


class Repository(_Model):
    id: int
    full_name: str
    default_branch: str | None = None


class WorkflowRunEvent(_Model):
    action: str | None = None
    workflow_run: WorkflowRun
    repository: Repository

    @property
    def run(self) -> WorkflowRun:
        return self.workflow_run

    @property
    def is_fork(self) -> bool:
        """Whether the run's code may come from another repository; it fails closed.

        A run is from this repository only when the payload says so: its `head_repository` and
        its `repository` are both present and both are this repository. A null or missing one
        (GitHub sends `head_repository: null` once a fork is deleted) counts as a fork, whatever the
        run's event: `pull_request_target` and a `workflow_run` chained after a fork's run check
        out the fork's head too.
        """
        head, base = self.workflow_run.head_repository, self.workflow_run.repository
        same = head is not None and base is not None and head.id == base.id == self.repository.id
        return not same


def validation_problems(exc: ValidationError) -> str:
    """The first five problems pydantic found, as `where: what`; for the messages of our errors."""
    return "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()[:5])


def read_payload(path: Path | None) -> dict[str, Any]:
    if path is None:
        raise UserError(
            "GITHUB_EVENT_PATH is not set, so there is no event to read.",
            "Run the action from a workflow (the runner sets it), or pass the event file path.",
        )
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UserError(
            f"The event file {path} does not exist.",
            "Check GITHUB_EVENT_PATH; on GitHub Actions the runner writes this file.",
        ) from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UserError(
            f"The event file {path} is not valid JSON ({exc}).",
            "Pass the webhook payload as GitHub delivers it.",
        ) from None
    if not isinstance(data, dict):
        raise UserError(
            f"The event file {path} holds {type(data).__name__}, not a JSON object.",
            "Pass the webhook payload as GitHub delivers it.",
        )
    return data


def parse_workflow_run(data: dict[str, Any]) -> WorkflowRunEvent:
    if "workflow_run" not in data:
        raise UserError(
            "The event payload has no `workflow_run`: this is not a workflow_run event.",
            "Trigger the propose flow with `on: workflow_run` (see ci-autofix's examples/ci-autofix-propose.yml), "
            "or set the `mode` input for the event you use.",
        )
    try:
        return WorkflowRunEvent.model_validate(data)
    except ValidationError as exc:
        problems = validation_problems(exc)
        raise UserError(
            f"The workflow_run payload is malformed ({problems}).",
            "Pass the payload GitHub delivers for `workflow_run` events.",
        ) from None


def check_guards(event: WorkflowRunEvent, settings: Settings) -> None:
    """Halt (never raise an error) for runs the propose flow must not handle."""
    run = event.workflow_run
    if run.conclusion == "timed_out":
        raise Halt(HaltReason.NOT_A_FAILURE, TIMED_OUT)
    if run.conclusion not in (
        "failure",
        "success",
    ):  # success: the loop may have ended well (`flows.propose`)
        raise Halt(
            HaltReason.NOT_A_FAILURE,
            f"The workflow run concluded `{run.conclusion}`, not `failure`: nothing to fix.",
        )
    branch = run.head_branch
    if not branch:
        raise Halt(
            HaltReason.BRANCH_FILTERED,
            "The run has no head branch (a tag or a detached ref): there is no branch to propose a fix for.",
        )
    if branch.startswith(settings.branch_prefix):
        raise Halt(
            HaltReason.OWN_BRANCH,
            f"`{branch}` is a ci-autofix suggestion branch (prefix "
            f"`{settings.branch_prefix}`); fixing it would loop.",
        )
    if event.is_fork and not settings.allow_forks:
        head = run.head_repository
        if head is not None and run.repository is not None and head.id != run.repository.id:
            origin = (
                f"The failing run's code comes from a fork ({head.full_name or f'repository {head.id}'})."
            )
        else:
            origin = (
                "The payload does not show that the failing run's code comes from this repository "
                "(its `head_repository` or `repository` is null, missing or another one), so it is "
                "treated as a fork."
            )
        raise Halt(
            HaltReason.FORK,
            f"{origin} Fixing it would run untrusted code in a job that holds secrets and a write token; "
            "set `allow-forks: true` only if you accept that.",
        )
    if settings.branches and not any(fnmatch.fnmatchcase(branch, g) for g in settings.branches):
        raise Halt(HaltReason.BRANCH_FILTERED, f"`{branch}` matches none of the `branches` globs.")
    if any(fnmatch.fnmatchcase(branch, g) for g in settings.exclude_branches):
        raise Halt(HaltReason.BRANCH_FILTERED, f"`{branch}` matches an `exclude-branches` glob.")


class DispatchEvent(_Model):
    """A `workflow_dispatch` payload: who dispatched it, in which repository, with which inputs."""

    inputs: dict[str, Any] | None = None
    repository: Repository
    sender: Account | None = None


def parse_dispatch(data: dict[str, Any]) -> DispatchEvent:
    try:
        return DispatchEvent.model_validate(data)
    except ValidationError as exc:
        problems = validation_problems(exc)
        raise UserError(
            f"The workflow_dispatch payload is malformed ({problems}).",
            "Pass the payload GitHub delivers for `workflow_dispatch` events.",
        ) from None


RUN_ID_REMEDY = (
    "Dispatch the propose workflow with the id of the failed run (the number in its URL, "
    "`.../actions/runs/<id>`), as the ask-first comment's command shows "
    "(`gh workflow run ci-autofix-propose.yml -f run-id=123456789`)."
)


def dispatched_run_id(settings: Settings) -> int | None:
    """On `workflow_dispatch`: the failed run to attempt a fix for, from the `run-id` input, else
    from the dispatch's own inputs; validated (plain digits) before anything uses it."""
    if settings.event_name != "workflow_dispatch":
        if settings.run_id is not None:
            raise UserError(
                f"The `run-id` input is set on a `{settings.event_name or '(none)'}` event; it names the "
                "failed run a `workflow_dispatch` of the propose workflow attempts a fix for.",
                "Pass `run-id: ${{ inputs.run-id }}`, which is empty on other events (see ci-autofix's "
                "examples/ci-autofix-propose.yml).",
            )
        return None
    if settings.run_id is not None:
        return settings.run_id
    if settings.event_path is None:
        return None
    inputs = read_payload(settings.event_path).get("inputs")
    if not isinstance(inputs, dict):
        return None
    for key in ("run-id", "run_id"):
        if key in inputs:  # present: this dispatch is an attempt, and its value must be a run id
            value = inputs[key]
            return plain_number(
                value, what=f"the dispatch input `{key}`", kind="workflow run id", remedy=RUN_ID_REMEDY
            )
    return None


def choose_mode(settings: Settings) -> str:
    """The flow for the event: a dispatch names a failed run (propose) or a suggestion (apply)."""
    run_id = dispatched_run_id(settings)  # validated whatever the mode
    if settings.mode != "auto":
        return settings.mode
    if settings.event_name == "workflow_dispatch":
        return "propose" if run_id is not None else "apply"
    by_event = {"workflow_run": "propose", "pull_request_review": "review"}
    if settings.event_name in by_event:
        return by_event[settings.event_name]
    raise UserError(
        f"ci-autofix does not know what to do on the `{settings.event_name or '(none)'}` event.",
        "Trigger it with `on: workflow_run` (propose) or `on: workflow_dispatch` (apply, or propose "
        "with a `run-id`), or set the `mode` input.",
    )
