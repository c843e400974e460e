"""Apply's push onto the failing branch, refused or failed for another reason than the lease: a
`UserError` that names what refused it (GitHub's text, redacted) and what to do, the branch and
the suggestion untouched; a push GitHub took but whose answer was lost counts as landed."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from ci_autofix.agent.llm import Model
from ci_autofix.errors import UserError
from ci_autofix.flows.apply import apply
from ci_autofix.flows.clients import Clients
from ci_autofix.github import GitHub
from ci_autofix.runner import Runner
from tests.testing.apply_world import FAST, REPO, World
from tests.testing.runner_sim import RunnerSim

RECEIVE_PACK = r"/git-receive-pack$"


def apply_error(world: World, number: int) -> UserError:
    with pytest.raises(UserError) as raised:
        world.apply(number)
    return raised.value


def test_a_protected_branch_names_the_rule_and_how_to_allow_the_push(world: World) -> None:
    s = world.suggest()
    world.emu.protect_branch(REPO, "feature", rule="At least 1 approving review is required.")
    error = apply_error(world, s.number)
    assert (
        "git could not push the fix onto `feature`: a branch protection rule refused it (GH006)"
        in error.cause
    )
    assert "GH006: Protected branch update failed for refs/heads/feature." in error.cause
    assert "At least 1 approving review is required." in error.cause
    assert "protection rule" in error.remedy and "dispatch apply again" in error.remedy
    assert world.branch("feature") == world.head_sha
    assert world.pull(s.number).state == "open"


def test_a_push_the_token_may_not_make_says_which_permission(world: World) -> None:
    s = world.suggest()
    world.emu.forbid_push()
    error = apply_error(world, s.number)
    assert "GitHub refused the token (403)" in error.cause
    assert "`contents: write`" in error.remedy
    assert world.branch("feature") == world.head_sha


def test_a_git_server_error_says_to_try_again_not_to_fix_permissions(world: World) -> None:
    s = world.suggest()
    world.emu.fail_git("POST", RECEIVE_PACK, 500)
    error = apply_error(world, s.number)
    assert "GitHub's git service failed (HTTP 500)" in error.cause
    assert "githubstatus.com" in error.remedy and "dispatch apply again" in error.remedy
    assert "permissions" not in error.remedy
    assert world.branch("feature") == world.head_sha
    assert world.pull(s.number).state == "open"


def test_a_push_that_landed_but_whose_answer_was_lost_is_applied(world: World) -> None:
    s = world.suggest()
    world.emu.fail_git("POST", RECEIVE_PACK, 504, after=True)
    result = world.apply(s.number)
    assert result.outcome.status == "applied", result.outcome.message
    assert world.branch("feature") == s.record.fix_sha
    assert "HTTP 504" in result.log and "the push landed" in result.log
    assert world.pull(s.number).state == "closed"


def test_through_the_entrypoint_a_refused_push_is_an_error_with_its_remedy_not_a_bug(
    world: World, tmp_path: Path
) -> None:
    s = world.suggest()
    world.emu.protect_branch(REPO, "feature")
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    number = str(s.number)
    result = (
        RunnerSim(tmp_path / "sim")
        .for_emulator(world.emu, REPO)
        .run(
            event_name="workflow_dispatch",
            event=world.emu.workflow_dispatch_event(
                REPO, ".github/workflows/ci-autofix-apply.yml", "main", {"pull-request": number}
            ),
            workspace=workspace,
            inputs={"pull-request": number},
            actor="alice",
            timeout=120,
        )
    )
    assert result.exit_code == 1
    assert (result.outputs["status"], result.outputs["reason"]) == ("error", "error"), result.log
    assert "Traceback" not in result.log
    [error] = result.annotations("error")
    assert "a branch protection rule refused it (GH006)" in error.message
    assert "What to do: Allow the token's identity to push" in error.message
    assert "GH006" in result.summary
    assert world.branch("feature") == world.head_sha


def test_a_slow_api_ends_in_an_error_that_says_github_did_not_answer(world: World, tmp_path: Path) -> None:
    s = world.suggest()
    world.emu.delay("GET", rf"^/repos/{REPO}/pulls/{s.number}$", 3)
    impatient = replace(FAST, timeout=1)

    def github() -> GitHub:
        return GitHub(token=world.emu.token, api_url=world.emu.api_url, repository=REPO, settings=impatient)

    def llm() -> Model:
        raise AssertionError("apply never builds a model client")

    runner = Runner(in_actions=False, output_path=tmp_path / "out", summary_path=tmp_path / "summary")
    with pytest.raises(UserError) as raised:
        apply(world.settings(s.number), Clients(github=github, llm=llm), runner)
    assert f"GitHub did not answer in time while reading pull request #{s.number}" in raised.value.cause
    assert "re-run" in raised.value.remedy
    assert world.writes() == [] and world.pushes() == []
