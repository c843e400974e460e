"""The bounded loop's world, shared by the loop's end-to-end suites: alice's repository on the
GitHub emulator (`world`) with a failing PR, CI runs with one failing job, and the propose and apply jobs run
through the entrypoint as the runner starts them, against the Messages fake as a process.

The default failure passes in the action's re-run and fails in CI (it depends on an environment
variable CI sets): it does not reproduce here."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ci_autofix.deliver.stuck import MARKER
from tests.testing.calc_scenario import API_KEY, EDITOR, messages_process
from tests.testing.emulator import GitHubEmulator, Run
from tests.testing.fakes.messages import reply, tool_use
from tests.testing.git import clone, commit, git
from tests.testing.runner_sim import RunnerSim, RunResult
from tests.testing.sandbox_tools import sandbox_path
from tests.testing.world import alice_repository, failing_job

REPO = "acme/cache"
CI = ".github/workflows/ci.yml"
APPLY = ".github/workflows/ci-autofix-apply.yml"
CHECK = (
    "import os\nimport sys\n\nATTEMPTS = 0\n"
    "# CI sets LOOP_CI; the action's re-run does not, so the failure never reproduces there\n"
    'sys.exit(1 if os.environ.get("LOOP_CI") else 0)\n'
)
LOG = (
    b"2026-12-01T10:00:00.0000000Z ##[group]Run python check.py\n"
    b"2026-12-01T10:00:00.0000000Z python check.py\n"
    b"2026-12-01T10:00:00.0000000Z ##[endgroup]\n"
    b'2026-12-01T10:00:01.0000000Z   File "check.py", line 6, in <module>\n'
    b"2026-12-01T10:00:01.0000000Z AssertionError: the widget cache is stale\n"
    b"2026-12-01T10:00:01.0000000Z ##[error]Process completed with exit code 1.\n"
)


def editing(attempt: int) -> list[dict[str, Any]]:
    """The model's attempt `attempt`: one edit, then finish."""
    edit = {
        "command": "str_replace",
        "path": "check.py",
        "old_str": f"ATTEMPTS = {attempt - 1}",
        "new_str": f"ATTEMPTS = {attempt}",
    }
    done = {
        "summary": f"attempt {attempt}",
        "root_cause": "check.py:4 counts the cache",
        "confidence": "low",
        "notes_left_as_is": [],
    }
    return [reply(tool_use(EDITOR, edit)), reply(tool_use("finish", done))]


class Loop:
    def __init__(
        self,
        emu: GitHubEmulator,
        tmp: Path,
        files: dict[str, str] | None = None,
        on: str = "[push]",
        inputs: dict[str, str] | None = None,
    ) -> None:
        """`inputs`: the propose job's inputs on every run (a run's own come on top)."""
        self.emu, self.tmp, self.n = emu, tmp, 0
        self.inputs = inputs or {}
        self.requests: list[dict[str, Any]] = []  # what the last propose job sent the model
        ci = f"on: {on}\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - run: python check.py\n"
        main = {**(files or {"check.py": CHECK}), CI: ci}
        self.repository = alice_repository(
            emu,
            tmp / "source",
            REPO,
            main,
            "feature",
            {"notes.txt": "the cache\n"},
            "Add notes",
            dispatch=False,
        )
        self.source = self.repository.source
        self.failing_pr = emu.add_pull(REPO, "feature", "main", "Cache notes", user="alice").number
        self.sim = RunnerSim(tmp / "sim").for_emulator(emu, REPO)

    @property
    def head(self) -> str:
        """The branch's head: alice's commit, or the fix the last apply pushed."""
        return self.repository.head_sha

    def _dir(self, name: str) -> Path:
        self.n += 1
        path = self.tmp / f"{name}-{self.n}"
        path.mkdir()
        return path

    def ci(
        self, conclusion: str = "failure", workflow: str = CI, event: str = "push", log: bytes = LOG
    ) -> Run:
        """A run of `workflow` (triggered by `event`) on the branch's head concluded `conclusion`."""
        return self.repository.failed_run(
            "python check.py", log, conclusion=conclusion, event=event, workflow=workflow
        )

    def rerun(self, run: Run) -> Run:
        """A person re-runs the failed job of `run`: its next attempt fails the same way."""
        self.emu.add_attempt(run, "failure", [failing_job("python check.py", LOG)])
        return run

    def propose(self, run: Run, turns: list[dict[str, Any]], **inputs: str) -> tuple[RunResult, int]:
        """The propose job for `run`; returns its result and how many requests reached the model."""
        workdir = self._dir("propose")
        workspace = workdir / "workspace"
        if run.conclusion == "failure":  # the example workflow checks out only for failures
            clone(self.emu.bare_path(REPO), workspace, detach=run.head_sha)
        else:
            workspace.mkdir()
        with messages_process(turns, workdir) as (url, record):
            result = self.sim.run(
                event_name="workflow_run",
                event=self.emu.workflow_run_event(run),
                workspace=workspace,
                inputs={"anthropic-api-key": API_KEY, **self.inputs, **inputs},
                extra_env={"ANTHROPIC_BASE_URL": url, "PATH": sandbox_path()},
            )
        self.requests = (
            [json.loads(line)["body"] for line in record.read_text().splitlines()] if record.exists() else []
        )
        return result, len(self.requests)

    def apply(self, number: str, actor: str = "alice") -> RunResult:
        """The apply job for suggestion #number, dispatched by `actor`."""
        workspace = self._dir("apply")
        event = self.emu.workflow_dispatch_event(REPO, APPLY, "main", {"pull-request": number}, sender=actor)
        result = self.sim.run(
            event_name="workflow_dispatch",
            event=event,
            workspace=workspace,
            inputs={"pull-request": number},
            actor=actor,
        )
        assert result.outputs["status"] == "applied", result.log
        self.repository.head_sha = result.outputs["head-sha"]
        return result

    def human_commit(self, files: dict[str, str]) -> None:
        git(self.source, "fetch", "-q", str(self.emu.bare_path(REPO)), "feature")
        git(self.source, "checkout", "-q", "--detach", "FETCH_HEAD")
        self.repository.head_sha = commit(self.source, files, "A human change")
        git(self.source, "push", "-q", str(self.emu.bare_path(REPO)), f"{self.head}:refs/heads/feature")

    def stuck_comments(self) -> list[str]:
        return [c for c in self.emu.comments(REPO, self.failing_pr) if c.startswith(MARKER)]
