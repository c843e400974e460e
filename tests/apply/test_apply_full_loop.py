"""The whole loop in the emulator: a failed run, a proposal, a dispatch of the apply workflow (the
approval happens in GitHub before the job starts), the fix on the branch. Both halves run through
the real entrypoint as the runner starts it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from emulator import GitHubEmulator, JobSpec, StepSpec
from emulator.sample import ALICE, commit, git, init_repo
from runner_sim import RunnerSim

from ci_autofix.demo import job_log
from ci_autofix.marker import parse

REPO = "acme/widgets"
CI = "name: CI\non: [push]\njobs:\n  lint:\n    runs-on: ubuntu-latest\n    steps:\n      - run: ruff format --check .\n"
CLEAN = {
    "pyproject.toml": '[project]\nname = "widgets"\nversion = "0.1.0"\n\n[tool.ruff]\nline-length = 100\n',
    "widgets.py": "def area(width, height):\n    return width * height\n",
    ".github/workflows/ci.yml": CI,
}
BROKEN = {"widgets.py": "def area(width,height):\n    return width*height\n"}


@pytest.mark.slow
def test_failed_run_to_proposal_to_approved_apply(github_emulator: GitHubEmulator, tmp_path: Path) -> None:
    emu = github_emulator
    source = tmp_path / "source"
    init_repo(source, CLEAN)
    git(source, "checkout", "-q", "-b", "feature")
    head_sha = commit(source, BROKEN, "Add area")
    emu.create_repo(REPO, source=source)
    emu.add_user("alice", permission="write", email=ALICE[1])
    run = emu.add_workflow_run(
        REPO,
        ".github/workflows/ci.yml",
        "feature",
        head_sha,
        "failure",
        actor="alice",
        jobs=[
            JobSpec(
                "lint",
                "failure",
                [StepSpec("Run ruff format --check .", "failure")],
                log=job_log(source, ["ruff format --check ."]),
            )
        ],
    )
    checkout = tmp_path / "checkout"  # the propose job checks out the failing commit
    subprocess.run(["git", "clone", "-q", str(source), str(checkout)], check=True)
    git(checkout, "checkout", "-q", "--detach", head_sha)
    tools = {"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin"}
    sim = RunnerSim(tmp_path / "sim").for_emulator(emu, REPO)

    proposed = sim.run(
        event_name="workflow_run", event=emu.workflow_run_event(run), workspace=checkout, extra_env=tools
    )
    assert proposed.exit_code == 0, proposed.log
    assert proposed.outputs["status"] == "proposed", proposed.log
    number = proposed.outputs["pull-request"]
    record = parse(emu.pull(REPO, int(number)).body)
    assert record is not None
    assert emu.branch_sha(REPO, "feature") == head_sha  # nothing lands before the approval

    empty = tmp_path / "apply-workspace"  # the apply job has no checkout
    empty.mkdir()
    applied = sim.run(
        event_name="workflow_dispatch",
        event=emu.workflow_dispatch_event(
            REPO, ".github/workflows/ci-autofix-apply.yml", "main", {"pull-request": number}
        ),
        workspace=empty,
        inputs={"pull-request": number},
        extra_env=tools,
    )
    assert applied.exit_code == 0, applied.log
    assert applied.outputs["status"] == "applied", applied.log
    assert applied.outputs["head-sha"] == record.fix_sha
    assert emu.branch_sha(REPO, "feature") == record.fix_sha
    assert git(emu.bare_path(REPO), "rev-parse", f"{record.fix_sha}^") == head_sha
    assert emu.branch_sha(REPO, record.fix_branch) is None
    assert emu.pull(REPO, int(number)).state == "closed"
    fixed = git(emu.bare_path(REPO), "show", f"{record.fix_sha}:widgets.py")
    assert fixed == CLEAN["widgets.py"].strip()
