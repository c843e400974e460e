"""The outside world's clients, built in one place from the settings, and the Protocols the
flows and stages hold them by.

Flows receive factories, so a run that halts on the event payload builds no client at all,
and the model SDK (seconds to import) is imported only when the agent actually runs. The
Protocols name every call ci-autofix makes: strict mypy checks each call site against them,
and `build_clients` checks that the real clients (`github.GitHub`, `agent.llm.LLM`) fit.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ci_autofix.errors import UserError
from ci_autofix.settings import Settings

if TYPE_CHECKING:
    from ci_autofix.agent.llm import Reply
    from ci_autofix.github.models import (
        AnnotationInfo,
        CommentInfo,
        CommitInfo,
        DispatchInfo,
        JobInfo,
        PullInfo,
        ReviewCommentDraft,
        ReviewCommentInfo,
        ReviewInfo,
        RunInfo,
        StatusInfo,
    )
    from ci_autofix.redact import Redacted


class GitHubAPI(Protocol):
    """One repository on GitHub's REST API, as ci-autofix uses it (`github.GitHub`)."""

    repository: str

    @property
    def owner(self) -> str: ...

    # runs, jobs, logs
    def workflow_run(self, run_id: int) -> RunInfo: ...
    def workflow_run_json(self, run_id: int) -> dict[str, Any]: ...
    def runs_for_commit(self, head_sha: str, *, branch: str | None = None) -> list[RunInfo]: ...
    def failed_jobs(self, run_id: int, attempt: int) -> list[JobInfo]: ...
    def job_log(self, job_id: int, dest: Path) -> Path: ...
    def annotations(self, job_id: int) -> list[AnnotationInfo]: ...
    def rerun_failed_jobs(self, run_id: int) -> None: ...
    def dispatch_workflow(
        self, workflow: str, ref: str, inputs: Mapping[str, str] | None = None
    ) -> DispatchInfo: ...

    # pull requests
    def pulls_for_commit(self, sha: str) -> list[PullInfo]: ...
    def find_pull(self, head_branch: str, state: str = "all") -> PullInfo | None: ...
    def list_pulls(self, base: str, state: str = "all") -> list[PullInfo]: ...
    def get_pull(self, number: int) -> PullInfo: ...
    def create_pull(
        self, base: str, head: str, title: Redacted, body: Redacted, draft: bool = False
    ) -> PullInfo: ...
    def update_pull(
        self,
        number: int,
        *,
        title: Redacted | None = None,
        body: Redacted | None = None,
        state: str | None = None,
    ) -> PullInfo: ...
    def close_pull(self, number: int) -> None: ...
    def request_reviewers(self, number: int, logins: list[str]) -> list[str]: ...
    def add_labels(self, number: int, labels: list[str]) -> None: ...
    def remove_label(self, number: int, label: str) -> None: ...
    def comment(self, number: int, body: Redacted) -> CommentInfo: ...
    def comments(self, number: int) -> list[CommentInfo]: ...
    def edit_comment(self, comment_id: int, body: Redacted) -> CommentInfo: ...
    def commit_comment(self, sha: str, body: Redacted) -> CommentInfo: ...
    def commit_comments(self, sha: str) -> list[CommentInfo]: ...
    def edit_commit_comment(self, comment_id: int, body: Redacted) -> CommentInfo: ...

    # reviews
    def reviews(self, number: int) -> list[ReviewInfo]: ...
    def review(self, number: int, review_id: int) -> ReviewInfo: ...
    def review_comments(self, number: int) -> list[ReviewCommentInfo]: ...
    def reply_to_review_comment(self, number: int, comment_id: int, body: Redacted) -> CommentInfo: ...
    def create_review(
        self, number: int, commit_sha: str, body: Redacted, comments: list[ReviewCommentDraft]
    ) -> ReviewInfo: ...

    # branches, commits, people
    def commit(self, sha: str) -> CommitInfo: ...
    def branch_sha(self, branch: str) -> str | None: ...
    def delete_branch(self, branch: str) -> None: ...
    def default_branch(self) -> str: ...
    def default_branch_file(self, path: str) -> str | None: ...
    def permission(self, login: str) -> str: ...
    def commit_author_login(self, sha: str) -> str | None: ...
    def create_status(
        self, sha: str, *, context: str, state: str, description: str, target_url: str = ""
    ) -> StatusInfo: ...
    def statuses(self, sha: str) -> list[StatusInfo]: ...


class Model(Protocol):
    """The Messages API, as the agent loop uses it (`agent.llm.LLM`)."""

    def create(self, **params: Any) -> Reply: ...


@dataclass(frozen=True)
class Clients:
    github: Callable[[], GitHubAPI]
    llm: Callable[[], Model]


def build_clients(settings: Settings) -> Clients:
    def github() -> GitHubAPI:
        from ci_autofix.github import GitHub

        if settings.github_token is None:
            raise UserError(
                "No GitHub token was given.",
                "Pass `github-token: ${{ secrets.GITHUB_TOKEN }}` to the action "
                "(or set GITHUB_TOKEN when running locally).",
            )
        if not settings.repository:
            raise UserError(
                "GITHUB_REPOSITORY is not set.", "Run inside GitHub Actions, or set it to owner/name."
            )
        return GitHub(
            token=settings.github_token.get_secret_value(),
            api_url=settings.api_url,
            repository=settings.repository,
        )

    def llm() -> Model:
        from ci_autofix.agent.llm import build_client

        return build_client(settings)

    return Clients(github=github, llm=llm)
