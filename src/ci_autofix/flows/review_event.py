"""The `pull_request_review` payload, and the review flow's guards: from it alone, then from the API.

Only a submitted review that requests changes, on an open PR whose head branch is in this
repository (never a fork's, whatever `allow-forks` says: the suggestion must be opened into the
head branch) and is not a ci-autofix suggestion branch, by a person (a bot only with `allow-bots`),
goes any further; everything else halts before any API call. What the payload says is checked
again against GitHub's API (`the_review`): the payload is untrusted data.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from ci_autofix.errors import Halt, HaltReason, UserError
from ci_autofix.flows.access import WRITE_LEVELS
from ci_autofix.flows.event import Account, PullRequestBranch, Repository, validation_problems
from ci_autofix.github import PullInfo, ReviewInfo
from ci_autofix.github.api import GitHubAPI
from ci_autofix.settings import Settings


class _Model(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class Reviewer(_Model):
    login: str
    type: str = "User"


class Review(_Model):
    id: int
    user: Reviewer | None = None
    body: str | None = None
    state: str
    commit_id: str


class ReviewedPull(_Model):
    number: int
    state: str = "open"
    head: PullRequestBranch
    base: PullRequestBranch
    user: Account | None = None


class ReviewEvent(_Model):
    action: str | None = None
    review: Review
    pull_request: ReviewedPull
    repository: Repository

    @property
    def is_fork(self) -> bool:
        """Whether the PR's head may come from another repository; it fails closed: both of the
        payload's `head.repo` and `base.repo` must be present and be this repository."""
        head, base = self.pull_request.head.repo, self.pull_request.base.repo
        return not (head is not None and base is not None and head.id == base.id == self.repository.id)


def parse_review(data: dict[str, Any]) -> ReviewEvent:
    if "review" not in data or "pull_request" not in data:
        raise UserError(
            "The event payload has no `review` and `pull_request`: this is not a pull_request_review event.",
            "Trigger the review flow with `on: pull_request_review: types: [submitted]` (see ci-autofix's "
            "examples/ci-autofix-review.yml), or set the `mode` input for the event you use.",
        )
    try:
        return ReviewEvent.model_validate(data)
    except ValidationError as exc:
        raise UserError(
            f"The pull_request_review payload is malformed ({validation_problems(exc)}).",
            "Pass the payload GitHub delivers for `pull_request_review` events.",
        ) from None


def is_bot(login: str | None, kind: str) -> bool:
    """An App's or a bot account's (GitHub's `type: Bot`, or a `[bot]` login); nobody known counts too."""
    return login is None or kind == "Bot" or login.casefold().endswith("[bot]")


def check_review_guards(event: ReviewEvent, settings: Settings) -> None:
    """Halt (never raise an error) for reviews the review flow must not act on."""
    review, pull = event.review, event.pull_request
    if event.action != "submitted":
        raise Halt(
            HaltReason.NOT_A_FAILURE,
            f"The review was `{event.action}`, not `submitted`: only a submitted review is acted on.",
        )
    if review.state.lower() != "changes_requested":
        raise Halt(
            HaltReason.NOT_A_FAILURE,
            f"Review {review.id} is `{review.state.lower()}`, not `changes_requested`: nothing to fix.",
        )
    if pull.state != "open":
        raise Halt(HaltReason.NOT_A_FAILURE, f"#{pull.number} is {pull.state}: there is nothing to change.")
    if pull.head.ref.startswith(settings.branch_prefix):
        raise Halt(
            HaltReason.OWN_BRANCH,
            f"#{pull.number} is a ci-autofix suggestion (its branch `{pull.head.ref}` has the prefix "
            f"`{settings.branch_prefix}`); answering a review of it with another suggestion would loop. "
            "Close it, or push the change to it yourself.",
        )
    if event.is_fork:  # whatever `allow-forks` says: a suggestion can only go into a branch of ours
        raise Halt(
            HaltReason.FORK,
            f"#{pull.number} comes from a fork (or the payload does not show that its head is this "
            "repository's): a suggestion can only be opened into a branch of this repository, and fixing "
            "the fork's code would run it in a job that holds secrets and a write token. Nothing is done.",
        )
    user = review.user
    if is_bot(user.login if user else None, user.type if user else "") and not settings.allow_bots:
        who = f"@{review.user.login}" if review.user else "an unknown account"
        raise Halt(
            HaltReason.REFUSED,
            f"Review {review.id} is by {who}, a bot: ignored, so no fix is started without a person's "
            "judgement. Set `allow-bots: true` to act on bots' reviews.",
        )


def the_review(gh: GitHubAPI, settings: Settings, pull: PullInfo, review_id: int) -> ReviewInfo:
    """The review as GitHub's API reports it: changes requested by someone with write access, on
    the PR's current head commit, of an open PR whose head is in this repository."""
    found = gh.review(pull.number, review_id)
    if found.state != "CHANGES_REQUESTED":
        raise Halt(
            HaltReason.NOT_A_FAILURE,
            f"Review {found.id} on #{pull.number} is `{found.state}` (GitHub's API), not `CHANGES_REQUESTED`: "
            "nothing to fix.",
        )
    if pull.state != "open":
        raise Halt(HaltReason.NOT_A_FAILURE, f"#{pull.number} is {pull.state}: there is nothing to change.")
    if pull.head_repo != gh.repository:
        raise Halt(
            HaltReason.FORK,
            f"#{pull.number}'s head branch is in `{pull.head_repo or 'a deleted repository'}`, not in this "
            "repository: a suggestion can only be opened into a branch of this repository, and fixing a "
            "fork's code would run it in a job that holds secrets. Nothing is done.",
        )
    if found.author is None or (is_bot(found.author, found.author_type) and not settings.allow_bots):
        raise Halt(
            HaltReason.REFUSED,
            f"Review {found.id} is by {f'@{found.author}' if found.author else 'a deleted account'}, a bot "
            "or nobody (GitHub's API): ignored. Set `allow-bots: true` to act on bots' reviews.",
        )
    level = gh.permission(found.author)
    if level not in WRITE_LEVELS:
        raise Halt(
            HaltReason.REFUSED,
            f"@{found.author} requested changes on #{pull.number} but has `{level}` access to the repository: "
            "ignored. Only a review by someone with write access starts a fix (their judgement is what the "
            "fix carries out).",
        )
    if found.commit_id != pull.head_sha:
        raise Halt(
            HaltReason.BRANCH_MOVED,
            f"#{pull.number} moved on to {pull.head_sha[:12]} since review {found.id} was made on "
            f"{found.commit_id[:12]}: the review is about older code, so nothing is done. Request changes "
            "again on the new head if they still apply.",
        )
    return found
