"""Issue 10, class 8: what CI runs, and when.

An agent (assume it is fully attacker-controlled through prompt injection) must not change what
CI executes (workflows, local actions, CODEOWNERS, dependabot, other CI systems' files), and CI
must not start on an unreviewed fix unless the patch policy found nothing in it: no push with
the `ci-token` (which starts CI) and no `workflow_dispatch` for a flagged fix.

End to end: the real entrypoint as a subprocess laid out like the runner (uid 1001 owns the
workspace and the runner's files, ci-autofix runs as root), the GitHub emulator, and a scripted
Claude session through the real anthropic SDK.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ci_autofix.policy import check_diff
from ci_autofix.sandbox import Sandbox, SandboxViolation
from ci_autofix.state.marker import parse
from ci_autofix.state.provenance import AUTO_APPLY_CONTEXT
from tests.security.ci_guards_helpers import (
    BRANCH,
    EXFILTRATION,
    REPO,
    SETUP_ACTION,
    edit,
    fix_and_finish,
    seed,
    tool_results,
)
from tests.testing.calc_scenario import CALC_TEST, messages_process
from tests.testing.emulator import BOT, GitHubEmulator
from tests.testing.git import git
from tests.testing.runner_sim import RunnerSim


def test_an_agent_edit_to_a_composite_action_ci_uses_is_refused_and_never_pushed(
    github_emulator: GitHubEmulator, tmp_path: Path
) -> None:
    emu = github_emulator
    calc = seed(emu, tmp_path)
    attack = edit(SETUP_ACTION, "      shell: bash\n", "      shell: bash\n" + EXFILTRATION)
    with messages_process([attack, *fix_and_finish()], tmp_path) as (url, record):
        result = calc.propose(url)

    assert calc.branches_holding("curl", SETUP_ACTION) == [], result.log
    refused = tool_results(record)[0]
    assert "protected" in refused and SETUP_ACTION in refused, refused
    # the real fix is still proposed, and it holds calc.py only
    assert result.outputs["status"] == "proposed", result.log
    fix_sha = result.outputs["fix-sha"]
    assert git(emu.bare_path(REPO), "diff", "--name-only", calc.head_sha, fix_sha) == "calc.py"


def spawning_test_and_fix() -> list[dict[str, object]]:
    """A fix that also adds a test starting a process: the policy flags it (`process-spawn-in-test`)."""
    spawn = edit(
        "tests/test_calc.py",
        CALC_TEST,
        CALC_TEST
        + '\n\ndef test_env():\n    import subprocess\n\n    subprocess.run(["true"], check=True)\n',
    )
    return [spawn, *fix_and_finish()]


@pytest.mark.parametrize("with_ci_token", [True, False], ids=["ci-token", "workflow_dispatch"])
def test_a_flagged_fix_is_delivered_but_ci_is_not_started_before_review(
    github_emulator: GitHubEmulator, tmp_path: Path, with_ci_token: bool
) -> None:
    emu = github_emulator
    calc = seed(emu, tmp_path)
    inputs = {}
    if with_ci_token:
        ci_token = "ghp_" + "c" * 36
        emu.add_token(ci_token, "ci-bot")
        # a push made with the ci-token would start CI: here it would also be refused, so the
        # suggestion is delivered only if the push was made with the GITHUB_TOKEN
        emu.forbid_push(ci_token)
        inputs["ci-token"] = ci_token
    with messages_process(spawning_test_and_fix(), tmp_path) as (url, _):
        result = calc.propose(url, **inputs)

    assert result.outputs["status"] == "proposed", result.log
    assert result.result_json()["details"]["policy"] == "flagged"
    assert emu.dispatches == []
    [pull] = emu.pulls(REPO)
    assert "CI was not started" in pull.body
    assert "process-spawn-in-test" in pull.body
    fix_branch = result.outputs["fix-branch"]
    assert f"--ref {fix_branch}" in pull.body  # how a human starts it after review
    assert emu.branch_sha(REPO, BRANCH) == calc.head_sha


APPLY = ".github/workflows/ci-autofix-apply.yml"


def test_a_flagged_fix_is_never_auto_applied_and_the_pr_says_why(
    github_emulator: GitHubEmulator, tmp_path: Path
) -> None:
    emu = github_emulator
    calc = seed(emu, tmp_path)
    emu.add_workflow(REPO, APPLY, "apply", dispatch=True)
    with messages_process(spawning_test_and_fix(), tmp_path) as (url, _):
        result = calc.propose(url, **{"auto-apply": "true"})
    out = result.outputs
    assert (out["status"], out["auto-apply"]) == ("proposed", "not-eligible"), result.log
    assert emu.dispatches == []  # neither CI nor apply
    body = emu.pull(REPO, int(out["pull-request"])).body
    assert "not applied automatically**: the patch policy flagged it (`process-spawn-in-test`)" in body

    # Any workflow of the repository acts as `github-actions[bot]` with GITHUB_TOKEN: one could forge
    # the mark and the record, and dispatch apply. The real diff is flagged: apply still refuses.
    number = int(out["pull-request"])
    emu.add_status(
        REPO,
        out["fix-sha"],
        context=AUTO_APPLY_CONTEXT,
        description=f"apply #{number}: verified, policy clean",
        creator=BOT,
    )
    pull = emu.pull(REPO, number)
    record = parse(pull.body)
    assert record is not None
    pull.body = pull.body.replace(
        record.render(), record.model_copy(update={"verification": "verified", "policy": "clean"}).render()
    )
    event = emu.workflow_dispatch_event(REPO, APPLY, "main", {"pull-request": str(number)}, sender=BOT)
    workspace = tmp_path / "apply"
    workspace.mkdir()
    applied = (
        RunnerSim(tmp_path / "apply-runner")
        .for_emulator(emu, REPO)
        .run(
            event_name="workflow_dispatch",
            event=event,
            workspace=workspace,
            inputs={"mode": "apply", "pull-request": str(number)},
            actor=BOT,
        )
    )
    assert applied.outputs["reason"] == "refused", applied.summary
    assert "an auto-apply is only for a fix with no finding at all" in " ".join(applied.summary.split())
    assert emu.branch_sha(REPO, BRANCH) == calc.head_sha


def test_a_clean_fix_still_gets_ci_dispatched(github_emulator: GitHubEmulator, tmp_path: Path) -> None:
    emu = github_emulator
    calc = seed(emu, tmp_path)
    with messages_process(fix_and_finish(), tmp_path) as (url, _):
        result = calc.propose(url)
    assert result.outputs["status"] == "proposed", result.log
    assert result.result_json()["details"]["policy"] == "clean"
    assert [(d.workflow, d.ref) for d in emu.dispatches] == [
        (".github/workflows/ci.yml", result.outputs["fix-branch"])
    ]


DECIDES_WHAT_CI_RUNS = [
    ".github/workflows/ci.yml",
    SETUP_ACTION,
    ".github/actions/setup/action.yaml",
    ".github/CODEOWNERS",
    ".github/dependabot.yml",
    "action.yml",
    "tools/lint/action.yaml",
    ".pre-commit-config.yaml",
    ".circleci/config.yml",
    ".gitlab-ci.yml",
]


@pytest.mark.parametrize("path", DECIDES_WHAT_CI_RUNS)
def test_files_that_decide_what_ci_runs_are_protected_by_default(tmp_path: Path, path: str) -> None:
    root = tmp_path
    with pytest.raises(SandboxViolation, match="protected"):
        Sandbox(root).resolve(path, write=True)
    diff = f"--- a/{path}\n+++ b/{path}\n@@ -1 +1,2 @@\n name: x\n+{EXFILTRATION.strip()}\n"
    verdict = check_diff(diff)
    assert verdict.blocked and "protected-path" in verdict.codes


@pytest.mark.parametrize("path", ["Makefile", "pyproject.toml", "package.json", "src/action.py"])
def test_files_a_fix_legitimately_needs_stay_writable(tmp_path: Path, path: str) -> None:
    Sandbox(tmp_path).resolve(path, write=True)


def test_the_protected_paths_input_adds_to_the_defaults(tmp_path: Path) -> None:
    sandbox = Sandbox(tmp_path, protected=["secrets/**"])
    for path in ("secrets/a.txt", SETUP_ACTION):
        with pytest.raises(SandboxViolation):
            sandbox.resolve(path, write=True)
