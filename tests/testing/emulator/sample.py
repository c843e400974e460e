"""A failing CI run in the emulator, seeded from a local repository (made with `testing.git`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tests.testing.emulator.state import JobSpec, Run, StepSpec
from tests.testing.git import ALICE, clone

if TYPE_CHECKING:
    from pathlib import Path

    from tests.testing.emulator.core import GitHubEmulator


def publish_failure(
    emu: GitHubEmulator,
    repo: str,
    source: Path,
    branch: str,
    head_sha: str,
    command: str,
    log: bytes,
    workspace: Path,
    *,
    job: str = "test",
) -> Run:
    """`source` as `repo` in the emulator with alice as a writer, a CI run of
    `.github/workflows/ci.yml` whose one job failed at the step `Run <command>` with `log`, and
    `workspace` as the propose job's checkout: the failing commit, detached."""
    emu.create_repo(repo, source=source)
    emu.add_user("alice", permission="write", email=ALICE[1])
    run = emu.add_workflow_run(
        repo,
        ".github/workflows/ci.yml",
        branch,
        head_sha,
        "failure",
        jobs=[JobSpec(job, "failure", [StepSpec(f"Run {command}", "failure")], log=log)],
    )
    clone(source, workspace, detach=head_sha)
    return run
