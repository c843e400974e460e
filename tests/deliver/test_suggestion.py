"""Delivery (`deliver.suggestion`), through the propose flow in this process against the emulator:
the fix on a side branch, one pull request into the failing branch, sealed with its apply
instructions. A push refused or failed ends in a `UserError` naming GitHub's refusal and the remedy
(never a traceback) and leaves nothing half-made (no side branch, no pull request); so does a pull
request that cannot be opened; a side branch an earlier run left without a pull request is
replaced, and the run says so."""

from __future__ import annotations

from pathlib import Path

import pytest

from ci_autofix.deliver.report import APPLY_PLACEHOLDER
from ci_autofix.deliver.suggestion import UNVERIFIED_LABEL
from ci_autofix.errors import UserError
from ci_autofix.state import marker
from tests.testing.emulator import BOT, GitHubEmulator
from tests.testing.format_scenario import REPO, Scenario, in_process
from tests.testing.git import git
from tests.testing.propose import propose_in_process

SIDE_PREFIX = "refs/heads/ci-autofix/"


@pytest.fixture
def scenario(github_emulator: GitHubEmulator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Scenario:
    """`acme/widgets`, whose CI failed on `ruff format --check` (fixed by ruff, no model)."""
    return in_process(github_emulator, tmp_path, monkeypatch)


def side_branches(scenario: Scenario) -> dict[str, str]:
    return scenario.emu.refs(REPO, SIDE_PREFIX)


def propose_error(scenario: Scenario, tmp_path: Path) -> UserError:
    with pytest.raises(UserError) as raised:
        propose_in_process(scenario.emu, tmp_path, scenario.run, scenario.workspace)
    return raised.value


def test_a_ruleset_refusing_the_side_branch_names_the_rule_and_leaves_nothing(
    scenario: Scenario, tmp_path: Path
) -> None:
    secret = "ghp_" + "s" * 36  # a secret-shaped string in GitHub's text is not repeated
    scenario.emu.add_ruleset(
        REPO, r"^refs/heads/ci-autofix/", rule=f"Branch names must not start with ci-autofix/ ({secret})"
    )
    error = propose_error(scenario, tmp_path)
    assert "a repository ruleset refused it (GH013)" in error.cause
    assert "GH013: Repository rule violations found for refs/heads/ci-autofix/feature/" in error.cause
    assert "Branch names must not start with ci-autofix/" in error.cause
    assert secret not in error.cause
    assert "bypass list" in error.remedy and "re-run this job" in error.remedy
    assert side_branches(scenario) == {}
    assert scenario.emu.pulls(REPO) == []


def test_a_push_without_contents_write_says_which_permission(scenario: Scenario, tmp_path: Path) -> None:
    scenario.emu.forbid_push()
    error = propose_error(scenario, tmp_path)
    assert "GitHub refused the token (403)" in error.cause
    assert "Permission to acme/widgets.git denied" in error.cause
    assert "`contents: write`" in error.remedy
    assert side_branches(scenario) == {}
    assert scenario.emu.pulls(REPO) == []


def test_a_push_that_landed_but_whose_answer_was_lost_is_undone(scenario: Scenario, tmp_path: Path) -> None:
    """GitHub's front end answers 502 after git wrote the branch: the branch is deleted again."""
    scenario.emu.fail_git("POST", r"/git-receive-pack$", 502, after=True)
    error = propose_error(scenario, tmp_path)
    assert "GitHub's git service failed (HTTP 502)" in error.cause
    assert "was created even so and has been deleted" in error.cause
    assert "githubstatus.com" in error.remedy
    assert side_branches(scenario) == {}
    assert scenario.emu.pulls(REPO) == []
    deletes = scenario.emu.api_requests("DELETE", r"/git/refs/heads/ci-autofix/feature/")
    assert [r.status for r in deletes] == [204]


def test_a_push_that_failed_before_git_wrote_anything_deletes_nothing(
    scenario: Scenario, tmp_path: Path
) -> None:
    scenario.emu.fail_git("POST", r"/git-receive-pack$", 503)
    error = propose_error(scenario, tmp_path)
    assert "HTTP 503" in error.cause
    assert "deleted" not in error.cause
    assert scenario.emu.api_requests("DELETE") == []
    assert side_branches(scenario) == {}


def test_through_the_entrypoint_a_refused_push_is_an_error_with_its_remedy_not_a_bug(
    scenario: Scenario,
) -> None:
    scenario.emu.add_ruleset(REPO, r"^refs/heads/ci-autofix/")
    result = scenario.propose()
    assert result.exit_code == 1
    assert (result.outputs["status"], result.outputs["reason"]) == ("error", "error"), result.log
    assert "Traceback" not in result.log
    # the failure's own annotation (`would be reformatted`), then ours
    [error] = [e for e in result.annotations("error") if "git could not push" in e.message]
    assert "a repository ruleset refused it (GH013)" in error.message
    assert "What to do: Add the token's identity to the ruleset's bypass list" in error.message
    assert "Changes must be made through a pull request." in result.summary
    assert side_branches(scenario) == {}
    assert scenario.emu.pulls(REPO) == []


def test_the_fix_is_one_pull_request_into_the_failing_branch_sealed_with_its_record(
    scenario: Scenario, tmp_path: Path
) -> None:
    proposed = propose_in_process(scenario.emu, tmp_path, scenario.run, scenario.workspace)
    assert proposed.outcome.status == "proposed", proposed.log
    side = f"ci-autofix/feature/{scenario.run.id}"
    [pull] = scenario.emu.pulls(REPO)
    assert (pull.base_ref, pull.head_ref, pull.user) == ("feature", side, BOT)
    assert (pull.number, pull.head_sha) == (proposed.outcome.pull_request, proposed.outcome.fix_sha)
    assert side_branches(scenario) == {f"refs/heads/{side}": proposed.outcome.fix_sha}
    fix = proposed.outcome.fix_sha or ""
    assert git(scenario.emu.bare_path(REPO), "rev-parse", f"{fix}^") == scenario.head_sha
    record = marker.parse(pull.body)
    assert record is not None and (record.fix_sha, record.head_sha) == (fix, scenario.head_sha)
    assert record.verification == "verified" and not pull.draft
    assert UNVERIFIED_LABEL not in scenario.emu.labels(REPO, pull.number)
    assert APPLY_PLACEHOLDER not in (pull.body or "")  # sealed: the last step of a delivery
    assert scenario.emu.review_requests(REPO, pull.number) == (["alice"], [])  # the failing commit's author


def test_a_pull_request_that_cannot_be_opened_takes_its_side_branch_with_it(
    scenario: Scenario, tmp_path: Path
) -> None:
    scenario.emu.fail("POST", r"/pulls$", 422, {"message": "Validation Failed"})
    with pytest.raises(UserError):
        propose_in_process(scenario.emu, tmp_path, scenario.run, scenario.workspace)
    assert scenario.emu.pulls(REPO) == []
    assert side_branches(scenario) == {}
    deletes = scenario.emu.api_requests("DELETE", r"/git/refs/heads/ci-autofix/feature/")
    assert [r.status for r in deletes] == [204]


def test_a_side_branch_left_without_a_pull_request_is_replaced_and_named(
    scenario: Scenario, tmp_path: Path
) -> None:
    """An earlier delivery of this run pushed the branch and could neither open the PR nor delete
    it; here it holds a commit ci-autofix did not make: the push is leased on it, the branch now
    holds this fix, and the run's log names what it replaced."""
    side = f"ci-autofix/feature/{scenario.run.id}"
    assert scenario.emu.repos[REPO].bare.update_ref(f"refs/heads/{side}", scenario.head_sha)
    proposed = propose_in_process(scenario.emu, tmp_path, scenario.run, scenario.workspace)
    assert proposed.outcome.status == "proposed", proposed.log
    assert side_branches(scenario) == {f"refs/heads/{side}": proposed.outcome.fix_sha}
    assert [p.head_ref for p in scenario.emu.pulls(REPO)] == [side]
    assert (
        f"The side branch `{side}` was left without a PR at {scenario.head_sha[:12]} "
        "(a commit ci-autofix did not make for this run); it now holds this fix."
    ) in proposed.log
