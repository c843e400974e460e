"""What apply refuses: PRs not made by ci-autofix, actors without write access, red CI, and
malicious inputs, which are rejected before any git call reaches the server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ci_autofix.errors import UserError
from ci_autofix.flows.apply_checks import pull_number
from ci_autofix.settings import load_settings
from ci_autofix.state import provenance
from tests.testing.apply_world import CI_DISPATCHABLE, CI_PATH, REPO, World, forged_body, make_world
from tests.testing.emulator import BOT, GitHubEmulator

MALICIOUS = [
    "--upload-pack=touch /tmp/ci-autofix-pwned",
    "../x",
    "refs/heads/main:refs/heads/x",
    "feature\nx",
    "feature\rx",
    "x" * 10 * 1024,
    "-x",
    "feature:main",
    "+feature",
    "a b",
    "HEAD@{1}",
]


def assert_refused_untouched(world: World, number: int, result: Any, *, words: str = "") -> None:
    assert (result.outcome.status, result.outcome.reason) == ("halted", "refused"), result.outcome.message
    assert result.outputs["status"] == "halted"
    assert result.outputs["reason"] == "refused"
    assert words in result.outcome.message
    assert world.branch("feature") == world.head_sha
    assert world.git_requests() == []  # refused before any git call reached the server
    comments = world.comments(number)
    assert len(comments) == 1 and "Not applied" in comments[0]
    assert len(comments[0]) < 2000
    assert "not applied (`refused`)" in result.summary


# ---- provenance ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("how", "changes", "words"),
    [
        ("no record", {"body": "Please merge my change."}, "no valid ci-autofix record"),
        ("no label", {"labels": []}, "label"),
        ("another label", {"labels": ["enhancement"]}, "label"),
        ("not our prefix", {"fix_branch": "autofix-feature"}, "prefix"),
        (
            "record names another side branch",
            {"tamper": {"fix_branch": "ci-autofix/feature/9"}},
            "head branch",
        ),
        ("record names another failing branch", {"tamper": {"failing_branch": "main"}}, "base branch"),
        ("record's failing branch is ours", {"tamper": {"failing_branch": "ci-autofix/x"}}, "base branch"),
    ],
)
def test_a_pull_request_not_made_by_ci_autofix_is_refused(
    world: World, how: str, changes: dict[str, Any], words: str
) -> None:
    s = world.suggest(**changes)
    result = world.apply(s.number)
    assert_refused_untouched(world, s.number, result, words=words)
    assert world.pull(s.number).state == "open"


def test_a_pull_request_opened_by_someone_else_is_refused_even_if_everything_else_checks_out(
    world: World,
) -> None:
    """The PR's author is the identity propose acts as (`trusted-author`): a human-made PR with
    our record, label, prefix and a vouched-for commit is still not a suggestion."""
    s = world.suggest(user="alice")
    result = world.apply(s.number)
    assert_refused_untouched(world, s.number, result, words="opened by @alice")


def test_the_trusted_author_follows_the_input(world: World) -> None:
    """Propose with an App token: its PRs are by `<app-slug>[bot]`, and so are its statuses."""
    app = "autofix-app[bot]"
    s = world.suggest(user=app, vouched=False)
    world.emu.add_status(
        REPO,
        s.record.fix_sha,
        context=provenance.CONTEXT,
        description=provenance.description(s.record),
        creator=app,
    )
    refused = world.apply(s.number)
    assert_refused_untouched(world, s.number, refused, words="@github-actions[bot]")
    assert world.apply(s.number, trusted_author=app).outcome.status == "applied"


@pytest.mark.parametrize(
    ("how", "tamper", "words"),
    [
        ("no status", None, "no `ci-autofix/provenance` status"),
        ("another head", {"head_sha": "f" * 40}, "says it fixes"),
        ("another run", {"run_id": 4242}, "says it fixes"),
    ],
)
def test_a_fix_commit_without_a_matching_provenance_status_is_refused(
    world: World, how: str, tamper: dict[str, Any] | None, words: str
) -> None:
    if tamper is None:
        s = world.suggest(vouched=False)
    else:
        s = world.suggest()
        world.emu.repos[REPO].pulls[s.number].body = s.record.model_copy(update=tamper).render()
    result = world.apply(s.number)
    assert_refused_untouched(world, s.number, result, words=words)


def test_a_status_with_our_context_by_anyone_else_does_not_count(world: World) -> None:
    world.emu.add_user("mallory", permission="write")
    s = world.suggest(vouched=False)
    world.emu.add_status(
        REPO,
        s.record.fix_sha,
        context=provenance.CONTEXT,
        description=provenance.description(s.record),
        creator="mallory",
    )
    result = world.apply(s.number)
    assert_refused_untouched(world, s.number, result, words="no `ci-autofix/provenance` status")


def test_a_record_naming_a_run_of_another_commit_is_refused(world: World) -> None:
    other = world.emu.add_workflow_run(REPO, CI_PATH, "main", world.branch("main") or "", "failure")
    s = world.suggest(run_id=other.id)
    result = world.apply(s.number)
    assert_refused_untouched(world, s.number, result, words="not on `feature`")


def test_labels_follow_the_labels_input(world: World) -> None:
    s = world.suggest(labels=["autofix"])
    assert world.apply(s.number, labels="autofix").outcome.status == "applied"


# ---- who started the run ------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("actor", "triggering", "who"),
    [
        ("bob", "bob", "@bob"),  # read access
        ("alice", "bob", "@bob"),  # re-run by someone without write access
        ("mallory", "", "@mallory"),  # no access
        ("ghost", "", "@ghost"),  # not a user at all (404 → none)
        ("", "", "GITHUB_ACTOR"),
    ],
)
def test_an_actor_without_write_access_is_refused(
    world: World, actor: str, triggering: str, who: str
) -> None:
    world.emu.add_user("mallory")
    world.emu.repos[REPO].permissions.pop("mallory", None)
    s = world.suggest()
    result = world.apply(s.number, actor=actor, triggering_actor=triggering)
    assert_refused_untouched(world, s.number, result, words=who)


def test_maintainers_and_admins_may_apply(world: World) -> None:
    world.emu.add_user("carol", permission="maintain")
    s = world.suggest()
    result = world.apply(s.number, actor="acme", triggering_actor="carol")  # the owner is admin
    assert result.outcome.status == "applied"


# ---- require-ci-green -----------------------------------------------------------------------------
def test_red_ci_on_the_fix_is_refused_with_require_ci_green(world: World) -> None:
    s0 = world.suggest()
    red = world.emu.add_workflow_run(REPO, CI_PATH, s0.record.fix_branch, s0.record.fix_sha, "failure")
    world.emu.repos[REPO].pulls[s0.number].body = s0.record.model_copy(update={"ci_run_id": red.id}).render()
    result = world.apply(s0.number, require_ci_green=True)
    assert_refused_untouched(world, s0.number, result, words="`failure`")


def test_ci_still_running_is_refused_with_require_ci_green(world: World) -> None:
    s = world.suggest()
    running = world.emu.add_workflow_run(
        REPO, CI_PATH, s.record.fix_branch, s.record.fix_sha, None, status="in_progress"
    )
    world.emu.repos[REPO].pulls[s.number].body = s.record.model_copy(
        update={"ci_run_id": running.id}
    ).render()
    result = world.apply(s.number, require_ci_green=True)
    assert_refused_untouched(world, s.number, result, words="still in_progress")


def test_no_ci_at_all_is_refused_with_require_ci_green(world: World) -> None:
    s = world.suggest()
    result = world.apply(s.number, require_ci_green=True)
    assert_refused_untouched(world, s.number, result, words="no CI run")


def test_a_green_run_of_another_commit_does_not_count(world: World) -> None:
    s = world.suggest()
    green = world.emu.add_workflow_run(REPO, CI_PATH, "feature", world.head_sha, "success")
    world.emu.repos[REPO].pulls[s.number].body = s.record.model_copy(update={"ci_run_id": green.id}).render()
    result = world.apply(s.number, require_ci_green=True)
    assert_refused_untouched(world, s.number, result, words="not on the fix")


def test_green_ci_on_the_fix_is_applied_with_require_ci_green(world: World) -> None:
    s = world.suggest()
    green = world.emu.add_workflow_run(REPO, CI_PATH, s.record.fix_branch, s.record.fix_sha, "success")
    world.emu.repos[REPO].pulls[s.number].body = s.record.model_copy(update={"ci_run_id": green.id}).render()
    result = world.apply(s.number, require_ci_green=True)
    assert result.outcome.status == "applied"
    assert result.outcome.details["ci_on_fix"]


def test_without_a_recorded_run_the_newest_ci_run_of_the_fix_counts(world: World) -> None:
    """A push with `ci-token` starts CI without a run id to record: apply looks the run up."""
    s = world.suggest()
    world.emu.add_workflow_run(REPO, CI_PATH, s.record.fix_branch, s.record.fix_sha, "failure")
    world.emu.add_workflow_run(
        REPO, ".github/workflows/other.yml", s.record.fix_branch, s.record.fix_sha, "failure"
    )
    world.emu.add_workflow_run(REPO, CI_PATH, s.record.fix_branch, s.record.fix_sha, "success")
    result = world.apply(s.number, require_ci_green=True)
    assert result.outcome.status == "applied", result.outcome.message


# ---- malicious inputs --------------------------------------------------------------------------------
@pytest.mark.parametrize("value", [*MALICIOUS, "0", "-1", "1.5", "0x10", "٣", "１２", "12345678901", ""])
def test_a_malicious_pull_request_number_is_rejected(value: str) -> None:
    with pytest.raises(UserError) as caught:
        pull_number(value)
    assert "not a pull request number" in caught.value.cause
    assert len(caught.value.cause) < 200


@pytest.mark.parametrize("value", MALICIOUS)
def test_a_malicious_pull_request_input_fails_the_settings(value: str) -> None:
    with pytest.raises(UserError) as caught:
        load_settings(pull_request=value, mode="apply")
    assert "pull-request" in caught.value.cause


def test_malicious_dispatch_inputs_are_rejected_before_any_request(world: World) -> None:
    event = world.tmp / "event.json"
    for value in MALICIOUS:
        payload = world.emu.workflow_dispatch_event(
            REPO, ".github/workflows/ci-autofix-apply.yml", "main", {"pull-request": value}
        )
        event.write_text(json.dumps(payload))
        with pytest.raises(UserError) as caught:
            world.apply(None, event_path=event)
        assert "pull-request" in caught.value.cause
    assert world.emu.requests == []


@pytest.mark.parametrize("field", ["failing_branch", "fix_branch", "head_sha", "fix_sha"])
def test_forged_records_are_refused_before_any_git_call(world: World, field: str) -> None:
    s = world.suggest()
    for value in MALICIOUS:
        record = json.loads(s.record.model_dump_json())
        record[field] = value
        world.emu.repos[REPO].pulls[s.number].body = forged_body(**record)
        result = world.apply(s.number)
        assert (result.outcome.status, result.outcome.reason) == ("halted", "refused"), (value, result)
        assert world.branch("feature") == world.head_sha
        assert world.git_requests() == [], value  # refused before any git call reached the server
        comment = world.comments(s.number)[-1]
        assert "Not applied" in comment
        assert value not in comment, value
        assert len(comment) < 2000
    assert len(world.comments(s.number)) == len(MALICIOUS)


@pytest.mark.parametrize("value", ["--upload-pack=x.yml", ".github/workflows/../../x.yml", "x" * 10240])
def test_a_forged_workflow_is_never_dispatched(
    github_emulator: GitHubEmulator, tmp_path: Path, value: str
) -> None:
    world = make_world(github_emulator, tmp_path, ci_text=CI_DISPATCHABLE)
    s = world.suggest()
    world.emu.repos[REPO].pulls[s.number].body = s.record.model_copy(update={"workflow": value}).render()
    result = world.apply(s.number)
    assert result.outcome.status == "applied"  # the record's workflow is never used
    assert [(d.workflow, d.ref) for d in world.emu.dispatches] == [(CI_PATH, "feature")]  # the failing run's
    contents = {r.path for r in world.emu.api_requests(path_regex=r"/contents/")}
    assert contents == {f"/repos/{REPO}/contents/{CI_PATH}"}
    assert "workflow_dispatch" in world.comments(s.number)[0]


def test_a_record_planted_by_a_bot_lookalike_still_needs_the_real_commit(world: World) -> None:
    """A record that names an existing commit that is not on the suggestion branch is refused."""
    s = world.suggest(user=BOT)
    main_sha = world.branch("main")
    assert main_sha is not None
    world.emu.repos[REPO].pulls[s.number].body = s.record.model_copy(update={"fix_sha": main_sha}).render()
    result = world.apply(s.number)
    assert_refused_untouched(world, s.number, result, words="no `ci-autofix/provenance` status")
