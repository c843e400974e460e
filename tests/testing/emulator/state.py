"""The emulator's state: what tests seed and what they inspect afterwards."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.testing.emulator.bare import BareRepo


@dataclass
class StepSpec:
    name: str
    conclusion: str | None = "success"


@dataclass
class JobSpec:
    name: str
    conclusion: str | None = "failure"
    steps: list[StepSpec] = field(default_factory=list)
    log: bytes = b""
    annotations: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class Job:
    id: int
    run_id: int
    attempt: int
    name: str
    conclusion: str | None
    steps: list[StepSpec]
    log: bytes
    annotations: list[dict[str, Any]]
    logs_expired: bool = False
    logs_missing: bool = False


@dataclass
class Workflow:
    id: int
    path: str
    name: str
    dispatch: bool
    inputs: dict[str, dict[str, Any]] = field(default_factory=dict)


@dataclass
class Run:
    id: int
    repo: str
    workflow: Workflow
    head_branch: str
    head_sha: str
    event: str
    actor: str
    triggering_actor: str
    conclusions: dict[int, str | None]
    status: str
    run_number: int
    pull_requests: list[int]
    attempts: dict[int, list[Job]]
    display_title: str = ""
    fork: str = ""  # the head repository's full name, for a run of a fork's pull request

    @property
    def conclusion(self) -> str | None:
        return self.conclusions[self.run_attempt]

    @property
    def run_attempt(self) -> int:
        return max(self.attempts)

    @property
    def jobs(self) -> list[Job]:
        """Jobs of the latest attempt."""
        return self.attempts[self.run_attempt]


@dataclass
class Comment:
    id: int
    user: str
    body: str
    commit_id: str = ""  # a commit comment's commit; "" for a comment on a pull request


@dataclass
class ReviewComment:
    """A pull request review comment: the first of a thread, or a reply (`in_reply_to_id`, the
    thread's first comment). `line`/`start_line` are lines of `side`'s file at `commit_id`."""

    id: int
    review_id: int
    user: str
    body: str
    path: str
    line: int
    side: str  # RIGHT | LEFT
    start_line: int | None
    start_side: str | None
    commit_id: str
    diff_hunk: str
    position: int  # in the file's diff, as GitHub still reports it
    in_reply_to_id: int | None = None
    created_at: str = ""


@dataclass
class Review:
    id: int
    user: str
    state: str  # CHANGES_REQUESTED | COMMENTED | APPROVED | PENDING
    body: str
    commit_id: str
    submitted_at: str | None


@dataclass
class Pull:
    number: int
    id: int
    head_ref: str
    head_sha: str  # last known; the live value comes from the branch while it exists
    base_ref: str
    title: str
    body: str | None
    user: str
    draft: bool = False
    state: str = "open"
    merged: bool = False
    labels: list[str] = field(default_factory=list)
    requested_reviewers: list[str] = field(default_factory=list)
    requested_teams: list[str] = field(default_factory=list)
    comments: list[Comment] = field(default_factory=list)
    reviews: list[Review] = field(default_factory=list)  # in submission order
    review_comments: list[ReviewComment] = field(default_factory=list)  # in creation order
    created_at: str = ""
    closed_at: str | None = None
    fork: str = ""  # the head repository's full name, for a pull request from a fork (same branch names)


@dataclass
class Status:
    """A commit status; `creator` is the login of the token that created it."""

    id: int
    sha: str
    state: str
    context: str
    description: str | None
    target_url: str | None
    creator: str
    created_at: str


@dataclass(frozen=True)
class Dispatch:
    repo: str
    workflow: str
    ref: str
    inputs: dict[str, Any]


@dataclass(frozen=True)
class Rerun:
    repo: str
    run_id: int
    kind: str  # "failed-jobs"


@dataclass
class Repo:
    full_name: str
    id: int
    bare: BareRepo
    default_branch: str
    owner_id: int
    workflows: dict[str, Workflow] = field(default_factory=dict)
    pulls: dict[int, Pull] = field(default_factory=dict)
    labels: dict[str, int] = field(default_factory=dict)
    teams: set[str] = field(default_factory=set)  # "org/slug"
    permissions: dict[str, str] = field(default_factory=dict)
    statuses: list[Status] = field(default_factory=list)  # in creation order
    commit_comments: list[Comment] = field(default_factory=list)  # in creation order
    push_rules: list[PushRule] = field(default_factory=list)  # protected branches, rulesets
    next_number: int = 1

    @property
    def path(self) -> Path:
        return self.bare.path


@dataclass(frozen=True)
class RequestRecord:
    method: str
    path: str  # API paths without the `/api/v3` prefix; git paths as sent; blob paths on the blob server
    query: str
    status: int
    body: Any  # the answer's JSON
    server: str  # "api" | "git" | "blob"
    sent: Any = None  # the request's JSON body (API requests)


@dataclass
class Fault:
    method: str
    pattern: re.Pattern[str]
    status: int
    body: Any
    headers: dict[str, str]
    times: int | None  # None: until cleared
    server: str = "api"  # "api" | "git" | "blob"
    after: bool = False  # git: the request is carried out, then its answer is replaced (lost)


@dataclass
class Delay:
    """Requests matching on `server` are answered `seconds` late (the work is done first)."""

    server: str  # "api" | "git" | "blob"
    method: str
    pattern: re.Pattern[str]
    seconds: float
    times: int | None  # None: until cleared


@dataclass(frozen=True)
class PushRule:
    """Pushes to refs matching `ref` are refused by the pre-receive hook, which prints `lines`
    (GitHub's own `remote:` text, such as `GH006: Protected branch update failed`)."""

    ref: str  # a regular expression, `re.search` on the full ref name
    lines: tuple[str, ...]


@dataclass
class Denial:
    method: str
    pattern: re.Pattern[str]
    permission: str
