"""Auto-apply, through the entrypoint as the runner starts it, against the emulator: propose
dispatches the apply workflow itself, exactly once, for a verified, policy-clean suggestion, and
never for an unverified one (whose PR says why; a flagged one: tests/security/test_ci_trigger.py); the apply run that dispatch starts
(its actor is ci-autofix's own identity) goes through apply's checks like any other, and a dispatch
by that identity is refused for a suggestion propose did not mark."""

from __future__ import annotations

from pathlib import Path

import pytest

from ci_autofix.deliver.auto_apply import MARKER, dispatch, why_not
from ci_autofix.deliver.report import RunContext
from ci_autofix.github import GitHub
from ci_autofix.ladder.evidence import OriginalTests, Verification
from ci_autofix.ladder.run import Proposal
from ci_autofix.policy.model import Finding, Verdict
from ci_autofix.redact import Redactor
from ci_autofix.state.marker import parse
from ci_autofix.state.provenance import AUTO_APPLY_CONTEXT
from tests.testing.emulator import BOT, GitHubEmulator
from tests.testing.format_scenario import REPO, Scenario, make_scenario
from tests.testing.propose import FAST
from tests.testing.runner_sim import RunResult

APPLY = ".github/workflows/ci-autofix-apply.yml"


def with_apply_workflow(emu: GitHubEmulator, *, dispatch: bool = True) -> None:
    emu.add_workflow(
        REPO, APPLY, "ci-autofix apply", dispatch=dispatch, inputs={"pull-request": {"required": True}}
    )


@pytest.fixture
def scenario(github_emulator: GitHubEmulator, tmp_path: Path) -> Scenario:
    scenario = make_scenario(github_emulator, tmp_path)
    with_apply_workflow(github_emulator)
    return scenario


def apply_as(scenario: Scenario, number: str, actor: str) -> RunResult:
    """The apply job a dispatch of the apply workflow starts, `actor` having dispatched it."""
    result: RunResult = scenario.dispatched(
        APPLY, {"pull-request": number}, actor=actor, inputs={"mode": "apply", "pull-request": number}
    )
    return result


def test_a_verified_clean_fix_is_dispatched_to_apply_once_and_applied(scenario: Scenario) -> None:
    emu = scenario.emu
    result = scenario.propose(**{"auto-apply": "true"})
    out = result.outputs
    assert (out["status"], out["auto-apply"]) == ("proposed", "dispatched"), result.summary
    number = out["pull-request"]
    [dispatch] = emu.dispatches
    assert (dispatch.workflow, dispatch.ref, dispatch.inputs) == (APPLY, "main", {"pull-request": number})
    [mark] = [s for s in emu.statuses(REPO, out["fix-sha"]) if s.context == AUTO_APPLY_CONTEXT]
    assert (mark.creator, mark.state, mark.description) == (
        BOT,
        "success",
        f"apply #{number}: verified, policy clean",
    )
    [said] = [c for c in emu.comments(REPO, int(number)) if c.startswith(MARKER)]
    assert "dispatched `ci-autofix-apply.yml`" in said and "/actions/runs/" in said
    assert "**Auto-apply is on**: the fix is verified and policy-clean" in emu.pull(REPO, int(number)).body

    again = scenario.propose(**{"auto-apply": "true"})  # a re-run of the same run
    assert again.outputs["reason"] == "already-proposed"
    assert len(emu.dispatches) == 1

    applied = apply_as(scenario, number, BOT)  # what the dispatch starts
    assert applied.outputs["status"] == "applied", applied.summary
    assert emu.branch_sha(REPO, "feature") == out["fix-sha"]


def test_without_auto_apply_a_dispatch_by_our_own_identity_is_refused(scenario: Scenario) -> None:
    result = scenario.propose()
    assert result.outputs["status"] == "proposed"
    assert scenario.emu.dispatches == []
    refused = apply_as(scenario, result.outputs["pull-request"], BOT)
    assert (refused.outputs["status"], refused.outputs["reason"]) == ("halted", "refused")
    assert "did not mark" in refused.summary
    assert scenario.emu.branch_sha(REPO, "feature") == scenario.head_sha


def test_an_auto_apply_status_made_by_anyone_else_is_not_believed(scenario: Scenario) -> None:
    emu = scenario.emu
    result = scenario.propose()
    number, fix = result.outputs["pull-request"], result.outputs["fix-sha"]
    emu.add_status(
        REPO,
        fix,
        context=AUTO_APPLY_CONTEXT,
        description=f"apply #{number}: verified, policy clean",
        creator="alice",
    )
    refused = apply_as(scenario, number, BOT)
    assert refused.outputs["reason"] == "refused", refused.summary
    assert emu.branch_sha(REPO, "feature") == scenario.head_sha


def test_a_mark_for_another_pull_request_is_not_this_ones(scenario: Scenario) -> None:
    emu = scenario.emu
    result = scenario.propose()
    number, fix = result.outputs["pull-request"], result.outputs["fix-sha"]
    emu.add_status(
        REPO, fix, context=AUTO_APPLY_CONTEXT, description=f"apply #{int(number) + 1}: verified, policy clean"
    )
    refused = apply_as(scenario, number, BOT)
    assert refused.outputs["reason"] == "refused", refused.summary


def test_an_unverified_fix_is_never_auto_applied_and_the_pr_says_why(scenario: Scenario) -> None:
    result = scenario.propose(**{"auto-apply": "true", "test-command": "no-such-checker --all"})
    out = result.outputs
    assert (out["status"], out["auto-apply"]) == ("proposed", "not-eligible"), result.summary
    assert scenario.emu.dispatches == []
    body = scenario.emu.pull(REPO, int(out["pull-request"])).body
    assert (
        "**Auto-apply is on, but this fix is not applied automatically**: it could not be verified here"
        in body
    )
    assert not [s for s in scenario.emu.statuses(REPO, out["fix-sha"]) if s.context == AUTO_APPLY_CONTEXT]


def test_when_the_dispatch_fails_the_pr_says_how_to_apply_by_hand(
    github_emulator: GitHubEmulator, tmp_path: Path
) -> None:
    scenario = make_scenario(github_emulator, tmp_path)
    with_apply_workflow(github_emulator, dispatch=False)  # the apply workflow lacks the trigger
    result = scenario.propose(**{"auto-apply": "true"})
    out = result.outputs
    assert (out["status"], out["auto-apply"]) == ("proposed", "failed"), result.summary
    [said] = [c for c in github_emulator.comments(REPO, int(out["pull-request"])) if c.startswith(MARKER)]
    assert "could not dispatch" in said and f"-f pull-request={out['pull-request']}" in said
    assert any("auto-apply could not dispatch" in w.message for w in result.annotations("warning"))


def _edit_record(scenario: Scenario, number: int, **changes: str) -> None:
    """Change the hidden record in the PR's body, as anyone with write access can."""
    pull = scenario.emu.pull(REPO, number)
    record = parse(pull.body)
    assert record is not None
    pull.body = pull.body.replace(record.render(), record.model_copy(update=changes).render())


def test_a_marked_pr_whose_record_was_edited_to_unverified_is_refused(scenario: Scenario) -> None:
    result = scenario.propose(**{"auto-apply": "true"})
    number = int(result.outputs["pull-request"])
    _edit_record(scenario, number, verification="unverified")
    refused = apply_as(scenario, str(number), BOT)
    assert refused.outputs["reason"] == "refused", refused.summary
    assert "only a verified, policy-clean fix" in " ".join(refused.summary.split())


@pytest.mark.parametrize("newer", ["failure", "another pull request"])
def test_only_the_newest_mark_of_our_identity_counts(scenario: Scenario, newer: str) -> None:
    result = scenario.propose(**{"auto-apply": "true"})
    number, fix = result.outputs["pull-request"], result.outputs["fix-sha"]
    state, description = (
        ("failure", f"apply #{number}: verified, policy clean")
        if newer == "failure"
        else ("success", f"apply #{int(number) + 1}: verified, policy clean")
    )
    scenario.emu.add_status(REPO, fix, context=AUTO_APPLY_CONTEXT, state=state, description=description)
    refused = apply_as(scenario, number, BOT)
    assert refused.outputs["reason"] == "refused", refused.summary


def test_a_second_run_reaching_the_same_pr_does_not_dispatch_again(scenario: Scenario) -> None:
    """Two propose jobs for one run (a dispatched attempt beside the workflow_run job) share a PR."""
    emu = scenario.emu
    result = scenario.propose(**{"auto-apply": "true"})
    number = int(result.outputs["pull-request"])
    gh = GitHub(token=emu.token, api_url=emu.api_url, repository=REPO, settings=FAST)
    record = parse(gh.get_pull(number).body)
    assert record is not None
    ctx = RunContext(REPO, emu.server_url, "CI", "", "feature", scenario.head_sha)
    again = dispatch(
        gh,
        gh.get_pull(number),
        record,
        ctx=ctx,
        apply_workflow="ci-autofix-apply.yml",
        trusted=BOT,
        redact=Redactor([]),
    )
    assert again.state == "dispatched" and "already" in again.note
    assert len(emu.dispatches) == 1


def test_why_not_names_each_reason() -> None:
    def proposal(
        outcome: str, *, findings: list[Finding] | None = None, tests_changed: bool = False
    ) -> Proposal:
        original = OriginalTests(["tests/test_a.py"], Verification("failed", ""), passed=False)
        verification = Verification(outcome, "", original_tests=original if tests_changed else None)  # type: ignore[arg-type]
        return Proposal("f" * 40, "a" * 40, "", [], [], verification, Verdict(findings or []))

    assert why_not(proposal("verified")) is None
    assert why_not(proposal("unverified")) == "it could not be verified here"
    flag = Finding("network-in-test", "flag", "a test opens a socket", path="tests/test_a.py")
    assert why_not(proposal("verified", findings=[flag])) == "the patch policy flagged it (`network-in-test`)"
    assert (
        why_not(proposal("verified", tests_changed=True))
        == "it passes only with its own changes to the tests"
    )
