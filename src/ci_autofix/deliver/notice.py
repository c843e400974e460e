"""The comments ci-autofix keeps one of in a place: on the failing PR, else on the failing commit.

Each kind has a marker on its first line; a run finds its kind's comment among those of the
identity ci-autofix posts as, and edits it in place, so a re-run updates what was said instead
of saying it twice. Comments by anyone else that carry the marker are ignored.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ci_autofix.github import CommentInfo, PullInfo
from ci_autofix.github.api import GitHubAPI
from ci_autofix.redact import Redacted


@dataclass(frozen=True)
class Where:
    """Where a notice goes: the failing PR, else the failing commit."""

    pull: PullInfo | None
    head_sha: str


def where(gh: GitHubAPI, branch: str, head_sha: str, numbers: list[int]) -> Where:
    """The open PR of the failing branch of this repository (from the run's payload, else from
    GitHub; never a fork's PR from a branch of the same name), or the commit."""
    pulls = [gh.get_pull(n) for n in numbers[:3]] or gh.pulls_for_commit(head_sha)
    mine = (p for p in pulls if p.state == "open" and p.head_ref == branch and p.head_repo == gh.repository)
    return Where(next(mine, None), head_sha)


def ours(comments: Iterable[CommentInfo], marker: str, trusted: str) -> CommentInfo | None:
    """The first of `comments` that the identity ci-autofix posts as wrote, starting with `marker`."""
    return next((c for c in comments if c.author == trusted and c.body.startswith(marker)), None)


def upsert(gh: GitHubAPI, target: Where, marker: str, body: Redacted, trusted: str) -> CommentInfo:
    """Post `body` (which starts with `marker`) at `target`, or edit the comment of ours posted there before."""
    if target.pull is not None:
        number = target.pull.number
        mine = ours(gh.comments(number), marker, trusted)
        return gh.edit_comment(mine.id, body) if mine else gh.comment(number, body)
    sha = target.head_sha
    mine = ours(gh.commit_comments(sha), marker, trusted)
    return gh.edit_commit_comment(mine.id, body) if mine else gh.commit_comment(sha, body)
