"""A delivery that stopped half-way is finished by the next run for the same failed run, not
answered `already-proposed` (issue: a PR left without its label, which apply then refuses)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ci_autofix.deliver.report import APPLY_PLACEHOLDER
from tests.testing.emulator import GitHubEmulator
from tests.testing.format_scenario import REPO, Scenario, make_scenario
from tests.testing.git import git


@pytest.fixture
def scenario(github_emulator: GitHubEmulator, tmp_path: Path) -> Scenario:
    return make_scenario(github_emulator, tmp_path)


def test_a_delivery_whose_labelling_failed_is_finished_by_the_rerun(scenario: Scenario) -> None:
    emu = scenario.emu
    emu.add_user("bob", permission="write")
    emu.fail(
        "POST", r"/issues/\d+/labels", 403, {"message": "Resource not accessible by integration"}, times=None
    )
    first = scenario.propose(reviewers="bob")
    assert first.outputs["status"] == "error", first.log
    assert "issues: write" in first.log
    (pull,) = emu.pulls(REPO)
    assert pull.labels == [] and APPLY_PLACEHOLDER in pull.body
    assert pull.requested_reviewers == []

    emu.clear_faults()  # the permission is added, the job re-run
    second = scenario.propose(reviewers="bob")
    assert (second.outputs["status"], second.outputs["reason"]) == ("proposed", "repaired"), second.log
    assert second.outputs["pull-request"] == str(pull.number)
    pull = emu.pull(REPO, pull.number)
    assert pull.labels == ["ci-autofix"]
    assert pull.requested_reviewers == ["alice", "bob"]  # the author of the failing change, and the input
    assert APPLY_PLACEHOLDER not in pull.body and f"-f pull-request={pull.number}" in pull.body
    assert len(emu.pulls(REPO)) == 1

    writes = len([r for r in emu.api_requests() if r.method != "GET"])
    third = scenario.propose(reviewers="bob")
    assert (third.outputs["status"], third.outputs["reason"]) == ("proposed", "already-proposed")
    assert len([r for r in emu.api_requests() if r.method != "GET"]) == writes


def test_a_side_branch_left_without_a_pr_is_adopted(scenario: Scenario) -> None:
    emu = scenario.emu
    emu.fail("POST", r"/pulls$", 422, {"message": "Validation Failed"}, times=None)
    emu.fail("DELETE", r"/git/refs/", 403, {"message": "Resource not accessible by integration"}, times=None)
    first = scenario.propose()
    assert first.outputs["status"] == "error", first.log
    branch = f"ci-autofix/feature/{scenario.run.id}"
    left = emu.branch_sha(REPO, branch)
    assert left is not None and emu.pulls(REPO) == []

    emu.clear_faults()
    second = scenario.propose()
    assert second.outputs["status"] == "proposed", second.log
    assert "this run's earlier fix" in second.log
    (pull,) = emu.pulls(REPO)
    assert emu.branch_sha(REPO, branch) == second.outputs["fix-sha"] == pull.head_sha


def test_a_side_branch_someone_else_pushed_is_replaced_and_named(scenario: Scenario) -> None:
    emu = scenario.emu
    branch = f"ci-autofix/feature/{scenario.run.id}"
    git(scenario.source, "push", "-q", str(emu.bare_path(REPO)), f"{scenario.head_sha}:refs/heads/{branch}")
    result = scenario.propose()
    assert result.outputs["status"] == "proposed", result.log
    assert f"at {scenario.head_sha[:12]} (a commit ci-autofix did not make for this run)" in result.log
    assert emu.branch_sha(REPO, branch) == result.outputs["fix-sha"]


def test_someone_elses_pr_from_this_runs_side_branch_is_an_error_not_ours(scenario: Scenario) -> None:
    emu = scenario.emu
    branch = f"ci-autofix/feature/{scenario.run.id}"
    git(scenario.source, "push", "-q", str(emu.bare_path(REPO)), f"{scenario.head_sha}:refs/heads/{branch}")
    pull = emu.add_pull(REPO, branch, "feature", "looks like a suggestion", user="alice")
    result = scenario.propose()
    assert (result.outputs["status"], result.outputs["pull-request"]) == ("error", ""), result.log
    assert f"#{pull.number} is open from `{branch}`" in result.log and "@alice opened it" in result.log
    assert len(emu.pulls(REPO)) == 1
