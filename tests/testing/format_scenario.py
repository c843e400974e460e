"""A repository whose CI failed on `ruff format --check` (`world`'s failed run of alice), seeded
in the GitHub emulator with the real tool's log and a checkout of the failing commit, as the
propose job sees it. Shared by the
propose and apply end-to-end tests."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from ci_autofix.cli.demo import job_log
from tests.testing.emulator import GitHubEmulator, JobSpec, Run
from tests.testing.runner_sim import RunnerSim
from tests.testing.world import alice_repository, failing_job

REPO = "acme/widgets"
CLEAN = {
    "pyproject.toml": '[project]\nname = "widgets"\nversion = "0.1.0"\n\n[tool.ruff]\nline-length = 100\n',
    "widgets.py": "def area(width, height):\n    return width * height\n",
    ".github/workflows/ci.yml": "name: CI\non: [push]\njobs:\n  lint:\n    runs-on: ubuntu-latest\n"
    "    steps:\n      - uses: actions/checkout@v4\n      - run: ruff format --check .\n",
}
BROKEN = {
    "widgets.py": "def area(width,height):\n    return width*height\n\n\n\ndef perimeter( w, h ):\n    return 2*(w+h)\n"
}


@dataclass
class Scenario:
    emu: GitHubEmulator
    sim: RunnerSim
    run: Run
    head_sha: str
    workspace: Path
    source: Path
    jobs: list[JobSpec]

    def env(self) -> dict[str, str]:
        """The variables each run gets: a PATH with this interpreter's tools (ruff)."""
        return {"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin"}

    def event(self, **changes: Any) -> dict[str, Any]:
        event = self.emu.workflow_run_event(self.run)
        event["workflow_run"].update(changes)
        return event

    def dispatched(
        self, workflow: str, dispatch_inputs: dict[str, str], *, actor: str, inputs: dict[str, str]
    ) -> Any:
        """The job a `workflow_dispatch` of `workflow` by `actor` starts, with no checkout (the
        dispatch jobs of the example workflows have none); `inputs` are the action's."""
        workspace = self.workspace.parent / f"dispatch-{len(self.emu.requests)}"
        workspace.mkdir()
        event = self.emu.workflow_dispatch_event(REPO, workflow, "main", dispatch_inputs, sender=actor)
        return self.sim.run(
            event_name="workflow_dispatch",
            event=event,
            workspace=workspace,
            inputs=inputs,
            actor=actor,
            extra_env=self.env(),
        )

    def propose(self, event: dict[str, Any] | None = None, **inputs: str) -> Any:
        return self.sim.run(
            event_name="workflow_run",
            event=event or self.event(),
            inputs=inputs,
            workspace=self.workspace,
            extra_env=self.env(),
        )


# The propose workflow as the runner simulation names it (GITHUB_WORKFLOW_REF), with both triggers.
PROPOSE_WORKFLOW = ".github/workflows/ci-autofix.yml"
PROPOSE_YML = (
    "on:\n  workflow_run: {workflows: [CI], types: [completed]}\n"
    "  workflow_dispatch:\n    inputs:\n      run-id: {required: true}\n"
)
DISPATCHABLE_CI = CLEAN[".github/workflows/ci.yml"].replace(
    "on: [push]", "on:\n  push:\n  workflow_dispatch:"
)


def make_scenario(
    emu: GitHubEmulator, tmp_path: Path, *, dispatch: bool = False, files: dict[str, str] | None = None
) -> Scenario:
    """`dispatch`: CI has a `workflow_dispatch` trigger; `files`: more files on the default branch."""
    ci = {".github/workflows/ci.yml": DISPATCHABLE_CI} if dispatch else {}
    main = {**CLEAN, **ci, **(files or {})}
    repository = alice_repository(
        emu, tmp_path / "source", REPO, main, "feature", BROKEN, "Add perimeter", dispatch=dispatch
    )
    log = job_log(repository.source, ["ruff format --check ."])
    jobs = [failing_job("ruff format --check .", log, job="lint", set_up_job=True)]
    run = repository.run(jobs)
    workspace = repository.checkout(tmp_path / "workspace")  # the failing commit, detached
    sim = RunnerSim(tmp_path).for_emulator(emu, REPO)
    return Scenario(emu, sim, run, repository.head_sha, workspace, repository.source, jobs)


def in_process(emu: GitHubEmulator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Scenario:
    """The scenario for a propose run in this process (`propose.propose_in_process`): ruff is this
    interpreter's (as in the image) and HOME is the test's own."""
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}:/usr/bin:/bin")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return make_scenario(emu, tmp_path)
