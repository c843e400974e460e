"""The apply flow in-process against the emulator: real PyGithub over HTTP, real git over smart HTTP,
suggestion PRs built directly (a real fix commit whose parent is the failing head)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ci_autofix.errors import UserError
from ci_autofix.state import provenance
from tests.testing.apply_world import CI_DISPATCHABLE, CI_PATH, FIXED, REPO, World, make_world
from tests.testing.emulator import BOT, GitHubEmulator
from tests.testing.git import git


def test_the_reviewed_commit_lands_on_the_failing_branch(world: World) -> None:
    s = world.suggest()
    before = world.branch("feature")
    assert before == world.head_sha

    result = world.apply(s.number)

    assert result.outcome.status == "applied", result.outcome.message
    assert world.branch("feature") == s.record.fix_sha  # a fast-forward to exactly the reviewed commit
    assert git(world.emu.bare_path(REPO), "rev-parse", f"{s.record.fix_sha}^") == world.head_sha
    assert world.branch(s.record.fix_branch) is None  # the side branch is deleted
    pull = world.pull(s.number)
    assert pull.state == "closed"
    [comment] = world.comments(s.number)
    assert "Applied" in comment and s.record.fix_sha in comment
    assert "CI will not run" in comment  # ci.yml has no workflow_dispatch and no ci-token was given
    assert world.emu.dispatches == []
    out = result.outputs
    assert out["status"] == "applied"
    assert out["head-sha"] == out["fix-sha"] == s.record.fix_sha
    assert out["pull-request"] == str(s.number)
    assert out["fix-branch"] == s.record.fix_branch
    assert "## ci-autofix: fix applied" in result.summary
    assert s.record.fix_sha in result.summary
    assert "CI will not run" in result.summary
    everything = result.log + result.summary + json.dumps(out) + comment
    assert world.emu.token not in everything


def test_keep_branch_keeps_the_suggestion_branch(world: World) -> None:
    s = world.suggest()
    result = world.apply(s.number, keep_branch=True)
    assert result.outcome.status == "applied"
    assert world.branch("feature") == s.record.fix_sha
    assert world.branch(s.record.fix_branch) == s.record.fix_sha
    assert "was kept" in result.outcome.message
    assert not any(w.startswith("DELETE") for w in world.writes())


def test_ci_is_dispatched_on_the_branch_when_the_workflow_allows_it(
    github_emulator: GitHubEmulator, tmp_path: Path
) -> None:
    world = make_world(github_emulator, tmp_path, ci_text=CI_DISPATCHABLE)
    s = world.suggest()
    result = world.apply(s.number)
    assert result.outcome.status == "applied"
    [dispatch] = world.emu.dispatches
    assert (dispatch.workflow, dispatch.ref) == (CI_PATH, "feature")
    [comment] = world.comments(s.number)
    assert "workflow_dispatch" in comment
    assert result.outcome.details["ci_run_url"]


def test_with_a_ci_token_the_push_is_made_with_it_and_nothing_is_dispatched(
    github_emulator: GitHubEmulator, tmp_path: Path
) -> None:
    world = make_world(github_emulator, tmp_path, ci_text=CI_DISPATCHABLE)
    ci_token = "ghs_ciAppToken0123456789abcdefABCDEF01"
    world.emu.add_token(ci_token, "autofix-app[bot]")
    s = world.suggest()
    result = world.apply(s.number, ci_token=ci_token)
    assert result.outcome.status == "applied"
    assert world.branch("feature") == s.record.fix_sha
    assert world.emu.dispatches == []
    assert "ci-token" in world.comments(s.number)[0]
    assert ci_token not in result.log + result.summary + json.dumps(result.outputs)


def test_the_push_uses_the_ci_token_not_the_github_token(world: World) -> None:
    """A ci-token the server does not accept makes the push fail: it is the one pushing."""
    s = world.suggest()
    with pytest.raises(UserError) as caught:
        world.apply(s.number, ci_token="ghs_notAcceptedAnywhere000000000000000000")
    assert "push" in caught.value.cause
    assert "ci-token" in caught.value.remedy
    assert world.branch("feature") == world.head_sha
    assert world.pull(s.number).state == "open"
    assert "notAccepted" not in str(caught.value)


def test_a_rerun_of_a_successful_apply_reports_it_and_changes_nothing(world: World) -> None:
    s = world.suggest()
    assert world.apply(s.number).outcome.status == "applied"
    refs, writes, git_calls = world.emu.refs(REPO), world.writes(), world.git_requests()
    comments = world.comments(s.number)

    again = world.apply(s.number)

    assert (again.outcome.status, again.outcome.reason) == ("halted", "already-applied")
    assert "already" in again.outcome.message
    assert again.outputs["status"] == "halted"
    assert again.outputs["reason"] == "already-applied"
    assert again.outputs["head-sha"] == again.outputs["fix-sha"] == s.record.fix_sha
    assert "## ci-autofix: already applied" in again.summary
    assert world.emu.refs(REPO) == refs
    assert world.writes() == writes
    assert world.git_requests() == git_calls
    assert world.comments(s.number) == comments


def test_the_branch_moved_after_the_proposal_the_lease_refuses(world: World) -> None:
    s = world.suggest()
    theirs = world.new_commit(world.head_sha, {"widgets.py": "AREA = 1\n"}, "Alice keeps working")
    world.push(theirs, "feature")

    result = world.apply(s.number)

    assert (result.outcome.status, result.outcome.reason) == ("halted", "branch-moved")
    assert world.branch("feature") == theirs  # nothing lost
    assert world.branch(s.record.fix_branch) == s.record.fix_sha  # the suggestion is kept
    pull = world.pull(s.number)
    assert (pull.state, pull.merged) == ("closed", False)
    [comment] = world.comments(s.number)
    assert "stale" in comment and "moved" in comment
    # git itself compared the branch with the lease: the push was attempted, not pre-empted
    assert any("service=git-receive-pack" in r for r in world.git_requests())
    assert result.outputs["reason"] == "branch-moved"
    assert result.outputs["head-sha"] == ""


def test_two_suggestions_for_one_branch_the_second_is_refused_by_the_lease(world: World) -> None:
    first = world.suggest()
    second_run = world.emu.add_workflow_run(REPO, CI_PATH, "feature", world.head_sha, "failure")
    second = world.suggest(
        {"widgets.py": "def area(width, height):  # fixed differently\n    return width * height\n"},
        run_id=second_run.id,
    )
    assert first.record.fix_branch != second.record.fix_branch

    assert world.apply(first.number).outcome.status == "applied"
    result = world.apply(second.number)

    assert (result.outcome.status, result.outcome.reason) == ("halted", "branch-moved")
    assert world.branch("feature") == first.record.fix_sha
    assert world.pull(second.number).state == "closed"
    assert not world.pull(second.number).merged
    assert world.branch(second.record.fix_branch) == second.record.fix_sha


def test_a_side_branch_changed_after_the_proposal_is_refused(world: World) -> None:
    s = world.suggest()
    extra = world.new_commit(s.record.fix_sha, {"evil.py": "import os\n"}, "One more thing")
    world.push(extra, s.record.fix_branch)

    result = world.apply(s.number)

    assert (result.outcome.status, result.outcome.reason) == ("halted", "refused")
    assert "changed after it was proposed" in result.outcome.message
    assert world.branch("feature") == world.head_sha
    assert world.pull(s.number).state == "open"
    [comment] = world.comments(s.number)
    assert "Not applied" in comment and "changed after it was proposed" in comment
    assert world.git_requests() == []


def test_a_fix_whose_parent_is_not_the_failing_head_is_refused(world: World) -> None:
    main_sha = world.branch("main")
    assert main_sha is not None
    # recorded head: the failing head; real parent: main
    s = world.suggest({"widgets.py": "def area(w, h):\n    return w * h\n"}, parent=main_sha)

    result = world.apply(s.number)

    assert (result.outcome.status, result.outcome.reason) == ("halted", "refused")
    assert "parent" in result.outcome.message and main_sha[:12] in result.outcome.message
    assert world.branch("feature") == world.head_sha
    assert not any("service=git-receive-pack" in r for r in world.git_requests())
    assert "parent" in world.comments(s.number)[0]


def test_a_merge_commit_as_fix_is_refused(world: World) -> None:
    main_sha = world.branch("main")
    assert main_sha is not None
    tree = git(world.src, "rev-parse", f"{world.head_sha}^{{tree}}")
    merge = git(
        world.src,
        "commit-tree",
        tree,
        "-p",
        world.head_sha,
        "-p",
        main_sha,
        "-m",
        "merge",
        env={
            "GIT_AUTHOR_NAME": "a",
            "GIT_AUTHOR_EMAIL": "a@b",
            "GIT_COMMITTER_NAME": "a",
            "GIT_COMMITTER_EMAIL": "a@b",
        },
    )
    s = world.suggest()
    world.push(merge, s.record.fix_branch)
    forged = s.record.model_copy(update={"fix_sha": merge})
    world.emu.repos[REPO].pulls[s.number].body = forged.render()
    # even vouched for by the bot (which never makes one), a merge commit is not a fix
    world.emu.add_status(
        REPO, merge, context=provenance.CONTEXT, description=provenance.description(forged), creator=BOT
    )

    result = world.apply(s.number)

    assert result.outcome.reason == "refused"
    assert "parent" in result.outcome.message
    assert world.branch("feature") == world.head_sha


def test_a_closed_suggestion_is_refused(world: World) -> None:
    s = world.suggest()
    world.emu.repos[REPO].pulls[s.number].state = "closed"
    result = world.apply(s.number)
    assert result.outcome.reason == "refused"
    assert "closed" in result.outcome.message
    assert world.branch("feature") == world.head_sha
    assert world.git_requests() == []
    assert "Not applied" in world.comments(s.number)[0]


def test_a_fix_the_policy_blocked_is_refused(world: World) -> None:
    s = world.suggest(policy="blocked")
    result = world.apply(s.number)
    assert result.outcome.reason == "refused"
    assert "policy" in result.outcome.message
    assert world.branch("feature") == world.head_sha
    assert world.git_requests() == []


def test_the_policy_runs_again_on_the_real_diff_whatever_the_record_says(world: World) -> None:
    """The record says the policy passed, but the fix commit skips a test: apply refuses it from
    the diff it fetched, before pushing."""
    skipping = "import pytest\n\n\n@pytest.mark.skip\ndef test_area():\n    assert False\n"
    s = world.suggest({**FIXED, "tests/test_widgets.py": skipping})
    result = world.apply(s.number)
    assert result.outcome.reason == "refused"
    assert "The patch policy blocks the fix commit as it is" in result.outcome.message
    assert "skip-marker-added" in result.outcome.message
    assert world.branch("feature") == world.head_sha
    assert world.pushes() == []


def test_the_number_comes_from_the_dispatch_inputs_when_the_input_is_empty(world: World) -> None:
    s = world.suggest()
    event = world.tmp / "event.json"
    event.write_text(
        json.dumps(
            world.emu.workflow_dispatch_event(
                REPO, ".github/workflows/ci-autofix-apply.yml", "main", {"pull-request": str(s.number)}
            )
        )
    )
    result = world.apply(None, event_path=event)
    assert result.outcome.status == "applied"
    assert world.branch("feature") == s.record.fix_sha


def test_no_number_at_all_is_an_error_that_says_what_to_pass(world: World) -> None:
    with pytest.raises(UserError) as caught:
        world.apply(None)
    assert "pull-request" in caught.value.remedy
    assert world.emu.requests == []


def test_a_missing_pull_request_is_an_error(world: World) -> None:
    with pytest.raises(UserError) as caught:
        world.apply(4242)
    assert "404" in caught.value.cause
    assert world.git_requests() == []


def test_a_branch_reset_behind_the_proposal_is_refused_by_the_lease_not_only_by_fast_forward(
    world: World,
) -> None:
    """The fix would fast-forward a branch reset to an older commit; only the lease refuses it.

    Without the lease git refuses too (`fetch first`: the shallow fetch lacks the older commit);
    apply takes only the lease's refusal (`stale info`) as a moved branch, so a push without the
    lease fails this test."""
    s = world.suggest()
    main_sha = world.branch("main")
    assert main_sha is not None
    world.push(main_sha, "feature")
    result = world.apply(s.number)
    assert result.outcome.reason == "branch-moved"
    assert world.branch("feature") == main_sha


def test_housekeeping_that_fails_after_the_push_is_a_warning_not_an_error(world: World) -> None:
    """Once the fix is on the branch the run reports `applied`, even if cleaning up fails."""
    s = world.suggest()
    world.emu.deny("DELETE", r"/git/refs/", permission="contents=write")
    world.emu.deny("POST", r"/issues/\d+/comments", permission="issues=write")
    result = world.apply(s.number)
    assert result.outcome.status == "applied"
    assert world.branch("feature") == s.record.fix_sha
    assert world.branch(s.record.fix_branch) == s.record.fix_sha
    [warning] = result.outcome.details["warnings"]
    assert "delete" in warning and "contents: write" in warning
    assert "Could not comment" in result.log
    assert "**Warnings**" in result.summary


def test_git_rechecks_the_side_branch_the_api_reported(world: World) -> None:
    """The side branch moves between the API's answer and the fetch: git's view decides."""
    s = world.suggest()
    extra = world.new_commit(s.record.fix_sha, {"evil.py": "import os\n"}, "One more thing")
    world.push(extra, s.record.fix_branch)
    stale_answer = {
        "ref": f"refs/heads/{s.record.fix_branch}",
        "node_id": "REF_1",
        "url": f"{world.emu.api_url}/repos/{REPO}/git/refs/heads/{s.record.fix_branch}",
        "object": {"sha": s.record.fix_sha, "type": "commit", "url": f"{world.emu.api_url}/x"},
    }
    world.emu.fail("GET", r"/git/ref/heads/ci-autofix/", 200, body=stale_answer)

    result = world.apply(s.number)

    assert result.outcome.reason == "refused"
    assert "changed after it was proposed" in result.outcome.message
    assert extra[:12] in result.outcome.message
    assert any("git-upload-pack" in r for r in world.git_requests())  # it was fetched ...
    assert not any("git-receive-pack" in r for r in world.git_requests())  # ... and never pushed
    assert world.branch("feature") == world.head_sha
