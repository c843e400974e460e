"""The failed run of alice, built in one place: alice's repository on the GitHub emulator (main,
then a branch with the commit that broke CI), a CI run of `.github/workflows/ci.yml` whose one
job failed at the step that runs the failing command with its log, and the checkout a job gets.

Every scenario world of the tests starts here (`format_scenario`, `calc_scenario`, the loop's
`Loop`, the security suites), and adds only what is its own: the files, the command, the model's
turns, the jobs run through the entrypoint.

    repository = alice_repository(emu, tmp_path / "source", "acme/calc", MAIN, "fix", BROKEN, "Break add")
    run = repository.failed_run("python -m pytest -q", job_log(repository.source, [PYTEST]))
    workspace = repository.checkout(tmp_path / "workspace")
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tests.testing.emulator import GitHubEmulator, JobSpec, Run, StepSpec
from tests.testing.git import ALICE, Files, clone, commit, git, init_repo

CI = ".github/workflows/ci.yml"


@dataclass
class Repository:
    """alice's repository on the emulator: `source` is her local clone, with `branch` checked out
    at `head_sha` (the commit CI fails on)."""

    emu: GitHubEmulator
    repo: str
    source: Path
    branch: str
    head_sha: str

    def failed_run(
        self,
        command: str,
        log: bytes,
        *,
        job: str = "test",
        set_up_job: bool = False,
        conclusion: str = "failure",
        event: str = "push",
        workflow: str = CI,
        actor: str = "alice",
    ) -> Run:
        """A run of `workflow` on the branch's head whose one job (`failing_job`) ended
        `conclusion`."""
        jobs = [failing_job(command, log, job=job, set_up_job=set_up_job, conclusion=conclusion)]
        return self.run(jobs, conclusion, event=event, workflow=workflow, actor=actor)

    def run(
        self,
        jobs: list[JobSpec],
        conclusion: str = "failure",
        *,
        event: str = "push",
        workflow: str = CI,
        actor: str = "alice",
    ) -> Run:
        """A run of `workflow` on the branch's head with `jobs`, triggered by `actor`'s `event`."""
        return self.emu.add_workflow_run(
            self.repo,
            workflow,
            self.branch,
            self.head_sha,
            conclusion,
            event=event,
            actor=actor,
            jobs=jobs,
        )

    def commit(self, files: Files, message: str) -> str:
        """A further commit of alice's on the branch, pushed to the emulator: the new head."""
        self.head_sha = commit(self.source, files, message)
        git(self.source, "push", "-q", str(self.emu.bare_path(self.repo)), self.branch)
        return self.head_sha

    def checkout(self, workspace: Path, sha: str | None = None) -> Path:
        """What actions/checkout leaves in `workspace`: `sha` (the failing head unless given),
        detached."""
        return clone(self.source, workspace, detach=sha or self.head_sha)


def failing_job(
    command: str, log: bytes, *, job: str = "test", set_up_job: bool = False, conclusion: str = "failure"
) -> JobSpec:
    """A job `job` that ended `conclusion` at the step `Run <command>` (after a `Set up job` step
    when `set_up_job`), with `log`."""
    steps = [StepSpec("Set up job", "success")] if set_up_job else []
    steps.append(StepSpec(f"Run {command}", "failure" if conclusion == "failure" else "success"))
    return JobSpec(job, conclusion, steps, log=log)


def alice_repository(
    emu: GitHubEmulator,
    source: Path,
    repo: str,
    main: Files,
    branch: str,
    change: Files,
    message: str,
    *,
    dispatch: bool | None = None,
) -> Repository:
    """`main` committed on main and `change` on `branch` in a new local repository at `source`,
    published as `repo` with alice as a writer. `dispatch`: register CI as a workflow with (True)
    or without (False) a `workflow_dispatch` trigger before the first run (None: the first run
    registers it, without one)."""
    init_repo(source, main)
    git(source, "checkout", "-q", "-b", branch)
    head_sha = commit(source, change, message)
    emu.create_repo(repo, source=source)
    if dispatch is not None:
        emu.add_workflow(repo, CI, "CI", dispatch=dispatch)
    emu.add_user("alice", permission="write", email=ALICE.email)
    return Repository(emu, repo, source, branch, head_sha)
