"""Apply through the real entrypoint: `python -m ci_autofix` as a subprocess, laid out and fed as the
runner does for a `workflow_dispatch` (no checkout step: the workspace is empty), against the
emulator."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.testing.apply_world import REPO, World
from tests.testing.runner_sim import RunnerSim, RunResult

APPLY_WORKFLOW = ".github/workflows/ci-autofix-apply.yml"


@pytest.fixture
def sim(world: World, tmp_path: Path) -> RunnerSim:
    return RunnerSim(tmp_path / "sim").for_emulator(world.emu, REPO)


def dispatch(world: World, sim: RunnerSim, number: str, *, actor: str = "alice", **inputs: str) -> RunResult:
    """What the example apply workflow does: `pull-request: ${{ inputs.pull-request }}`."""
    workspace = world.tmp / "workspace"
    workspace.mkdir(exist_ok=True)
    event = world.emu.workflow_dispatch_event(
        REPO, APPLY_WORKFLOW, "main", {"pull-request": number}, sender=actor
    )
    return sim.run(
        event_name="workflow_dispatch",
        event=event,
        workspace=workspace,
        inputs={"pull-request": number, **inputs},
        actor=actor,
        timeout=120,
    )


def test_an_approved_dispatch_applies_the_suggestion(world: World, sim: RunnerSim) -> None:
    s = world.suggest()

    result = dispatch(world, sim, str(s.number))

    assert result.exit_code == 0, result.log
    out = result.outputs
    assert out["status"] == "applied"
    assert out["head-sha"] == out["fix-sha"] == s.record.fix_sha
    assert out["pull-request"] == str(s.number)
    assert out["fix-branch"] == s.record.fix_branch
    assert result.result_json()["status"] == "applied"
    assert world.branch("feature") == s.record.fix_sha
    assert world.branch(s.record.fix_branch) is None
    assert world.pull(s.number).state == "closed"
    assert "## ci-autofix: fix applied" in result.summary
    token = world.emu.token
    assert token in result.masks
    unmasked = "\n".join(line for line in result.log.splitlines() if not line.startswith("::add-mask::"))
    assert token not in unmasked + result.summary + "".join(result.outputs.values())
    assert list((world.tmp / "workspace").iterdir()) == []  # no checkout was needed or made


@pytest.mark.parametrize(
    "value", ["--upload-pack=touch /tmp/ci-autofix-pwned", "refs/heads/main:refs/heads/x", "7" * 10240]
)
def test_a_malicious_pull_request_input_fails_before_any_request(
    world: World, sim: RunnerSim, value: str
) -> None:
    s = world.suggest()
    result = dispatch(world, sim, value)
    assert result.exit_code == 1
    assert any("pull-request" in a.message for a in result.annotations("error"))
    assert world.emu.requests == []  # neither the API nor git was reached
    assert world.branch("feature") == world.head_sha
    assert world.comments(s.number) == []


def test_a_refusal_is_a_halt_with_a_warning_and_a_comment(world: World, sim: RunnerSim) -> None:
    s = world.suggest()
    result = dispatch(world, sim, str(s.number), actor="bob")
    assert result.exit_code == 0, result.log
    assert (result.outputs["status"], result.outputs["reason"]) == ("halted", "refused")
    assert any("@bob" in w.message for w in result.annotations("warning"))
    assert "not applied (`refused`)" in result.summary
    assert "@bob" in world.comments(s.number)[0]
    assert world.branch("feature") == world.head_sha
    assert world.git_requests() == []


def test_a_moved_branch_fails_the_job_with_fail_on_halt(world: World, sim: RunnerSim) -> None:
    s = world.suggest()
    theirs = world.new_commit(world.head_sha, {"widgets.py": "AREA = 1\n"}, "Alice keeps working")
    world.push(theirs, "feature")
    result = dispatch(world, sim, str(s.number), **{"fail-on-halt": "true"})
    assert result.exit_code == 1
    assert (result.outputs["status"], result.outputs["reason"]) == ("halted", "branch-moved")
    assert world.branch("feature") == theirs
    assert world.pull(s.number).state == "closed"
