"""Review mode end to end, through the entrypoint as the runner starts it on `pull_request_review`,
against the GitHub emulator and the Messages API fake: a review of three threads becomes one
verified suggestion into the PR's head branch, with a row per thread, one reply per thread and
inline suggestions only where the fix lies inside the PR's diff; the fourth cycle halts with the
stuck report; a reader's review, a bot's and a fork's PR are ignored with a clear halt."""

from __future__ import annotations

import json
from pathlib import Path

from ci_autofix.deliver.threads import REPLY_MARKER
from ci_autofix.state import provenance
from ci_autofix.state.marker import parse
from tests.testing.calc_scenario import PYTEST, messages_process
from tests.testing.emulator import GitHubEmulator
from tests.testing.emulator.core import BOT
from tests.testing.git import git
from tests.testing.review_scenario import (
    BRANCH,
    FINDINGS,
    INJECTED,
    NOTE,
    REPO,
    answering_turns,
    apply_suggestion,
    run_review,
    seed,
)


def test_a_review_of_three_threads_becomes_one_verified_suggestion_with_replies_and_inline_suggestions(
    github_emulator: GitHubEmulator, tmp_path: Path
) -> None:
    emu = github_emulator
    reviewed = seed(emu, tmp_path)
    with messages_process(answering_turns(reviewed.threads), tmp_path) as (url, requests):
        result = run_review(emu, tmp_path, reviewed, url)

    assert result.exit_code == 0, result.log
    assert result.outputs["status"] == "proposed", result.outputs
    fix_branch = f"ci-autofix/add-mean/review-{reviewed.review.id}"
    assert result.outputs["fix-branch"] == fix_branch
    [suggestion] = [p for p in emu.pulls(REPO) if p.head_ref == fix_branch]
    assert suggestion.base_ref == "add-mean" and suggestion.user == BOT

    # one commit on the PR's head: the loop is sum(), the NOTE is in the file, clamp is untouched
    fix_sha = emu.branch_sha(REPO, fix_branch)
    assert fix_sha is not None
    parents = git(emu.bare_path(REPO), "rev-list", "--parents", "-n", "1", fix_sha).split()[1:]
    assert parents == [reviewed.head_sha]
    fixed = git(emu.bare_path(REPO), "show", f"{fix_sha}:stats.py")
    assert "total = sum(values)" in fixed and NOTE in fixed and "def clamp(x, lo, hi):" in fixed
    message = git(emu.bare_path(REPO), "log", "-1", "--format=%B", fix_sha)
    assert (
        f"Autofix-Review: {reviewed.review.id}" in message and f"Autofix-Base: {reviewed.head_sha}" in message
    )

    # the record, the provenance status, verification by test-command on a clean tree
    record = parse(suggestion.body)
    assert record is not None
    assert (record.review_id, record.reviewed_pull, record.attempt) == (
        reviewed.review.id,
        reviewed.number,
        1,
    )
    assert (record.failing_branch, record.head_sha, record.fix_sha) == (
        "add-mean",
        reviewed.head_sha,
        fix_sha,
    )
    assert record.verification == "verified", suggestion.body
    [status] = [s for s in emu.statuses(REPO, fix_sha) if s.context == provenance.CONTEXT]
    assert (status.creator, status.description) == (BOT, provenance.description(record))
    assert emu.runs[record.run_id].head_sha == reviewed.head_sha  # the CI run of the reviewed head

    # the table: a row per thread, untrusted text as code
    body = suggestion.body or ""
    for thread, finding, outcome in zip(
        reviewed.threads,
        FINDINGS,
        ("fixed", "left as-is, with a `NOTE:` comment in the code", "declined"),
        strict=True,
    ):
        row = next(line for line in body.splitlines() if line.startswith(f"| [{thread}]("))
        assert f"`{finding}`" in row and f"| {outcome} |" in row, row
    assert "1 fixed, 1 left as-is with a `NOTE:` comment, 1 declined" in body

    # one reply per thread, each with the suggestion's link and what was done
    replies = [c for c in emu.review_comments_of(REPO, reviewed.number) if c.in_reply_to_id is not None]
    assert sorted(c.in_reply_to_id or 0 for c in replies) == sorted(reviewed.threads)
    by_thread = {c.in_reply_to_id: c.body for c in replies}
    marker = REPLY_MARKER.format(review=reviewed.review.id)
    for thread in reviewed.threads:
        assert (
            by_thread[thread].startswith(marker)
            and suggestion_url(emu, suggestion.number) in by_thread[thread]
        )
    assert "fixed in the suggestion" in by_thread[reviewed.threads[0]]
    assert "`NOTE:` comment" in by_thread[reviewed.threads[1]]
    assert "declined" in by_thread[reviewed.threads[2]]

    # inline: the loop and the NOTE lie in the PR's diff; the docstring edit (line 2) does not
    # (GitHub files each reply under a review of its own, with no body: those are not counted)
    reviews = [r for r in emu.reviews_of(REPO, reviewed.number) if r.user == BOT and r.body]
    assert len(reviews) == 1 and reviews[0].state == "COMMENTED"
    inline = [c for c in emu.review_comments_of(REPO, reviewed.number) if c.review_id == reviews[0].id]
    [only] = inline  # the two edits of mean() are one hunk of the fix: one suggestion over its lines
    assert only.body.startswith("```suggestion\n")
    assert "total = sum(values)" in only.body and "NOTE: an empty list" in only.body
    assert '"""a + b."""' not in only.body  # line 2 is outside the PR's diff: in the side branch only
    assert (only.start_line, only.line, only.side) == (15, 17, "RIGHT")  # the loop's three lines
    assert "1 inline suggestion(s) posted in 1 review(s); 1 hunk(s) only in the side branch" in result.log

    # the agent saw the review and each thread as untrusted data, and was told to report them
    first = json.loads(requests.read_text().splitlines()[0])["body"]
    texts = [b["text"] for b in first["messages"][0]["content"]]
    assert any(t.startswith('<untrusted source="review thread') and FINDINGS[1] in t for t in texts)
    assert any(
        t.startswith('<untrusted source="the pull request_s diff"') and "+def mean" in t for t in texts
    )
    finish = next(t for t in first["tools"] if t["name"] == "finish")
    assert "threads" in finish["input_schema"]["required"]
    assert all(str(t) in finish["description"] for t in reviewed.threads)
    assert PYTEST in texts[0]
    # the reviewer's text reached the model inside its delimiters, and never the job log as a command
    assert any(t.startswith('<untrusted source="review thread') and INJECTED.strip() in t for t in texts)
    assert not [ln for ln in result.stdout.splitlines() if ln.startswith("::warning file=stats.py")]
    assert "injected" not in body  # the table names a finding by its first line only

    # a re-run of the review job changes nothing
    (tmp_path / "again").mkdir()
    with messages_process([], tmp_path / "again") as (url, _):
        again = run_review(emu, tmp_path, reviewed, url)
    assert (again.outputs["status"], again.outputs["reason"]) == ("proposed", "already-proposed"), again.log

    # the same gate as propose's: apply pushes exactly that commit onto the PR's branch, leased
    applied = apply_suggestion(emu, tmp_path, suggestion.number)
    assert applied.outputs["status"] == "applied", applied.log
    assert emu.branch_sha(REPO, BRANCH) == fix_sha
    pushes = [
        r for r in emu.requests if r.server == "git" and r.method == "POST" and "receive-pack" in r.path
    ]
    assert pushes, "apply pushed over git"


def suggestion_url(emu: GitHubEmulator, number: int) -> str:
    return f"{emu.server_url}/{REPO}/pull/{number}"
