"""The workflow_run payload and the guards decided from it alone."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from ci_autofix.errors import Halt, HaltReason, UserError
from ci_autofix.flows.event import check_guards, choose_mode, parse_workflow_run, read_payload
from ci_autofix.settings import Settings

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "webhooks"


def payload(**run: Any) -> dict[str, Any]:
    data = json.loads((FIXTURES / "workflow_run.completed.with-pull-requests.payload.json").read_text())
    data = copy.deepcopy(data)
    data["workflow_run"].update({"conclusion": "failure", "event": "push", "head_branch": "feature/x"})
    data["workflow_run"].update(run)
    return data


def guard(data: dict[str, Any], **settings: Any) -> None:
    check_guards(parse_workflow_run(data), Settings(**settings))


def test_the_octokit_payload_parses() -> None:
    event = parse_workflow_run(payload())
    assert event.run.head_sha == "3484a3fb816e0859fd6e1cea078d76385ff50625"
    assert event.run.workflow_file == ".github/workflows/test.yml"
    assert event.run.pull_requests[0].number == 2
    assert not event.is_fork


def test_a_failure_passes_the_guards() -> None:
    guard(payload())


@pytest.mark.parametrize("conclusion", ["cancelled", "skipped", "timed_out", "action_required", None])
def test_other_conclusions_halt_naming_the_conclusion(conclusion: str | None) -> None:
    with pytest.raises(Halt) as halt:
        guard(payload(conclusion=conclusion))
    assert halt.value.reason is HaltReason.NOT_A_FAILURE
    assert f"`{conclusion}`" in halt.value.message


def test_a_success_passes_the_guards() -> None:
    guard(payload(conclusion="success"))  # the loop may have ended well: `flows.propose` decides


def test_a_timed_out_run_halts_saying_why_timeouts_are_not_fixed() -> None:
    with pytest.raises(Halt) as halt:
        guard(payload(conclusion="timed_out"))
    assert halt.value.reason is HaltReason.NOT_A_FAILURE
    assert "does not fix job timeouts" in halt.value.message
    assert "timeout-minutes" in halt.value.message


def test_the_removed_fix_timed_out_input_changes_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    # a workflow written for an older ci-autofix may still pass it: it is ignored, timeouts still halt
    monkeypatch.setenv("INPUT_FIX-TIMED-OUT", "true")
    with pytest.raises(Halt) as halt:
        guard(payload(conclusion="timed_out"))
    assert "does not fix job timeouts" in halt.value.message


def test_our_own_side_branches_are_skipped() -> None:
    with pytest.raises(Halt) as halt:
        guard(payload(head_branch="ci-autofix/feature/x/123"))
    assert halt.value.reason is HaltReason.OWN_BRANCH
    with pytest.raises(Halt):
        guard(payload(head_branch="bot/main/1"), branch_prefix="bot/")


def fork_payload() -> dict[str, Any]:
    data = payload(event="pull_request")
    data["workflow_run"]["head_repository"] = {
        **data["workflow_run"]["head_repository"],
        "id": 999,
        "full_name": "mallory/Hello-World",
    }
    return data


def test_fork_pull_requests_are_refused_by_default() -> None:
    with pytest.raises(Halt) as halt:
        guard(fork_payload())
    assert halt.value.reason is HaltReason.FORK
    assert "mallory/Hello-World" in halt.value.message
    assert "allow-forks" in halt.value.message


def test_fork_pull_request_target_runs_are_refused_too() -> None:
    """`pull_request_target` checks out the fork's head as well: the guard is not only for `pull_request`."""
    data = fork_payload()
    data["workflow_run"]["event"] = "pull_request_target"
    with pytest.raises(Halt) as halt:
        guard(data)
    assert halt.value.reason is HaltReason.FORK
    assert "mallory/Hello-World" in halt.value.message


def test_forks_are_handled_when_allowed() -> None:
    guard(fork_payload(), allow_forks=True)


def test_same_repository_pull_requests_are_not_forks() -> None:
    guard(payload(event="pull_request_target"))


def test_branch_globs() -> None:
    guard(payload(head_branch="release/1.2"), branches=["main", "release/*"])
    with pytest.raises(Halt) as halt:
        guard(payload(head_branch="feature/x"), branches=["main", "release/*"])
    assert halt.value.reason is HaltReason.BRANCH_FILTERED
    with pytest.raises(Halt):
        guard(payload(head_branch="dependabot/pip/x"), exclude_branches=["dependabot/**"])


def test_a_tag_run_has_no_branch() -> None:
    with pytest.raises(Halt) as halt:
        guard(payload(head_branch=None))
    assert halt.value.reason is HaltReason.BRANCH_FILTERED


def test_the_rest_api_path_form_is_accepted() -> None:
    event = parse_workflow_run(payload(path="octocat/octo-repo/.github/workflows/ci.yml@main"))
    assert event.run.workflow_file == ".github/workflows/ci.yml"


def test_malformed_payloads_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="not a workflow_run event"):
        parse_workflow_run({"ref": "refs/heads/main"})
    broken = payload()
    del broken["workflow_run"]["head_sha"]
    with pytest.raises(UserError, match="head_sha"):
        parse_workflow_run(broken)
    with pytest.raises(UserError, match="does not exist"):
        read_payload(tmp_path / "missing.json")
    bad = tmp_path / "event.json"
    bad.write_text("{not json")
    with pytest.raises(UserError, match="not valid JSON"):
        read_payload(bad)
    bad.write_text("[1, 2]")
    with pytest.raises(UserError, match="not a JSON object"):
        read_payload(bad)
    with pytest.raises(UserError, match="GITHUB_EVENT_PATH"):
        read_payload(None)


@pytest.mark.parametrize(
    ("event", "mode"),
    [("workflow_run", "propose"), ("workflow_dispatch", "apply"), ("pull_request_review", "review")],
)
def test_the_flow_follows_the_event(event: str, mode: str) -> None:
    assert choose_mode(Settings(event_name=event)) == mode


def test_the_mode_input_overrides_the_event() -> None:
    assert choose_mode(Settings(event_name="workflow_run", mode="apply")) == "apply"
    with pytest.raises(UserError, match="`push` event"):
        choose_mode(Settings(event_name="push"))


@pytest.mark.parametrize(
    ("inputs", "mode"),
    [
        ({"run-id": "123"}, "propose"),
        ({"run_id": "123"}, "propose"),
        ({"pull-request": "7"}, "apply"),
        (None, "apply"),
    ],
)
def test_a_dispatch_naming_a_run_is_a_propose(tmp_path: Path, inputs: object, mode: str) -> None:
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"inputs": inputs, "repository": {"id": 1, "full_name": "acme/w"}}))
    assert choose_mode(Settings(event_name="workflow_dispatch", event_path=event)) == mode


def test_an_empty_run_id_is_an_attempt_without_a_run_not_an_apply(tmp_path: Path) -> None:
    """A propose workflow dispatched with `-f run-id=`: never the apply flow, which that job's
    missing environment would not gate."""
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"inputs": {"run-id": ""}, "repository": {"id": 1, "full_name": "a/b"}}))
    with pytest.raises(UserError, match=r"dispatch input `run-id` \(''\) is not a workflow run id"):
        choose_mode(Settings(event_name="workflow_dispatch", event_path=event))


def test_a_run_id_from_the_payload_is_validated_like_the_input(tmp_path: Path) -> None:
    event = tmp_path / "event.json"
    event.write_text(
        json.dumps({"inputs": {"run-id": "1;rm -rf /"}, "repository": {"id": 1, "full_name": "a/b"}})
    )
    with pytest.raises(UserError, match=r"dispatch input `run-id`.*not a workflow run id"):
        choose_mode(Settings(event_name="workflow_dispatch", event_path=event))
    assert choose_mode(Settings(event_name="workflow_dispatch", event_path=event, run_id="42")) == "propose"


def test_a_run_id_on_a_workflow_run_event_is_a_mistake_named_as_one() -> None:
    with pytest.raises(UserError, match="`run-id` input is set on a `workflow_run` event"):
        choose_mode(Settings(event_name="workflow_run", run_id="42"))
