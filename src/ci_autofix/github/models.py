"""What the GitHub client returns: small frozen values, never PyGithub objects, and the
conversions from GitHub's JSON into them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from github.CommitStatus import CommitStatus

from ci_autofix.redact import Redacted

FAILED_CONCLUSIONS = frozenset({"failure", "timed_out"})
PERMISSION_LEVELS = ("admin", "maintain", "write", "triage", "read", "none")


@dataclass(frozen=True)
class RunInfo:
    id: int
    name: str
    workflow_id: int
    workflow_path: str  # ".github/workflows/ci.yml" (any "@ref" suffix removed)
    head_branch: str
    head_sha: str
    event: str
    status: str
    conclusion: str | None
    run_attempt: int
    html_url: str
    actor: str | None
    triggering_actor: str | None
    pull_numbers: list[int] = field(default_factory=list)


@dataclass(frozen=True)
class StepInfo:
    number: int
    name: str
    conclusion: str | None


@dataclass(frozen=True)
class JobInfo:
    id: int
    name: str
    conclusion: str | None
    html_url: str
    run_attempt: int | None
    steps: list[StepInfo] = field(default_factory=list)

    @property
    def failed_steps(self) -> list[StepInfo]:
        return [step for step in self.steps if step.conclusion in FAILED_CONCLUSIONS]


@dataclass(frozen=True)
class AnnotationInfo:
    path: str
    start_line: int | None
    end_line: int | None
    level: str  # notice | warning | failure
    title: str
    message: str


@dataclass(frozen=True)
class PullInfo:
    number: int
    html_url: str
    state: str  # open | closed
    merged: bool
    title: str
    body: str
    head_ref: str
    head_sha: str
    base_ref: str
    author: str | None
    labels: list[str] = field(default_factory=list)
    draft: bool = False
    head_repo: str = ""  # the full name of the repository the head branch is in (a fork's, for a fork's PR)


@dataclass(frozen=True)
class PullFile:
    """A file a pull request changes, as GitHub lists it: `patch` is GitHub's own diff of it (the
    hunks review comments are placed in), None for a binary file or a rename without changes."""

    filename: str  # the head's path (the base's for a removed file)
    status: str  # added | removed | modified | renamed | copied | changed | unchanged
    previous_filename: str | None = None
    patch: str | None = None


@dataclass(frozen=True)
class CommitInfo:
    sha: str
    parents: list[str]
    message: str


@dataclass(frozen=True)
class CommentInfo:
    id: int
    author: str | None
    body: str
    html_url: str


@dataclass(frozen=True)
class ReviewInfo:
    """A pull request review. `state` is GitHub's: CHANGES_REQUESTED, COMMENTED, APPROVED,
    DISMISSED or PENDING (a review not submitted yet, seen only by its author)."""

    id: int
    author: str | None
    author_type: str  # "User", or "Bot" for an App's identity such as github-actions[bot]
    state: str
    body: str
    commit_id: str
    html_url: str
    submitted_at: str | None


@dataclass(frozen=True)
class ReviewCommentInfo:
    """A review comment: the first comment of a thread, or a reply (`in_reply_to_id` is then the
    thread's first comment). `line`/`start_line` are lines of the `side`'s file (RIGHT: the head,
    LEFT: the base) at `commit_id`; `line` is None once the thread is outdated (a later push moved
    its lines), when `original_line` still names the line at `commit_id`."""

    id: int
    review_id: int | None
    in_reply_to_id: int | None
    author: str | None
    body: str
    path: str
    line: int | None
    start_line: int | None
    side: str
    start_side: str | None
    original_line: int | None
    original_start_line: int | None
    diff_hunk: str
    commit_id: str
    html_url: str

    @property
    def thread_id(self) -> int:
        """The id of the thread's first comment: the one to reply to."""
        return self.in_reply_to_id or self.id


@dataclass(frozen=True)
class ReviewCommentDraft:
    """A comment of a review we create: on `line` (and from `start_line`, for several lines) of
    `side`'s file. GitHub refuses the whole review if any draft's lines are outside the diff."""

    path: str
    line: int
    body: Redacted
    side: str = "RIGHT"
    start_line: int | None = None
    start_side: str | None = None

    def payload(self) -> dict[str, Any]:
        """The entry of `comments[]` in `POST …/pulls/{n}/reviews`."""
        out: dict[str, Any] = {
            "path": self.path,
            "line": self.line,
            "side": self.side,
            "body": self.body.text,
        }
        if self.start_line is not None:
            out["start_line"] = self.start_line
            out["start_side"] = self.start_side or self.side
        return out


@dataclass(frozen=True)
class StatusInfo:
    """A commit status. `creator` is the login GitHub records for the token that created it:
    nobody can create a status in another account's name."""

    context: str
    state: str
    description: str
    target_url: str
    creator: str | None


@dataclass(frozen=True)
class DispatchInfo:
    run_id: int | None  # known when GitHub returns the run's details
    html_url: str | None


def run_info(raw: Mapping[str, Any]) -> RunInfo:
    actor = raw.get("actor") or {}
    triggering = raw.get("triggering_actor") or {}
    return RunInfo(
        id=int(raw["id"]),
        name=str(raw.get("name") or ""),
        workflow_id=int(raw.get("workflow_id") or 0),
        workflow_path=str(raw.get("path") or "").split("@", 1)[0],
        head_branch=str(raw.get("head_branch") or ""),
        head_sha=str(raw["head_sha"]),
        event=str(raw.get("event") or ""),
        status=str(raw.get("status") or ""),
        conclusion=raw.get("conclusion"),
        run_attempt=int(raw.get("run_attempt") or 1),
        html_url=str(raw.get("html_url") or ""),
        actor=actor.get("login"),
        triggering_actor=triggering.get("login"),
        pull_numbers=[int(p["number"]) for p in raw.get("pull_requests") or []],
    )


def job_info(raw: Mapping[str, Any]) -> JobInfo:
    steps = [StepInfo(int(s["number"]), str(s["name"]), s.get("conclusion")) for s in raw.get("steps") or []]
    return JobInfo(
        int(raw["id"]),
        str(raw["name"]),
        raw.get("conclusion"),
        str(raw.get("html_url") or ""),
        raw.get("run_attempt"),
        steps,
    )


def pull_info(raw: Mapping[str, Any]) -> PullInfo:
    head, base = raw.get("head") or {}, raw.get("base") or {}
    return PullInfo(
        number=int(raw["number"]),
        html_url=str(raw.get("html_url") or ""),
        state=str(raw.get("state") or ""),
        merged=bool(raw.get("merged")) or raw.get("merged_at") is not None,
        title=str(raw.get("title") or ""),
        body=str(raw.get("body") or ""),
        head_ref=str(head.get("ref") or ""),
        head_sha=str(head.get("sha") or ""),
        base_ref=str(base.get("ref") or ""),
        author=(raw.get("user") or {}).get("login"),
        labels=[str(label["name"]) for label in raw.get("labels") or []],
        draft=bool(raw.get("draft")),
        head_repo=str((head.get("repo") or {}).get("full_name") or ""),
    )


def pull_file(raw: Mapping[str, Any]) -> PullFile:
    previous, patch = raw.get("previous_filename"), raw.get("patch")
    return PullFile(
        filename=str(raw["filename"]),
        status=str(raw.get("status") or ""),
        previous_filename=str(previous) if previous is not None else None,
        patch=str(patch) if patch is not None else None,
    )


def status_info(status: CommitStatus) -> StatusInfo:
    creator = status.creator
    return StatusInfo(
        context=str(status.context or ""),
        state=str(status.state or ""),
        description=str(status.description or ""),
        target_url=str(status.target_url or ""),
        creator=str(creator.login) if creator is not None and creator.login else None,
    )


def comment_info(raw: Mapping[str, Any]) -> CommentInfo:
    return CommentInfo(
        int(raw["id"]),
        (raw.get("user") or {}).get("login"),
        str(raw.get("body") or ""),
        str(raw.get("html_url") or ""),
    )


def commit_info(raw: Mapping[str, Any]) -> CommitInfo:
    return CommitInfo(
        str(raw["sha"]),
        [str(p["sha"]) for p in raw.get("parents") or []],
        str((raw.get("commit") or {}).get("message") or ""),
    )


def review_info(raw: Mapping[str, Any]) -> ReviewInfo:
    user = raw.get("user") or {}
    return ReviewInfo(
        id=int(raw["id"]),
        author=user.get("login"),
        author_type=str(user.get("type") or "User"),
        state=str(raw.get("state") or ""),
        body=str(raw.get("body") or ""),
        commit_id=str(raw.get("commit_id") or ""),
        html_url=str(raw.get("html_url") or ""),
        submitted_at=raw.get("submitted_at"),
    )


def _int(value: Any) -> int | None:
    return int(value) if isinstance(value, int) else None


def review_comment_info(raw: Mapping[str, Any]) -> ReviewCommentInfo:
    return ReviewCommentInfo(
        id=int(raw["id"]),
        review_id=_int(raw.get("pull_request_review_id")),
        in_reply_to_id=_int(raw.get("in_reply_to_id")),
        author=(raw.get("user") or {}).get("login"),
        body=str(raw.get("body") or ""),
        path=str(raw.get("path") or ""),
        line=_int(raw.get("line")),
        start_line=_int(raw.get("start_line")),
        side=str(raw.get("side") or "RIGHT"),
        start_side=raw.get("start_side"),
        original_line=_int(raw.get("original_line")),
        original_start_line=_int(raw.get("original_start_line")),
        diff_hunk=str(raw.get("diff_hunk") or ""),
        commit_id=str(raw.get("commit_id") or ""),
        html_url=str(raw.get("html_url") or ""),
    )
