"""A stateful GitHub emulator for tests: REST under `/api/v3`, git smart HTTP, signed log blobs.

    emu = GitHubEmulator.start(tmp_path / "gh")
    emu.create_repo("acme/widgets", source=local_repo)
    run = emu.add_workflow_run("acme/widgets", ".github/workflows/ci.yml", "main", sha, "failure",
                               jobs=[JobSpec("test", "failure", [StepSpec("Run pytest", "failure")], log=b"...")])

Use it through the real PyGithub with `base_url=emu.api_url` and `emu.token`; push with git to
`emu.clone_url(repo)`. In pytest, the `github_emulator` fixture (`emulator.fixtures`) starts one per
test and fails the test if any request or response broke GitHub's REST description.
"""

from tests.testing.emulator.core import BOT, DEFAULT_TOKEN, GitHubEmulator
from tests.testing.emulator.state import Job, JobSpec, Pull, RequestRecord, Run, Status, StepSpec, Workflow

__all__ = [
    "BOT",
    "DEFAULT_TOKEN",
    "GitHubEmulator",
    "Job",
    "JobSpec",
    "Pull",
    "RequestRecord",
    "Run",
    "Status",
    "StepSpec",
    "Workflow",
]
