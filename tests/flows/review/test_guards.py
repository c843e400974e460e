"""Review mode's guards and cap, through the entrypoint against the emulator: each review that must
not start a fix ends in a clear halt, before any model call, with nothing written to GitHub."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ci_autofix.deliver.stuck import STUCK_LABEL
from ci_autofix.flows.review import STUCK_MARKER
from tests.testing.emulator import GitHubEmulator
from tests.testing.emulator.core import BOT
from tests.testing.git import commit, git
from tests.testing.review_scenario import BRANCH, REPO, Reviewed, run_review, seed
from tests.testing.runner_sim import RunResult

NO_MODEL = "http://127.0.0.1:9"  # nothing listens: a model call would fail the run


def message(result: RunResult) -> str:
    return str(json.loads(result.outputs["result-json"])["message"])


def writes(emu: GitHubEmulator) -> list[str]:
    return [f"{r.method} {r.path}" for r in emu.requests if r.server == "api" and r.method != "GET"]


def earlier_cycles(emu: GitHubEmulator, reviewed: Reviewed, authors: list[str]) -> None:
    """Suggestion PRs from `<prefix>add-mean/review-<n>` into the PR's head branch, by `authors`."""
    for n, author in enumerate(authors, start=1):
        branch = f"ci-autofix/{BRANCH}/review-{900 + n}"
        git(
            reviewed.source,
            "push",
            "-q",
            str(emu.bare_path(REPO)),
            f"{reviewed.head_sha}:refs/heads/{branch}",
        )
        emu.add_pull(REPO, branch, BRANCH, f"cycle {n}", user=author, state="closed" if n < 3 else "open")


def test_the_fourth_review_halts_with_the_stuck_report_and_no_model_call(
    github_emulator: GitHubEmulator, tmp_path: Path
) -> None:
    emu = github_emulator
    reviewed = seed(emu, tmp_path)
    earlier_cycles(emu, reviewed, [BOT, BOT, BOT])
    before = emu.refs(REPO)

    result = run_review(emu, tmp_path, reviewed, NO_MODEL)

    assert result.exit_code == 0, result.log
    assert (result.outputs["status"], result.outputs["reason"]) == ("halted", "review-cycles-exhausted"), (
        result.log
    )
    assert emu.refs(REPO) == before
    [report] = [c for c in emu.comments(REPO, reviewed.number) if c.startswith(STUCK_MARKER)]
    assert "answered 3 review(s)" in report
    for n in (1, 2, 3):
        assert f"| {n} | [#" in report
    for thread in reviewed.threads:
        assert f"| [{thread}](" in report  # each open thread of the latest review
    assert "`Use sum() instead of the loop.`" in report
    assert STUCK_LABEL in emu.labels(REPO, reviewed.number)
    assert "review-cycles-exhausted" in result.summary

    # a re-run edits that report in place, and a CI stuck report on the same PR is left alone
    emu.add_comment(REPO, reviewed.number, "<!-- ci-autofix:stuck -->\nthe CI loop's report", user=BOT)
    again = run_review(emu, tmp_path, reviewed, NO_MODEL)
    assert again.outputs["reason"] == "review-cycles-exhausted", again.log
    comments = emu.comments(REPO, reviewed.number)
    assert len([c for c in comments if c.startswith(STUCK_MARKER)]) == 1
    assert "<!-- ci-autofix:stuck -->\nthe CI loop's report" in comments


def test_suggestions_someone_else_opened_do_not_count_as_cycles(
    github_emulator: GitHubEmulator, tmp_path: Path
) -> None:
    emu = github_emulator
    reviewed = seed(emu, tmp_path)
    earlier_cycles(emu, reviewed, [BOT, "alice", "alice"])  # only one is ci-autofix's

    result = run_review(emu, tmp_path, reviewed, NO_MODEL, inputs={"anthropic-api-key": ""})

    # past the cap, up to the ladder: no fixer applies and the agent is off (no key)
    assert result.outputs["reason"] == "agent-disabled", result.log
    assert "cycle 2 of 3" in result.log


@pytest.mark.parametrize(
    ("reviewer", "permission", "reason", "words"),
    [
        ("carol", "read", "refused", "has `read` access"),
        ("carol", "triage", "refused", "has `triage` access"),
        ("renovate[bot]", "write", "refused", "a bot"),
    ],
)
def test_a_review_by_a_reader_or_a_bot_is_ignored(
    github_emulator: GitHubEmulator, tmp_path: Path, reviewer: str, permission: str, reason: str, words: str
) -> None:
    emu = github_emulator
    reviewed = seed(emu, tmp_path, reviewer=reviewer, permission=permission)
    before = emu.refs(REPO)

    result = run_review(emu, tmp_path, reviewed, NO_MODEL)

    assert result.exit_code == 0, result.log
    assert (result.outputs["status"], result.outputs["reason"]) == ("halted", reason)
    assert words in message(result), message(result)
    assert emu.refs(REPO) == before and not writes(emu)
    if reviewer.endswith("[bot]"):  # decided from the payload alone
        assert not [r for r in emu.requests if r.server == "api"]


def test_a_bots_review_is_acted_on_only_with_allow_bots(
    github_emulator: GitHubEmulator, tmp_path: Path
) -> None:
    emu = github_emulator
    reviewed = seed(emu, tmp_path, reviewer="renovate[bot]")

    result = run_review(
        emu, tmp_path, reviewed, NO_MODEL, inputs={"allow-bots": "true", "anthropic-api-key": ""}
    )

    assert result.outputs["reason"] == "agent-disabled", result.log  # past every guard


def test_a_forks_pull_request_is_refused_even_with_allow_forks(
    github_emulator: GitHubEmulator, tmp_path: Path
) -> None:
    emu = github_emulator
    reviewed = seed(emu, tmp_path)
    event = emu.pull_request_review_event(REPO, reviewed.number, reviewed.review.id)
    event["pull_request"]["head"]["repo"] = {"id": 999_999, "full_name": "mallory/stats"}

    result = run_review(emu, tmp_path, reviewed, NO_MODEL, event=event, inputs={"allow-forks": "true"})

    assert (result.outputs["status"], result.outputs["reason"]) == ("halted", "fork"), result.log
    assert not [r for r in emu.requests if r.server == "api"]  # decided from the payload alone


def test_a_forged_payload_is_checked_against_the_api(github_emulator: GitHubEmulator, tmp_path: Path) -> None:
    """The payload claims changes were requested; GitHub's API says the review only commented."""
    emu = github_emulator
    reviewed = seed(emu, tmp_path)
    comment = emu.add_review(REPO, reviewed.number, "bob", state="COMMENTED", body="looks fine")
    event = emu.pull_request_review_event(REPO, reviewed.number, comment.id)
    event["review"]["state"] = "changes_requested"

    result = run_review(emu, tmp_path, reviewed, NO_MODEL, event=event)

    assert result.outputs["reason"] == "not-a-failure", result.log
    assert "`COMMENTED` (GitHub's API)" in message(result)
    assert not writes(emu)


def test_a_review_of_an_older_head_is_not_acted_on(github_emulator: GitHubEmulator, tmp_path: Path) -> None:
    emu = github_emulator
    reviewed = seed(emu, tmp_path)
    newer = commit(reviewed.source, {"notes.txt": "more\n"}, "More")
    git(reviewed.source, "push", "-q", str(emu.bare_path(REPO)), BRANCH)

    result = run_review(emu, tmp_path, reviewed, NO_MODEL)

    assert result.outputs["reason"] == "branch-moved", result.log
    assert newer[:12] in message(result) and not writes(emu)


def test_a_review_that_only_comments_is_not_acted_on(github_emulator: GitHubEmulator, tmp_path: Path) -> None:
    emu = github_emulator
    reviewed = seed(emu, tmp_path)
    comment = emu.add_review(REPO, reviewed.number, "bob", state="COMMENTED", body="nit")
    event = emu.pull_request_review_event(REPO, reviewed.number, comment.id)

    result = run_review(emu, tmp_path, reviewed, NO_MODEL, event=event)

    assert result.outputs["reason"] == "not-a-failure", result.log
    assert not [r for r in emu.requests if r.server == "api"]


def test_the_failed_steps_of_the_heads_failing_ci_verify_a_review_fix(
    github_emulator: GitHubEmulator, tmp_path: Path
) -> None:
    """CI also fails on the reviewed head: its failed step (from the workflow file, never the log)
    is what reproduces and verifies, with no `test-command`."""
    from tests.testing.calc_scenario import PYTEST
    from tests.testing.emulator import JobSpec, StepSpec

    emu = github_emulator
    reviewed = seed(emu, tmp_path)
    failed = emu.add_workflow_run(
        REPO,
        ".github/workflows/ci.yml",
        BRANCH,
        reviewed.head_sha,
        "failure",
        jobs=[JobSpec("test", "failure", [StepSpec(f"Run {PYTEST}", "failure")], log=b"E   assert 1 == 2\n")],
    )

    # a workflow the review itself started (newest, failing) is not CI: never run, never the anchor
    emu.add_workflow_run(
        REPO,
        ".github/workflows/labeler.yml",
        BRANCH,
        reviewed.head_sha,
        "failure",
        event="pull_request_review",
        jobs=[JobSpec("label", "failure", [StepSpec("Run ./label.sh", "failure")], log=b"boom\n")],
    )

    result = run_review(
        emu, tmp_path, reviewed, NO_MODEL, inputs={"anthropic-api-key": "", "test-command": ""}
    )

    assert result.outputs["reason"] == "agent-disabled", result.log
    assert f"CI fails on the head: .github/workflows/ci.yml (run {failed.id})" in result.log
    assert "labeler.yml" not in result.log
    assert f"running {PYTEST}" in result.log
