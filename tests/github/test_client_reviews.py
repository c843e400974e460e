"""`GitHub`'s review calls through the real PyGithub against the emulator, whose pull request
diff is real git: feature/login changes lines 5 and 25 of a 30-line app.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from ci_autofix.errors import UserError
from ci_autofix.github import (
    GitHub,
    GitHubError,
    ReviewCommentDraft,
    ReviewCommentInfo,
    ReviewInfo,
    ReviewOutsideDiff,
)
from ci_autofix.github.models import review_comment_info
from ci_autofix.redact import Redacted
from tests.testing.emulator import GitHubEmulator
from tests.testing.emulator.shapes import example
from tests.testing.login_pull import REPO, seed_login_pull
from tests.testing.propose import FAST

FORBIDDEN = {
    "message": "Resource not accessible by integration",
    "documentation_url": "https://docs.github.com/rest",
    "status": "403",
}


@pytest.fixture
def emu(github_emulator: GitHubEmulator, tmp_path: Path) -> GitHubEmulator:
    return seed_login_pull(github_emulator, tmp_path)


@pytest.fixture
def gh(emu: GitHubEmulator) -> GitHub:
    return GitHub(emu.token, emu.api_url, REPO, settings=FAST)


def test_reviews_and_their_threads(emu: GitHubEmulator, gh: GitHub) -> None:
    head = emu.branch_sha(REPO, "feature/login")
    seeded = emu.add_review(
        REPO,
        1,
        "rita",
        "CHANGES_REQUESTED",
        "Please fix",
        comments=[
            {"path": "app.py", "line": 5, "body": "rename", "replies": [("alice", "why?")]},
            {"path": "app.py", "start_line": 23, "line": 26, "body": "and these"},
            {"path": "app.py", "line": 25, "side": "LEFT", "body": "the old line"},
        ],
    )
    emu.add_review(REPO, 1, "github-actions[bot]", "COMMENTED", "a bot")
    reviews = gh.reviews(1)
    assert [(r.author, r.state, r.author_type) for r in reviews] == [
        ("rita", "CHANGES_REQUESTED", "User"),
        ("alice", "COMMENTED", "User"),  # the reply
        ("github-actions[bot]", "COMMENTED", "Bot"),
    ]
    got = gh.review(1, seeded.id)
    assert got == reviews[0]
    assert (got.id, got.body, got.commit_id) == (seeded.id, "Please fix", head)
    assert got.html_url.endswith(f"/pull/1#pullrequestreview-{seeded.id}") and got.submitted_at

    first, reply, multi, left = gh.review_comments(1)
    assert (first.path, first.line, first.start_line, first.side, first.in_reply_to_id) == (
        "app.py",
        5,
        None,
        "RIGHT",
        None,
    )
    assert first.review_id == seeded.id and first.author == "rita" and first.commit_id == head
    assert first.diff_hunk.startswith("@@ -2,7 +2,7 @@") and first.diff_hunk.endswith("+five")
    assert first.original_line == 5 and first.html_url.endswith(f"#discussion_r{first.id}")
    assert (reply.in_reply_to_id, reply.author, reply.body, reply.thread_id) == (
        first.id,
        "alice",
        "why?",
        first.id,
    )
    assert first.thread_id == first.id
    assert (multi.start_line, multi.line, multi.start_side, multi.original_start_line) == (
        23,
        26,
        "RIGHT",
        23,
    )
    assert (left.side, left.line, left.diff_hunk.splitlines()[-1]) == ("LEFT", 25, "-line 25")


def test_review_comments_reads_every_page(emu: GitHubEmulator, gh: GitHub) -> None:
    emu.add_review(
        REPO, 1, "rita", comments=[{"path": "app.py", "line": 5, "body": f"c{i}"} for i in range(230)]
    )
    comments = gh.review_comments(1)
    assert [c.body for c in comments] == [f"c{i}" for i in range(230)]
    pages = [r.query for r in emu.api_requests("GET", r"/pulls/1/comments$")]
    assert len(pages) == 3 and "page=3" in pages[-1]


def test_reply_to_a_review_comment(emu: GitHubEmulator, gh: GitHub) -> None:
    emu.add_review(REPO, 1, "rita", comments=[{"path": "app.py", "line": 5, "body": "rename"}])
    thread = gh.review_comments(1)[0]
    posted = gh.reply_to_review_comment(1, thread.thread_id, Redacted("Fixed in abc123."))
    assert posted.body == "Fixed in abc123." and posted.author == "github-actions[bot]"
    assert posted.html_url.endswith(f"#discussion_r{posted.id}")
    stored = emu.review_comments_of(REPO, 1)[-1]
    assert (stored.id, stored.in_reply_to_id, stored.body) == (posted.id, thread.id, "Fixed in abc123.")


def test_a_reply_to_another_pull_requests_comment_is_refused(emu: GitHubEmulator, gh: GitHub) -> None:
    emu.add_review(REPO, 1, "rita", comments=[{"path": "app.py", "line": 5, "body": "rename"}])
    comment = emu.review_comments_of(REPO, 1)[0]
    with pytest.raises(GitHubError) as caught:
        gh.reply_to_review_comment(2, comment.id, Redacted("x"))
    assert caught.value.status == 404
    with pytest.raises(GitHubError) as missing:
        gh.review(1, 999_999)
    assert missing.value.status == 404


def test_create_review_posts_a_comment_review_with_its_drafts(emu: GitHubEmulator, gh: GitHub) -> None:
    head = emu.branch_sha(REPO, "feature/login") or ""
    drafts = [
        ReviewCommentDraft("app.py", 5, Redacted("```suggestion\nfive = 5\n```")),
        ReviewCommentDraft("app.py", 26, Redacted("several"), start_line=23),
        ReviewCommentDraft("app.py", 25, Redacted("old side"), side="LEFT"),
    ]
    created = gh.create_review(1, head, Redacted("ci-autofix suggestions"), drafts)
    assert isinstance(created, ReviewInfo)
    assert (created.state, created.commit_id, created.body) == ("COMMENTED", head, "ci-autofix suggestions")
    sent = emu.api_requests("POST", r"/pulls/1/reviews$")[0].sent
    assert sent == {
        "commit_id": head,
        "body": "ci-autofix suggestions",
        "event": "COMMENT",
        "comments": [
            {"path": "app.py", "line": 5, "side": "RIGHT", "body": "```suggestion\nfive = 5\n```"},
            {
                "path": "app.py",
                "line": 26,
                "side": "RIGHT",
                "body": "several",
                "start_line": 23,
                "start_side": "RIGHT",
            },
            {"path": "app.py", "line": 25, "side": "LEFT", "body": "old side"},
        ],
    }
    stored = [(c.review_id, c.path, c.start_line, c.line, c.side) for c in emu.review_comments_of(REPO, 1)]
    assert stored == [
        (created.id, "app.py", None, 5, "RIGHT"),
        (created.id, "app.py", 23, 26, "RIGHT"),
        (created.id, "app.py", None, 25, "LEFT"),
    ]


def test_a_draft_outside_the_diff_refuses_the_whole_review(emu: GitHubEmulator, gh: GitHub) -> None:
    head = emu.branch_sha(REPO, "feature/login") or ""
    drafts = [
        ReviewCommentDraft("app.py", 5, Redacted("inside")),
        ReviewCommentDraft("app.py", 15, Redacted("outside: between the hunks")),
    ]
    with pytest.raises(ReviewOutsideDiff) as caught:
        gh.create_review(1, head, Redacted("b"), drafts)
    assert caught.value.status == 422
    assert "Pull request review thread line must be part of the diff" in caught.value.github_message
    assert "#1" in caught.value.cause and "hunk" in caught.value.remedy
    assert emu.reviews_of(REPO, 1) == [] and emu.review_comments_of(REPO, 1) == []
    assert gh.create_review(1, head, Redacted("b"), drafts[:1]).state == "COMMENTED"  # the others still post


def test_other_422s_are_not_outside_the_diff(emu: GitHubEmulator, gh: GitHub) -> None:
    emu.fail(
        "POST", r"/pulls/1/reviews$", 422, {"message": "Unprocessable Entity", "errors": ["Something else"]}
    )
    with pytest.raises(GitHubError) as caught:
        gh.create_review(1, emu.branch_sha(REPO, "feature/login") or "", Redacted("b"), [])
    assert not isinstance(caught.value, ReviewOutsideDiff) and caught.value.status == 422


@pytest.mark.parametrize(
    ("method", "path", "permission"),
    [
        ("GET", r"/pulls/1/reviews$", "pull-requests: read"),
        ("GET", r"/pulls/1/reviews/\d+$", "pull-requests: read"),
        ("GET", r"/pulls/1/comments$", "pull-requests: read"),
        ("POST", r"/replies$", "pull-requests: write"),
        ("POST", r"/pulls/1/reviews$", "pull-requests: write"),
    ],
)
def test_a_refusal_names_the_permission_the_call_needs(
    emu: GitHubEmulator, gh: GitHub, method: str, path: str, permission: str
) -> None:
    review = emu.add_review(REPO, 1, "rita", comments=[{"path": "app.py", "line": 5, "body": "x"}])
    comment = emu.review_comments_of(REPO, 1)[0]
    emu.fail(method, path, 403, FORBIDDEN)
    calls = {
        r"/pulls/1/reviews$": lambda: (
            gh.reviews(1) if method == "GET" else gh.create_review(1, comment.commit_id, Redacted("b"), [])
        ),
        r"/pulls/1/reviews/\d+$": lambda: gh.review(1, review.id),
        r"/pulls/1/comments$": lambda: gh.review_comments(1),
        r"/replies$": lambda: gh.reply_to_review_comment(1, comment.id, Redacted("x")),
    }
    with pytest.raises(UserError) as caught:
        calls[path]()
    assert f"`{permission}`" in caught.value.remedy


def test_drafts_and_comments_are_plain_values() -> None:
    draft = ReviewCommentDraft("a.py", 3, Redacted("x"), start_line=1, start_side="LEFT", side="RIGHT")
    assert draft.payload() == {
        "path": "a.py",
        "line": 3,
        "side": "RIGHT",
        "body": "x",
        "start_line": 1,
        "start_side": "LEFT",
    }
    with pytest.raises(AttributeError):
        draft.line = 4  # type: ignore[misc]
    info = ReviewCommentInfo(7, 1, None, "r", "b", "a.py", None, None, "RIGHT", None, 3, None, "", "c", "")
    assert info.thread_id == 7 and info.line is None  # outdated: only original_line is left


def test_an_outdated_thread_keeps_only_its_original_lines() -> None:
    """GitHub sends `line: null` (and `start_line: null`) once a push moved a thread's lines; the
    emulator never outdates a thread, so this reads the description's own example, outdated."""
    raw = example("pull-request-review-comment-example-for-a-multi-line-comment")
    raw.update(line=None, start_line=None, original_line=7, original_start_line=4, in_reply_to_id=None)
    info = review_comment_info(raw)
    assert (info.line, info.start_line, info.original_line, info.original_start_line) == (None, None, 7, 4)
    assert info.thread_id == raw["id"] and info.path == raw["path"] and info.diff_hunk == raw["diff_hunk"]
