"""The whole loop in the emulator: a failed run, a proposal, a dispatch of the apply workflow (the
approval happens in GitHub before the job starts), the fix on the branch. Both halves run through
the real entrypoint as the runner starts it."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from ci_autofix.state.marker import parse
from tests.testing.emulator import GitHubEmulator
from tests.testing.format_scenario import REPO, make_scenario
from tests.testing.git import git
from tests.testing.runner_sim import RunnerSim


@pytest.mark.slow
def test_failed_run_to_proposal_to_approved_apply(github_emulator: GitHubEmulator, tmp_path: Path) -> None:
    emu = github_emulator
    scenario = make_scenario(emu, tmp_path)
    run, head_sha, checkout = scenario.run, scenario.head_sha, scenario.workspace
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
    assert (
        fixed
        == "def area(width, height):\n    return width * height\n\n\ndef perimeter(w, h):\n    return 2 * (w + h)"
    )
