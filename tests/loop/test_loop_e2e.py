"""The bounded loop across runs, through the entrypoint as the runner starts it, against the emulator
and the Messages fake: fix → apply → CI fails on the fix → fix, three times; then the stuck report;
a human commit starts a new lineage and supersedes the suggestions for older commits; a green run on
an applied fix ends in `success`.

The failure is one that passes in the action's re-run and fails in CI (it depends on the CI
environment), so each suggestion is an unverified draft that a human applies, as in the issue."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from calc_scenario import API_KEY, EDITOR, messages_process
from emulator import BOT, GitHubEmulator, JobSpec, Run, StepSpec
from fakes.messages import reply, tool_use
from runner_sim import RunnerSim, RunResult
from sandbox_tools import sandbox_path
from testing.git import clone, commit, git, init_repo

from ci_autofix.deliver.stuck import MARKER, STUCK_LABEL

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
    def __init__(self, emu: GitHubEmulator, tmp: Path, files: dict[str, str] | None = None) -> None:
        self.emu, self.tmp, self.n = emu, tmp, 0
        self.source = tmp / "source"
        ci = "on: [push]\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - run: python check.py\n"
        init_repo(self.source, {**(files or {"check.py": CHECK}), CI: ci})
        git(self.source, "checkout", "-q", "-b", "feature")
        self.head = commit(self.source, {"notes.txt": "the cache\n"}, "Add notes")
        emu.create_repo(REPO, source=self.source)
        emu.add_workflow(REPO, CI, "CI")
        emu.add_user("alice", permission="write", email="alice@example.com")
        self.failing_pr = emu.add_pull(REPO, "feature", "main", "Cache notes", user="alice").number
        self.sim = RunnerSim(tmp / "sim").for_emulator(emu, REPO)

    def _dir(self, name: str) -> Path:
        self.n += 1
        path = self.tmp / f"{name}-{self.n}"
        path.mkdir()
        return path

    def ci(self, conclusion: str = "failure", workflow: str = CI) -> Run:
        """A run of `workflow` on the branch's head concluded `conclusion`."""
        step = "failure" if conclusion == "failure" else "success"
        return self.emu.add_workflow_run(
            REPO,
            workflow,
            "feature",
            self.head,
            conclusion,
            actor="alice",
            jobs=[JobSpec("test", conclusion, [StepSpec("Run python check.py", step)], log=LOG)],
        )

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
                inputs={"anthropic-api-key": API_KEY, **inputs},
                extra_env={"ANTHROPIC_BASE_URL": url, "PATH": sandbox_path()},
            )
        calls = len(record.read_text().splitlines()) if record.exists() else 0
        return result, calls

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
        self.head = result.outputs["head-sha"]
        return result

    def human_commit(self, files: dict[str, str]) -> None:
        git(self.source, "fetch", "-q", str(self.emu.bare_path(REPO)), "feature")
        git(self.source, "checkout", "-q", "--detach", "FETCH_HEAD")
        self.head = commit(self.source, files, "A human change")
        git(self.source, "push", "-q", str(self.emu.bare_path(REPO)), f"{self.head}:refs/heads/feature")

    def stuck_comments(self) -> list[str]:
        return [c for c in self.emu.comments(REPO, self.failing_pr) if c.startswith(MARKER)]


@pytest.mark.slow
def test_the_loop_is_bounded_reported_restarted_and_ends_in_success(
    github_emulator: GitHubEmulator, tmp_path: Path
) -> None:
    emu = github_emulator
    loop = Loop(emu, tmp_path)
    outcomes = []

    # fail → propose (n) → apply → fail on the fix, three times: attempts 1, 2, 3
    for attempt in (1, 2, 3):
        proposed, _ = loop.propose(loop.ci(), editing(attempt))
        assert proposed.outputs["status"] == "proposed", proposed.log
        assert proposed.outputs["attempt"] == str(attempt)
        outcomes.append(json.loads(proposed.outputs["result-json"]))
        loop.apply(proposed.outputs["pull-request"])

    # the fourth failure: the cap; no model call, a stuck report on the failing PR, its label
    failing = loop.ci()
    halted, calls = loop.propose(failing, editing(4))
    assert (halted.outputs["status"], halted.outputs["reason"]) == ("halted", "attempts-exhausted"), (
        halted.log
    )
    assert calls == 0
    (report,) = loop.stuck_comments()
    assert report.count("\n| ") == 4  # the header and a row per attempt
    assert "the widget cache is stale" in report
    assert f"/actions/runs/{failing.id}" in report
    assert STUCK_LABEL in emu.labels(REPO, loop.failing_pr)
    assert "stuck report" in halted.summary
    outcomes.append(json.loads(halted.outputs["result-json"]))

    # a re-run updates the report in place
    again, _ = loop.propose(failing, [])
    assert again.outputs["reason"] == "attempts-exhausted"
    assert len(loop.stuck_comments()) == 1

    # a human commit: a new lineage (attempt 1), the stuck label goes
    loop.human_commit({"notes.txt": "the cache, by hand\n"})
    first, _ = loop.propose(loop.ci(), editing(4))
    assert (first.outputs["status"], first.outputs["attempt"]) == ("proposed", "1"), first.log
    assert STUCK_LABEL not in emu.labels(REPO, loop.failing_pr)
    older = int(first.outputs["pull-request"])

    # another human commit fails: the suggestion for the older commit is superseded, not counted
    loop.human_commit({"notes.txt": "the cache, by hand, again\n"})
    newer, _ = loop.propose(loop.ci(), editing(4))
    assert (newer.outputs["status"], newer.outputs["attempt"]) == ("proposed", "1"), newer.log
    assert emu.pull(REPO, older).state == "closed"
    assert f"Superseded by #{newer.outputs['pull-request']}" in emu.comments(REPO, older)[-1]

    # applied, and CI is green on it: the loop ends in success
    loop.apply(newer.outputs["pull-request"])
    docs, _ = loop.propose(loop.ci("success", workflow=".github/workflows/docs.yml"), [])
    assert (docs.outputs["status"], docs.outputs["reason"]) == ("halted", "not-a-failure"), docs.log
    assert "made for a failure of `.github/workflows/ci.yml`" in docs.summary  # another workflow's green
    green, calls = loop.propose(loop.ci("success"), [])
    assert green.outputs["status"] == "success", green.log
    assert green.outputs["attempt"] == "1"
    assert green.outputs["run-url"].endswith(f"/actions/runs/{emu.runs[max(emu.runs)].id}")
    assert calls == 0
    applied_pr = int(newer.outputs["pull-request"])
    assert "CI passed on this fix" in emu.comments(REPO, applied_pr)[-1]
    outcomes.append(json.loads(green.outputs["result-json"]))
    print(json.dumps([{k: o[k] for k in ("status", "reason", "attempt")} for o in outcomes]))


# The unattended loop's failure reproduces here and each fix passes here, so every suggestion is
# verified and clean, and auto-apply dispatches apply for it; CI (which sets LOOP_CI) still fails
# on every fix. The check passes once `stamp.txt` names the commit it runs on: each fix stamps
# the commit it was made for, so the fix's own commit fails again.
STAMPED = (
    "import os\nimport subprocess\nimport sys\n\n"
    'head = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()\n'
    'stamp = open("stamp.txt").read().strip()\n'
    'sys.exit(1 if os.environ.get("LOOP_CI") or stamp != head else 0)\n'
)


def stamping(old: str, new: str) -> list[dict[str, Any]]:
    """The model's attempt: stamp the commit it is fixing, then finish."""
    edit = {"command": "str_replace", "path": "stamp.txt", "old_str": old, "new_str": new}
    done = {"summary": "stamp", "root_cause": "stamp.txt", "confidence": "high", "notes_left_as_is": []}
    return [reply(tool_use(EDITOR, edit)), reply(tool_use("finish", done))]


@pytest.mark.slow
def test_the_cap_holds_in_unattended_mode(github_emulator: GitHubEmulator, tmp_path: Path) -> None:
    """auto-apply with an apply environment without reviewers: fix → apply → CI fails → fix, by
    itself, until `max-attempts`; then the stuck report, and no further model call or dispatch."""
    emu = github_emulator
    loop = Loop(emu, tmp_path, {"check.py": STAMPED, "stamp.txt": "nothing yet\n"})
    emu.add_workflow(
        REPO, APPLY, "ci-autofix apply", dispatch=True, inputs={"pull-request": {"required": True}}
    )
    stamp = "nothing yet"
    for attempt in (1, 2, 3):
        made_for = loop.head
        proposed, _ = loop.propose(loop.ci(), stamping(stamp, made_for), **{"auto-apply": "true"})
        out = proposed.outputs
        assert (out["status"], out["attempt"], out["auto-apply"]) == (
            "proposed",
            str(attempt),
            "dispatched",
        ), proposed.summary
        assert json.loads(out["result-json"])["details"]["verification"] == "verified"
        [dispatch] = emu.dispatches[attempt - 1 :]
        assert (dispatch.workflow, dispatch.inputs) == (APPLY, {"pull-request": out["pull-request"]})
        loop.apply(dispatch.inputs["pull-request"], actor=BOT)  # the run the dispatch started
        stamp = made_for

    halted, calls = loop.propose(loop.ci(), stamping(stamp, loop.head), **{"auto-apply": "true"})
    assert (halted.outputs["status"], halted.outputs["reason"]) == ("halted", "attempts-exhausted"), (
        halted.log
    )
    assert calls == 0
    assert len(emu.dispatches) == 3
    (report,) = loop.stuck_comments()
    assert report.count("\n| ") == 4  # the header and a row per attempt
