"""The propose flow end to end: the real entrypoint as a subprocess, laid out like the runner,
against the GitHub emulator (real PyGithub over HTTP, real git over smart HTTP).

A sample repository's CI failed on `ruff format --check`; the log is the real tool's output.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ci_autofix.deliver.suggestion import UNVERIFIED_LABEL
from ci_autofix.state import provenance
from ci_autofix.state.marker import Suggestion, parse
from tests.testing.emulator import BOT, GitHubEmulator
from tests.testing.format_scenario import REPO, Scenario, make_scenario
from tests.testing.git import clone, commit, git


@pytest.fixture
def scenario(github_emulator: GitHubEmulator, tmp_path: Path) -> Scenario:
    return make_scenario(github_emulator, tmp_path)


def expected_fix(scenario: Scenario, tmp_path: Path) -> str:
    """What `ruff format` itself makes of the failing commit."""
    copy = tmp_path / "expected"
    clone(scenario.source, copy)
    git(copy, "checkout", "-q", "feature")
    subprocess.run(
        [str(Path(sys.executable).parent / "ruff"), "format", "."], cwd=copy, check=True, capture_output=True
    )
    return git(copy, "diff")


def test_a_formatting_failure_becomes_a_review_requested_suggestion(
    scenario: Scenario, tmp_path: Path
) -> None:
    result = scenario.propose()
    assert result.exit_code == 0, result.stderr + result.stdout
    out = result.outputs
    fix_branch = f"ci-autofix/feature/{scenario.run.id}"
    assert out["status"] == "proposed"
    assert out["fix-branch"] == fix_branch
    assert out["attempt"] == "1"

    emu = scenario.emu
    [pull] = emu.pulls(REPO)
    assert str(pull.number) == out["pull-request"]
    assert (pull.base_ref, pull.head_ref) == ("feature", fix_branch)
    assert "ruff format --check" in pull.title
    assert emu.review_requests(REPO, pull.number)[0] == ["alice"]
    assert "ci-autofix" in emu.labels(REPO, pull.number)
    assert not pull.draft  # verified: `ruff format --check .` passes on the fix

    # one commit on top of the failing commit, with its trailers, holding exactly ruff's fix
    fix_sha = emu.branch_sha(REPO, fix_branch)
    assert fix_sha == out["fix-sha"]
    bare = emu.bare_path(REPO)
    assert git(bare, "rev-parse", f"{fix_sha}^") == scenario.head_sha
    message = git(bare, "log", "-1", "--format=%B", fix_sha)
    assert f"Autofix-Run: {scenario.run.id}" in message
    assert "Autofix-Attempt: 1" in message
    assert f"Autofix-Base: {scenario.head_sha}" in message
    diff = git(bare, "diff", scenario.head_sha, fix_sha)
    assert diff.split("@@", 1)[1] == expected_fix(scenario, tmp_path).split("@@", 1)[1]

    # the failing branch is untouched until someone approves
    assert emu.branch_sha(REPO, "feature") == scenario.head_sha

    # the hidden record, the approval command, the summary
    record = parse(pull.body)
    assert record is not None
    assert (record.run_id, record.head_sha, record.fix_sha, record.attempt) == (
        scenario.run.id,
        scenario.head_sha,
        fix_sha,
        1,
    )
    assert f"gh workflow run ci-autofix-apply.yml --repo {REPO} -f pull-request={pull.number}" in pull.body
    assert "## ci-autofix: fix proposed" in result.summary
    assert "```diff" in result.summary
    assert "**Agent**" not in result.summary and out["cost-usd"] == ""  # the fixers alone: no agent ran
    printed = "\n".join(line for line in result.stdout.splitlines() if not line.startswith("::add-mask::"))
    assert result.stdout.count(f"::add-mask::{scenario.emu.token}") == 1
    assert scenario.emu.token not in printed + result.stderr + result.summary + pull.body


def test_a_fix_that_could_not_be_verified_is_a_draft(scenario: Scenario) -> None:
    """A `test-command` whose program is not installed here leaves the fix unverified: it is still
    proposed (require-verified is off), as a draft with the unverified label."""
    result = scenario.propose(**{"test-command": "no-such-checker --all"})
    assert result.outputs["status"] == "proposed", result.stderr + result.stdout
    [pull] = scenario.emu.pulls(REPO)
    assert pull.draft
    assert UNVERIFIED_LABEL in scenario.emu.labels(REPO, pull.number)
    assert "not installed" in pull.body


def test_a_rerun_of_the_same_run_changes_nothing(scenario: Scenario) -> None:
    first = scenario.propose()
    assert first.outputs["status"] == "proposed"
    refs_before = scenario.emu.refs(REPO)
    writes_before = len([r for r in scenario.emu.api_requests() if r.method != "GET"])
    second = scenario.propose()
    assert second.exit_code == 0
    assert second.outputs["status"] == "proposed"
    assert second.outputs["reason"] == "already-proposed"
    assert second.outputs["pull-request"] == first.outputs["pull-request"]
    assert scenario.emu.refs(REPO) == refs_before
    assert len(scenario.emu.pulls(REPO)) == 1
    assert len([r for r in scenario.emu.api_requests() if r.method != "GET"]) == writes_before


@pytest.mark.parametrize("conclusion", ["cancelled", "skipped"])
def test_not_a_failure_halts_before_any_api_call(scenario: Scenario, conclusion: str) -> None:
    result = scenario.propose(scenario.event(conclusion=conclusion))
    assert result.exit_code == 0
    assert (result.outputs["status"], result.outputs["reason"]) == ("halted", "not-a-failure")
    assert conclusion in result.summary
    assert scenario.emu.api_requests() == []


def test_a_green_run_on_a_human_commit_halts_and_writes_nothing(scenario: Scenario) -> None:
    result = scenario.propose(scenario.event(conclusion="success"))
    assert (result.outputs["status"], result.outputs["reason"]) == ("halted", "not-a-failure")
    assert "did not make" in result.summary
    assert [r for r in scenario.emu.api_requests() if r.method != "GET"] == []


def test_a_timed_out_run_halts_saying_why_even_with_the_removed_input(scenario: Scenario) -> None:
    # `fix-timed-out` is gone: an older workflow that still sets it gets the runner's warning and the halt
    result = scenario.propose(scenario.event(conclusion="timed_out"), **{"fix-timed-out": "true"})
    assert result.exit_code == 0
    assert (result.outputs["status"], result.outputs["reason"]) == ("halted", "not-a-failure")
    assert "does not fix job timeouts" in result.summary
    assert scenario.emu.api_requests() == []


def test_fork_pull_requests_halt_before_any_api_call(scenario: Scenario) -> None:
    event = scenario.event(event="pull_request")
    event["workflow_run"]["head_repository"] = {
        **event["workflow_run"]["head_repository"],
        "id": 424242,
        "full_name": "mallory/widgets",
    }
    result = scenario.propose(event)
    assert (result.outputs["status"], result.outputs["reason"]) == ("halted", "fork")
    assert scenario.emu.api_requests() == []


def test_our_own_side_branch_halts(scenario: Scenario) -> None:
    result = scenario.propose(scenario.event(head_branch="ci-autofix/feature/1"))
    assert (result.outputs["status"], result.outputs["reason"]) == ("halted", "own-branch")
    assert scenario.emu.api_requests() == []


def test_expired_logs_halt_and_leave_nothing_behind(scenario: Scenario) -> None:
    job = scenario.emu.runs[scenario.run.id].attempts[1][0]
    scenario.emu.expire_logs(job.id)
    result = scenario.propose()
    assert result.exit_code == 0
    assert (result.outputs["status"], result.outputs["reason"]) == ("halted", "logs-expired")
    assert set(scenario.emu.refs(REPO)) == {"refs/heads/main", "refs/heads/feature"}
    assert scenario.emu.pulls(REPO) == []


def test_fail_on_halt_fails_the_job(scenario: Scenario) -> None:
    result = scenario.propose(scenario.event(conclusion="cancelled"), **{"fail-on-halt": "true"})
    assert result.exit_code == 1
    assert result.outputs["status"] == "halted"


def test_a_missing_permission_names_the_entry_and_leaves_nothing_half_made(scenario: Scenario) -> None:
    scenario.emu.deny("POST", r"/pulls$", permission="pull_requests=write")
    result = scenario.propose()
    assert result.exit_code == 1
    assert "pull-requests: write" in result.stdout + result.stderr
    assert result.outputs["status"] == "error"
    assert set(scenario.emu.refs(REPO)) == {
        "refs/heads/main",
        "refs/heads/feature",
    }  # the side branch was removed again


def test_a_bad_input_names_the_input(scenario: Scenario) -> None:
    result = scenario.propose(**{"max-attempts": "lots"})
    assert result.exit_code == 1
    assert "max-attempts" in result.stdout + result.stderr
    assert result.outputs["status"] == "error"
    assert "max-attempts" in result.summary
    assert scenario.emu.api_requests() == []


def test_without_a_dispatch_trigger_the_pr_says_ci_will_not_run(scenario: Scenario) -> None:
    result = scenario.propose()
    [pull] = scenario.emu.pulls(REPO)
    assert "CI will not run on this fix" in pull.body
    assert "workflow_dispatch:" in pull.body and "ci-token" in pull.body
    assert scenario.emu.dispatches == []
    assert result.outputs["status"] == "proposed"


def test_ci_is_dispatched_on_the_fix_and_recorded(github_emulator: GitHubEmulator, tmp_path: Path) -> None:
    scenario = make_scenario(github_emulator, tmp_path, dispatch=True)
    result = scenario.propose()
    assert result.outputs["status"] == "proposed", result.summary
    [dispatch] = scenario.emu.dispatches
    assert (dispatch.workflow, dispatch.ref, dispatch.inputs) == (
        ".github/workflows/ci.yml",
        result.outputs["fix-branch"],
        {},
    )
    [pull] = scenario.emu.pulls(REPO)
    record = parse(pull.body)
    assert record is not None and record.ci_run_id is not None
    assert record.ci_run_url and record.ci_run_url in pull.body
    assert "workflow_dispatch" in pull.body


def test_with_a_ci_token_the_fix_is_pushed_with_it(scenario: Scenario) -> None:
    ci_token = "ghp_" + "c" * 36
    scenario.emu.add_token(ci_token, "ci-bot")
    scenario.emu.forbid_push(scenario.emu.token)  # only a push made with the ci-token can succeed
    result = scenario.propose(**{"ci-token": ci_token})
    assert result.outputs["status"] == "proposed", result.summary
    [pull] = scenario.emu.pulls(REPO)
    assert "pushed with the `ci-token`" in pull.body
    assert scenario.emu.dispatches == []
    assert ci_token not in result.stdout.replace(f"::add-mask::{ci_token}", "") + pull.body


def _earlier_suggestion(scenario: Scenario, made_for: str, workflow: str, *, vouched: bool = True) -> int:
    """An open suggestion as an earlier propose run left it: a fix commit on its side branch whose
    provenance status (by the bot) names `made_for` and a failed run of `workflow`."""
    emu = scenario.emu
    run = emu.add_workflow_run(REPO, workflow, "feature", made_for, "failure")
    branch = f"ci-autofix/feature/{run.id}"
    git(scenario.source, "checkout", "-q", "--detach", scenario.head_sha)
    fix = commit(scenario.source, {"fix.txt": f"{run.id}\n"}, f"Fix for run {run.id}")
    git(scenario.source, "push", "-q", str(emu.bare_path(REPO)), f"{fix}:refs/heads/{branch}")
    record = Suggestion(
        run_id=run.id, failing_branch="feature", head_sha=made_for, fix_sha=fix, fix_branch=branch
    )
    if vouched:
        emu.add_status(
            REPO, fix, context=provenance.CONTEXT, description=provenance.description(record), creator=BOT
        )
    pull = emu.add_pull(
        REPO,
        branch,
        "feature",
        "an earlier suggestion",
        body=f"earlier\n\n{record.render()}\n",
        labels=["ci-autofix"],
        user=BOT,
    )
    return pull.number


def test_attempts_are_read_back_from_github_and_bounded(scenario: Scenario) -> None:
    """Open suggestions that GitHub shows were made for the failing commit by other runs of the same
    workflow count; one for another workflow does not; one made for an older commit is stale: it
    does not count, and it is closed; a record that only claims the head (no status) counts for nothing."""
    ci, lint = ".github/workflows/ci.yml", ".github/workflows/lint.yml"
    first = _earlier_suggestion(scenario, scenario.head_sha, ci)
    second = _earlier_suggestion(scenario, scenario.head_sha, ci)
    other_workflow = _earlier_suggestion(scenario, scenario.head_sha, lint)
    claimed = _earlier_suggestion(scenario, scenario.head_sha, ci, vouched=False)
    older = _earlier_suggestion(scenario, "0" * 40, ci)
    result = scenario.propose(**{"max-attempts": "2"})
    assert (result.outputs["status"], result.outputs["reason"]) == ("halted", "attempts-exhausted"), (
        result.log
    )
    assert "2 attempt(s)" in result.summary
    states = {p.number: p.state for p in scenario.emu.pulls(REPO)}
    assert [states[n] for n in (first, second, other_workflow, claimed, older)] == ["open"] * 4 + ["closed"]
    assert "moved on" in scenario.emu.comments(REPO, older)[0]

    result = scenario.propose(**{"max-attempts": "3"})
    assert result.outputs["status"] == "proposed"
    assert result.outputs["attempt"] == "3"


RUNNER_LOST = (
    b"2026-11-30T10:00:00.0000000Z ##[group]Run ruff format --check .\n"
    b"2026-11-30T10:00:00.0000000Z ruff format --check .\n"
    b"2026-11-30T10:00:00.0000000Z ##[endgroup]\n"
    b"2026-11-30T10:20:01.0000000Z ##[error]The runner has received a shutdown signal. This can happen when the "
    b"runner service is stopped, or a manually started runner is canceled.\n"
    b"2026-11-30T10:20:01.0000000Z ##[error]The operation was canceled.\n"
)


@pytest.mark.parametrize("rerun", [False, True])
def test_an_infrastructure_failure_halts_and_may_rerun_once(scenario: Scenario, rerun: bool) -> None:
    scenario.emu.runs[scenario.run.id].attempts[1][0].log = RUNNER_LOST
    result = scenario.propose(**({"rerun-infra": "true"} if rerun else {}))
    assert (result.outputs["status"], result.outputs["reason"]) == ("halted", "infra")
    assert "runner" in result.summary
    assert len(scenario.emu.reruns) == (1 if rerun else 0)
    assert ("re-run once" in result.summary) is rerun
    assert set(scenario.emu.refs(REPO)) == {"refs/heads/main", "refs/heads/feature"}
