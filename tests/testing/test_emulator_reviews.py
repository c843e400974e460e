"""The emulator's pull request reviews, review comments and replies, over raw HTTP.

The pull request's diff is real (`git diff <merge base> <head>` in the bare repository):
feature/login changes line 5, deletes line 15 and changes line 25 of a 30-line file, so its
hunks cover head lines 2-8, 12-17 and 21-27 (RIGHT) and base lines 2-8, 12-18 and 22-28 (LEFT).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.testing.emulator import GitHubEmulator
from tests.testing.git import commit, git, init_repo

REPO = "acme/widgets"
WEBHOOK = (
    Path(__file__).resolve().parents[1]
    / "fixtures"
    / "webhooks"
    / "pull_request_review.submitted.payload.json"
)
BASE = "".join(f"line {i}\n" for i in range(1, 31))
HEAD = BASE.replace("line 5\n", "five\n").replace("line 15\n", "").replace("line 25\n", "twenty-five\n")
NOT_IN_DIFF = (
    "Pull request review thread line must be part of the diff and "
    "Pull request review thread diff hunk can't be blank"
)


@pytest.fixture
def emu(github_emulator: GitHubEmulator, tmp_path: Path) -> GitHubEmulator:
    src = tmp_path / "src"
    init_repo(src, {"app.py": BASE, "old_name.py": "a = 1\nb = 2\n"})
    git(src, "checkout", "-q", "-b", "feature/login")
    commit(src, {"app.py": HEAD}, "Change app")
    git(src, "mv", "old_name.py", "new_name.py")
    commit(src, {"new_name.py": "a = 1\nb = 3\n"}, "Rename and change")
    git(src, "checkout", "-q", "-b", "feature/more")
    commit(src, {"app.py": HEAD.replace("line 10\n", "ten\n")}, "Change line 10 too")
    git(src, "checkout", "-q", "-b", "main-later", "main")
    commit(src, {"app.py": BASE.replace("line 10\n", "base ten\n")}, "Main moves on")
    git(src, "checkout", "-q", "main")
    github_emulator.create_repo(REPO, source=src)
    github_emulator.add_user("alice", "write")
    github_emulator.add_user("rita", "write")
    github_emulator.add_pull(REPO, "feature/login", "main", user="alice")
    return github_emulator


def api(emu: GitHubEmulator, method: str, path: str, body: Any = None) -> requests.Response:
    headers = {"Accept": "application/vnd.github+json", "Authorization": f"token {emu.token}"}
    return requests.request(method, f"{emu.api_url}{path}", json=body, headers=headers, timeout=10)


def review(emu: GitHubEmulator, comments: list[dict[str, Any]], number: int = 1) -> requests.Response:
    body = {"event": "COMMENT", "body": "Suggestions", "comments": comments}
    return api(emu, "POST", f"/repos/{REPO}/pulls/{number}/reviews", body)


def test_a_review_with_comments_inside_the_diff(emu: GitHubEmulator) -> None:
    head = emu.branch_sha(REPO, "feature/login")
    answer = review(
        emu,
        [
            {"path": "app.py", "line": 5, "side": "RIGHT", "body": "one line"},
            {"path": "app.py", "start_line": 3, "line": 7, "side": "RIGHT", "body": "three to seven"},
            {"path": "app.py", "line": 15, "side": "LEFT", "body": "why delete?"},
            {"path": "app.py", "line": 28, "side": "LEFT", "body": "last base line of a hunk"},
            {"path": "app.py", "line": 21, "body": "context line of the last hunk"},
            {"path": "new_name.py", "line": 2, "body": "renamed file"},
        ],
    )
    assert answer.status_code == 200, answer.text
    created = answer.json()
    assert created["state"] == "COMMENTED" and created["commit_id"] == head
    assert created["user"]["login"] == "github-actions[bot]"
    listed = api(emu, "GET", f"/repos/{REPO}/pulls/1/comments").json()
    assert [(c["path"], c["start_line"], c["line"], c["side"]) for c in listed] == [
        ("app.py", None, 5, "RIGHT"),
        ("app.py", 3, 7, "RIGHT"),
        ("app.py", None, 15, "LEFT"),
        ("app.py", None, 28, "LEFT"),
        ("app.py", None, 21, "RIGHT"),
        ("new_name.py", None, 2, "RIGHT"),
    ]
    first = listed[0]
    assert first["diff_hunk"].startswith("@@ -2,7 +2,7 @@")
    assert first["diff_hunk"].endswith("\n line 4\n-line 5\n+five")
    assert listed[2]["diff_hunk"].endswith("\n-line 15")
    assert {c["pull_request_review_id"] for c in listed} == {created["id"]}
    assert {c["commit_id"] for c in listed} == {head}
    assert "in_reply_to_id" not in first and first["original_line"] == 5
    assert first["html_url"] == f"{emu.server_url}/{REPO}/pull/1#discussion_r{first['id']}"
    assert api(emu, "GET", f"/repos/{REPO}/pulls/1/reviews/{created['id']}").json() == created
    of_review = api(emu, "GET", f"/repos/{REPO}/pulls/1/reviews/{created['id']}/comments").json()
    assert [c["id"] for c in of_review] == [c["id"] for c in listed]
    assert [r["id"] for r in api(emu, "GET", f"/repos/{REPO}/pulls/1/reviews").json()] == [created["id"]]
    assert api(emu, "GET", f"/repos/{REPO}/pulls/1").json()["review_comments"] == 6


@pytest.mark.parametrize(
    ("comment", "message"),
    [
        ({"path": "app.py", "line": 10, "body": "between hunks"}, NOT_IN_DIFF),
        ({"path": "app.py", "line": 9, "body": "just after the first hunk"}, NOT_IN_DIFF),
        ({"path": "app.py", "line": 1, "body": "just before the first hunk"}, NOT_IN_DIFF),
        ({"path": "app.py", "line": 30, "side": "RIGHT", "body": "after the last hunk"}, NOT_IN_DIFF),
        ({"path": "app.py", "line": 18, "side": "RIGHT", "body": "a LEFT-only line number"}, NOT_IN_DIFF),
        ({"path": "app.py", "line": 20, "side": "LEFT", "body": "between hunks, LEFT"}, NOT_IN_DIFF),
        (
            {"path": "README.md", "line": 1, "body": "a file the PR does not touch"},
            "Pull request review thread path is invalid and Pull request review thread diff hunk can't be blank",
        ),
        (
            {"path": "old_name.py", "line": 2, "side": "LEFT", "body": "the name before the rename"},
            "Pull request review thread path is invalid and Pull request review thread diff hunk can't be blank",
        ),
        (
            {"path": "app.py", "start_line": 5, "line": 13, "body": "across two hunks"},
            "Pull request review thread start line must be part of the same hunk as the line.",
        ),
        (
            {"path": "app.py", "start_line": 7, "line": 7, "body": "a range of one"},
            "Pull request review thread start line must precede the end line.",
        ),
        (
            {"path": "app.py", "start_line": 9, "line": 10, "body": "both outside"},
            "Pull request review thread line must be part of the diff, Pull request review thread start "
            "line must be part of the same hunk as the line., and Pull request review thread diff hunk "
            "can't be blank",
        ),
    ],
)
def test_one_comment_outside_the_diff_refuses_the_whole_review(
    emu: GitHubEmulator, comment: dict[str, Any], message: str
) -> None:
    answer = review(emu, [{"path": "app.py", "line": 5, "body": "fine"}, comment])
    assert answer.status_code == 422
    assert answer.json() == {
        "message": "Unprocessable Entity",
        "errors": [message],
        "documentation_url": "https://docs.github.com/rest/pulls/reviews#create-a-review-for-a-pull-request",
        "status": "422",
    }
    assert emu.reviews_of(REPO, 1) == [] and emu.review_comments_of(REPO, 1) == []


def test_the_diff_follows_the_head_branch(emu: GitHubEmulator) -> None:
    assert review(emu, [{"path": "app.py", "line": 10, "body": "not yet"}]).status_code == 422
    before = emu.branch_sha(REPO, "feature/login")
    more = emu.branch_sha(REPO, "feature/more")
    moved = api(emu, "PATCH", f"/repos/{REPO}/git/refs/heads/feature/login", {"sha": more, "force": True})
    assert moved.status_code == 200
    answer = review(emu, [{"path": "app.py", "line": 10, "body": "now in the diff"}])
    assert answer.status_code == 200 and answer.json()["commit_id"] == more
    on_before = {
        "event": "COMMENT",
        "body": "x",
        "commit_id": before,
        "comments": [{"path": "app.py", "line": 10, "body": "x"}],
    }
    assert (
        api(emu, "POST", f"/repos/{REPO}/pulls/1/reviews", on_before).status_code == 422
    )  # the diff at commit_id


def test_the_diff_starts_at_the_merge_base(emu: GitHubEmulator) -> None:
    """main moving on (line 10) does not put line 10 in the pull request's diff."""
    later = emu.branch_sha(REPO, "main-later")
    assert api(emu, "PATCH", f"/repos/{REPO}/git/refs/heads/main", {"sha": later}).status_code == 200
    assert review(emu, [{"path": "app.py", "line": 10, "body": "x"}]).status_code == 422
    assert review(emu, [{"path": "app.py", "line": 5, "body": "x"}]).status_code == 200


def test_replies_join_the_thread_of_its_first_comment(emu: GitHubEmulator) -> None:
    seeded = emu.add_review(
        REPO,
        1,
        "rita",
        "CHANGES_REQUESTED",
        "Please fix",
        comments=[
            {"path": "app.py", "line": 5, "body": "rename this", "replies": [("alice", "why?")]},
            {"path": "app.py", "start_line": 21, "line": 23, "body": "and this"},
        ],
    )
    first, alices, _ = emu.review_comments_of(REPO, 1)
    assert (alices.in_reply_to_id, alices.user, alices.line) == (first.id, "alice", 5)
    reply = api(emu, "POST", f"/repos/{REPO}/pulls/1/comments/{first.id}/replies", {"body": "Done"})
    assert reply.status_code == 201 and reply.headers["Location"] == reply.json()["url"]
    assert reply.json()["in_reply_to_id"] == first.id and reply.json()["line"] == 5
    assert reply.json()["pull_request_review_id"] != seeded.id  # a reply is a review of its own
    to_reply = api(emu, "POST", f"/repos/{REPO}/pulls/1/comments/{alices.id}/replies", {"body": "Again"})
    assert to_reply.status_code == 201 and to_reply.json()["in_reply_to_id"] == first.id
    listed = api(emu, "GET", f"/repos/{REPO}/pulls/1/comments").json()
    assert [c.get("in_reply_to_id") for c in listed] == [None, first.id, None, first.id, first.id]
    assert listed[2]["start_line"] == 21 and listed[2]["line"] == 23
    states = [r["state"] for r in api(emu, "GET", f"/repos/{REPO}/pulls/1/reviews").json()]
    assert states == ["CHANGES_REQUESTED", "COMMENTED", "COMMENTED", "COMMENTED"]


def test_a_reply_to_a_comment_of_another_pull_request_is_not_found(emu: GitHubEmulator) -> None:
    emu.add_pull(REPO, "feature/more", "main", user="alice")
    emu.add_review(REPO, 2, "rita", comments=[{"path": "app.py", "line": 10, "body": "x"}])
    other = emu.review_comments_of(REPO, 2)[0]
    answer = api(emu, "POST", f"/repos/{REPO}/pulls/1/comments/{other.id}/replies", {"body": "Done"})
    assert answer.status_code == 404 and answer.json()["message"] == "Not Found"
    assert (
        api(emu, "GET", f"/repos/{REPO}/pulls/1/reviews/{emu.reviews_of(REPO, 2)[0].id}").status_code == 404
    )
    assert len(emu.review_comments_of(REPO, 2)) == 1 and emu.review_comments_of(REPO, 1) == []


def test_seeding_refuses_lines_outside_the_diff(emu: GitHubEmulator) -> None:
    with pytest.raises(ValueError, match="line must be part of the diff"):
        emu.add_review(REPO, 1, "rita", comments=[{"path": "app.py", "line": 10, "body": "x"}])


def test_review_comments_are_paginated(emu: GitHubEmulator) -> None:
    emu.add_review(
        REPO, 1, "rita", comments=[{"path": "app.py", "line": 5, "body": f"c{i}"} for i in range(105)]
    )
    page = api(emu, "GET", f"/repos/{REPO}/pulls/1/comments?per_page=100")
    assert len(page.json()) == 100
    links = {link["rel"]: link["url"] for link in requests.utils.parse_header_links(page.headers["Link"])}
    rest = requests.get(links["next"], headers={"Authorization": f"token {emu.token}"}, timeout=10).json()
    assert [c["body"] for c in rest] == [f"c{i}" for i in range(100, 105)]


def test_own_pull_request_cannot_be_approved(emu: GitHubEmulator) -> None:
    emu.add_token("ghp_alice", "alice")
    answer = requests.post(
        f"{emu.api_url}/repos/{REPO}/pulls/1/reviews",
        json={"event": "APPROVE"},
        headers={"Authorization": "token ghp_alice"},
        timeout=10,
    )
    assert answer.status_code == 422
    assert answer.json()["errors"] == ["Can not approve your own pull request"]


def test_pull_request_review_event_is_shaped_like_githubs(emu: GitHubEmulator) -> None:
    seeded = emu.add_review(REPO, 1, "rita", "CHANGES_REQUESTED", "Please fix")
    event = emu.pull_request_review_event(REPO, 1, seeded.id)
    example = json.loads(WEBHOOK.read_text(encoding="utf-8"))  # octokit's example (MIT)
    assert set(event) == set(example)
    assert set(event["review"]) == set(example["review"])
    assert set(event["pull_request"]) <= set(example["pull_request"]) | {
        "draft",
        "auto_merge",
        "active_lock_reason",
    }
    assert event["review"]["state"] == "changes_requested" and event["review"]["id"] == seeded.id
    assert event["pull_request"]["number"] == 1 and event["sender"]["login"] == "rita"
    assert event["review"]["commit_id"] == emu.branch_sha(REPO, "feature/login")


def urls_in(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value] if value.startswith("http") else []
    if isinstance(value, list):
        return [u for v in value for u in urls_in(v)]
    if isinstance(value, dict):
        return [u for v in value.values() for u in urls_in(v)]
    return []


def test_every_review_url_points_at_the_emulator(emu: GitHubEmulator) -> None:
    seeded = emu.add_review(REPO, 1, "rita", comments=[{"path": "app.py", "line": 5, "body": "x"}])
    first = emu.review_comments_of(REPO, 1)[0]
    answers = [
        api(emu, "GET", f"/repos/{REPO}/pulls/1/reviews").json(),
        api(emu, "GET", f"/repos/{REPO}/pulls/1/comments").json(),
        api(emu, "POST", f"/repos/{REPO}/pulls/1/comments/{first.id}/replies", {"body": "ok"}).json(),
        emu.pull_request_review_event(REPO, 1, seeded.id),
    ]
    urls = urls_in(answers)
    assert urls and all(u.startswith(emu.server_url) for u in urls), [
        u for u in urls if not u.startswith(emu.server_url)
    ]


def test_paths_with_spaces_non_ascii_and_deleted_files(
    github_emulator: GitHubEmulator, tmp_path: Path
) -> None:
    emu = github_emulator
    src = tmp_path / "src"
    init_repo(src, {"café/ü b.py": "a = 1\nb = 2\n", "gone.py": "x = 1\ny = 2\n"})
    git(src, "checkout", "-q", "-b", "topic")
    git(src, "rm", "-q", "gone.py")
    commit(src, {"café/ü b.py": "a = 1\nb = 3\n"}, "Change and delete")
    git(src, "checkout", "-q", "main")
    emu.create_repo(REPO, source=src)
    emu.add_pull(REPO, "topic", "main", user="alice")
    ok = review(
        emu,
        [
            {"path": "café/ü b.py", "line": 2, "body": "x"},
            {"path": "gone.py", "line": 2, "side": "LEFT", "body": "y"},
        ],
    )
    assert ok.status_code == 200, ok.text
    assert [c.path for c in emu.review_comments_of(REPO, 1)] == ["café/ü b.py", "gone.py"]
    right_of_deleted = review(emu, [{"path": "gone.py", "line": 1, "side": "RIGHT", "body": "z"}])
    assert right_of_deleted.status_code == 422 and right_of_deleted.json()["errors"] == [NOT_IN_DIFF]
