"""The attempt a person asked for: a `workflow_dispatch` of the propose workflow with `run-id`,
through the entrypoint as the runner starts it, against the emulator. Everything in the dispatch
is untrusted; a bad or stale `run-id` is refused before any git call, and writes nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ci_autofix.errors import Halt
from ci_autofix.flows import access
from ci_autofix.flows.dispatch import fetch_failing, own_workflow_file
from ci_autofix.flows.event import WorkflowRunEvent
from ci_autofix.settings import Settings
from tests.testing.emulator import BOT, GitHubEmulator
from tests.testing.format_scenario import PROPOSE_WORKFLOW, PROPOSE_YML, REPO, Scenario, make_scenario
from tests.testing.git import commit, git, init_repo
from tests.testing.runner_sim import RunResult

PROPOSE = PROPOSE_WORKFLOW


@pytest.fixture
def scenario(github_emulator: GitHubEmulator, tmp_path: Path) -> Scenario:
    scenario = make_scenario(github_emulator, tmp_path, files={PROPOSE: PROPOSE_YML})
    github_emulator.add_workflow(REPO, PROPOSE, "ci-autofix propose", dispatch=True, inputs={"run-id": {}})
    github_emulator.add_user("mallory", permission="read")
    return scenario


def dispatch(scenario: Scenario, run_id: str, *, actor: str = "alice", **inputs: str) -> RunResult:
    """The propose workflow dispatched with `-f run-id=<run_id>`: no checkout, as in the example."""
    result: RunResult = scenario.dispatched(
        PROPOSE, {"run-id": run_id}, actor=actor, inputs={"run-id": run_id, **inputs}
    )
    return result


def written(emu: GitHubEmulator) -> list[Any]:
    """Every git request and every API call that changes something."""
    return [r for r in emu.requests if r.server == "git" or (r.server == "api" and r.method != "GET")]


def test_a_dispatch_with_run_id_proposes_a_fix_for_that_run(scenario: Scenario) -> None:
    result = dispatch(scenario, str(scenario.run.id), **{"ask-first": "true"})  # the dispatch is the answer
    assert result.exit_code == 0, result.log
    out = result.outputs
    assert (out["status"], out["attempt"]) == ("proposed", "1"), result.summary
    assert out["fix-branch"] == f"ci-autofix/feature/{scenario.run.id}"
    assert out["run-url"].endswith(f"/actions/runs/{scenario.run.id}")
    [pull] = scenario.emu.pulls(REPO)
    assert (pull.base_ref, pull.head_ref) == ("feature", out["fix-branch"])
    fix = scenario.emu.branch_sha(REPO, out["fix-branch"])
    assert git(scenario.source, "fetch", "-q", str(scenario.emu.bare_path(REPO)), fix) == ""
    assert git(scenario.source, "rev-parse", f"{fix}^") == scenario.head_sha  # on the failing commit


@pytest.mark.parametrize(
    "value", ["12abc", "--upload-pack=touch pwned", "1 2", "-1", "0x10", "1_000", "１２", "1" * 20, "0"]
)
def test_a_run_id_that_is_not_a_number_is_an_error_before_any_call(scenario: Scenario, value: str) -> None:
    result = dispatch(scenario, value)
    assert result.exit_code == 1
    assert result.outputs["status"] == "error"
    assert "`run-id`" in result.summary and "workflow run id" in result.summary
    assert "Traceback" not in result.log
    assert not [r for r in scenario.emu.requests if r.server in ("api", "git")]


def _another_repository(emu: GitHubEmulator, tmp_path: Path) -> int:
    source = tmp_path / "other-source"
    init_repo(source, {"README.md": "other\n"})
    emu.create_repo("acme/other", source=source)
    sha = git(source, "rev-parse", "HEAD")
    return emu.add_workflow_run("acme/other", ".github/workflows/ci.yml", "main", sha, "failure").id


def _fork_run(scenario: Scenario) -> int:
    return scenario.emu.add_workflow_run(
        REPO,
        ".github/workflows/ci.yml",
        "feature",
        scenario.head_sha,
        "failure",
        event="pull_request",
        fork="mallory/widgets",
        jobs=scenario.jobs,
    ).id


def _green_run(scenario: Scenario) -> int:
    return scenario.emu.add_workflow_run(
        REPO, ".github/workflows/ci.yml", "feature", scenario.head_sha, "success", jobs=[]
    ).id


def _running_run(scenario: Scenario) -> int:
    return scenario.emu.add_workflow_run(
        REPO, ".github/workflows/ci.yml", "feature", scenario.head_sha, None, status="in_progress"
    ).id


def _moved_branch(scenario: Scenario) -> int:
    commit(scenario.source, {"notes.txt": "newer\n"}, "A newer commit")
    git(scenario.source, "push", "-q", str(scenario.emu.bare_path(REPO)), "feature")
    return scenario.run.id


@pytest.mark.parametrize(
    ("case", "actor", "reason", "words"),
    [
        ("another repository's run", "alice", "refused", "is not a workflow run of acme/widgets"),
        ("a successful run", "alice", "not-a-failure", "concluded `success`, not `failure`"),
        ("a run still in progress", "alice", "not-a-failure", "has not completed"),
        ("a fork's run", "alice", "fork", "comes from a fork (mallory/widgets)"),
        ("a moved branch", "alice", "branch-moved", "dispatch the propose workflow again"),
        (
            "a dispatcher without write access",
            "mallory",
            "refused",
            "@mallory started this run but has `read`",
        ),
        ("ci-autofix's own identity", BOT, "refused", "an attempt is started by a person"),
    ],
)
def test_a_stale_or_malicious_dispatch_is_refused_before_any_git_call(
    scenario: Scenario, tmp_path: Path, case: str, actor: str, reason: str, words: str
) -> None:
    run_id = {
        "another repository's run": lambda: _another_repository(scenario.emu, tmp_path),
        "a successful run": lambda: _green_run(scenario),
        "a run still in progress": lambda: _running_run(scenario),
        "a fork's run": lambda: _fork_run(scenario),
        "a moved branch": lambda: _moved_branch(scenario),
    }.get(case, lambda: scenario.run.id)()
    refs = scenario.emu.refs(REPO)
    result = dispatch(scenario, str(run_id), actor=actor, **{"fail-on-halt": "true"})
    assert (result.outputs["status"], result.outputs["reason"]) == ("halted", reason), result.log
    assert result.exit_code == 1  # fail-on-halt: a refused attempt shows red
    assert words.lower() in " ".join(result.summary.split()).lower(), result.summary
    assert written(scenario.emu) == []
    assert scenario.emu.refs(REPO) == refs


def test_git_is_asked_again_whether_the_branch_is_at_the_run(scenario: Scenario, tmp_path: Path) -> None:
    """Between the API's answer and the fetch, the branch may move: git's view is checked too."""
    emu = scenario.emu
    newer = commit(scenario.source, {"notes.txt": "newer\n"}, "A newer commit")
    git(scenario.source, "push", "-q", str(emu.bare_path(REPO)), "feature")
    event = WorkflowRunEvent.model_validate(emu.workflow_run_event(scenario.run))
    settings = Settings(
        github_token=emu.token, repository=REPO, api_url=emu.api_url, server_url=emu.server_url
    )
    root = tmp_path / "failing"
    root.mkdir()
    with pytest.raises(Halt) as halted:
        fetch_failing(root, settings, event)
    assert f"moved on to {newer[:12]}" in halted.value.message
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    at_head = event.model_copy(update={"workflow_run": event.run.model_copy(update={"head_sha": newer})})
    assert fetch_failing(fresh, settings, at_head).rev_parse("refs/ci-autofix/failing") == newer


def test_a_run_of_a_workflow_the_propose_workflow_does_not_watch_is_refused(scenario: Scenario) -> None:
    """A deploy's failure, or the apply workflow's own red run: not what an attempt is for."""
    deploy = scenario.emu.add_workflow(REPO, ".github/workflows/deploy.yml", "Deploy")
    run = scenario.emu.add_workflow_run(
        REPO, deploy.path, "feature", scenario.head_sha, "failure", jobs=scenario.jobs
    )
    result = dispatch(scenario, str(run.id))
    assert (result.outputs["status"], result.outputs["reason"]) == ("halted", "refused"), result.log
    assert "does not watch (`CI`)" in " ".join(result.summary.split())
    assert written(scenario.emu) == []


def test_without_the_list_of_watched_workflows_a_dispatch_is_an_error(
    github_emulator: GitHubEmulator, tmp_path: Path
) -> None:
    scenario = make_scenario(github_emulator, tmp_path, files={PROPOSE: "on: workflow_dispatch\n"})
    result = dispatch(scenario, str(scenario.run.id))
    assert (result.exit_code, result.outputs["status"]) == (1, "error")
    assert "does not list the workflows it watches" in result.summary
    assert written(github_emulator) == []


def test_a_propose_dispatch_that_names_no_run_is_an_error(scenario: Scenario) -> None:
    workspace = scenario.workspace.parent / "no-run-id"
    workspace.mkdir()
    event = scenario.emu.workflow_dispatch_event(REPO, PROPOSE, "main", {}, sender="alice")
    result = scenario.sim.run(
        event_name="workflow_dispatch", event=event, workspace=workspace, inputs={"mode": "propose"}
    )
    assert (result.exit_code, result.outputs["status"]) == (1, "error")
    assert "without naming the failed run" in result.summary and "-f run-id=" in result.summary
    assert not [r for r in scenario.emu.requests if r.server in ("api", "git")]


def test_a_dispatch_payload_of_another_repository_is_an_error(scenario: Scenario) -> None:
    workspace = scenario.workspace.parent / "other-repo"
    workspace.mkdir()
    event = scenario.emu.workflow_dispatch_event(REPO, PROPOSE, "main", {"run-id": str(scenario.run.id)})
    event["repository"] = {**event["repository"], "full_name": "mallory/widgets"}
    result = scenario.sim.run(
        event_name="workflow_dispatch",
        event=event,
        workspace=workspace,
        inputs={"run-id": str(scenario.run.id)},
    )
    assert result.outputs["status"] == "error", result.log
    assert "payload is for mallory/widgets" in result.summary
    assert written(scenario.emu) == []


@pytest.mark.parametrize(
    ("ref", "name"),
    [
        ("acme/widgets/.github/workflows/propose.yaml@refs/heads/main", "propose.yaml"),
        ("acme/widgets/.github/workflows/-x.yml@refs/heads/main", "ci-autofix-propose.yml"),
        ("acme/widgets/.github/workflows/a b.yml@refs/heads/main", "ci-autofix-propose.yml"),
        ("", "ci-autofix-propose.yml"),
    ],
)
def test_the_propose_workflow_file_is_ours_only_when_plain(ref: str, name: str) -> None:
    assert own_workflow_file(Settings(workflow_ref=ref)) == name


def test_our_bot_identity_compares_without_case_and_a_pat_user_is_a_person() -> None:
    assert access.is_own_bot("GitHub-Actions[bot]", Settings())
    assert not access.is_own_bot("alice", Settings(trusted_author="alice"))
    assert access.is_own_bot("acme-fixer[bot]", Settings(trusted_author="Acme-Fixer[bot]"))
