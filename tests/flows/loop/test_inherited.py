"""Inherited failures, through the entrypoint against the emulator and the Messages fake: the
PR's base branch is red with the same failure (the same failed step, the same failing test) in
its latest completed run of the workflow. The attempt halts `failing-on-base` before any model
request, naming the base and its run in `result-json` and the summary, and says so once on the
PR; a different failure on the base does not stop it, nor does the same failure in a file the PR
changed; `inherited-failures: fix-here` fixes it in the branch anyway, `fix-base` proposes the fix
against the base branch (for the base's own run, its head the parent, through the apply gate).
Whatever happens, the PR hears it once: one comment, edited by later runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.testing.emulator import GitHubEmulator, JobSpec, StepSpec
from tests.testing.git import git
from tests.testing.loop import CI, REPO, Loop, editing

FAILING = "import sys\n\n\nATTEMPTS = 0\n\nsys.exit(0 if ATTEMPTS else 1)\n"


def pytest_log(test: str) -> bytes:
    return (
        b"2026-12-01T10:00:00.0000000Z ##[group]Run python check.py\n"
        b"2026-12-01T10:00:00.0000000Z python check.py\n"
        b"2026-12-01T10:00:00.0000000Z ##[endgroup]\n"
        b"2026-12-01T10:00:01.0000000Z FAILED test_cache.py::" + test.encode() + b" - AssertionError: stale\n"
        b"2026-12-01T10:00:01.0000000Z ========================= 1 failed in 0.12s =========================\n"
        b"2026-12-01T10:00:01.0000000Z ##[error]Process completed with exit code 1.\n"
    )


def said(emu: GitHubEmulator, loop: Loop) -> list[str]:
    """What ci-autofix said on the failing PR about the inherited failure."""
    return [c for c in emu.comments(REPO, loop.failing_pr) if c.startswith("<!-- ci-autofix:failing-on-base")]


def base_fails(emu: GitHubEmulator, test: str) -> int:
    main = emu.branch_sha(REPO, "main")
    assert main is not None
    step = StepSpec("Run python check.py", "failure")
    run = emu.add_workflow_run(
        REPO, CI, "main", main, "failure", jobs=[JobSpec("test", "failure", [step], log=pytest_log(test))]
    )
    return run.id


@pytest.mark.slow
def test_a_failure_inherited_from_the_base_is_named_not_fixed(
    github_emulator: GitHubEmulator, tmp_path: Path
) -> None:
    emu = github_emulator
    loop = Loop(emu, tmp_path, {"check.py": FAILING})
    base_fails(emu, "test_gadget")  # an older run of main, another failure
    base_run = base_fails(emu, "test_widget")  # main's latest: the same failure
    run = loop.ci(log=pytest_log("test_widget"))

    halted, calls = loop.propose(run, editing(1))
    out = halted.outputs
    assert (out["status"], out["reason"], calls) == ("halted", "failing-on-base", 0), halted.log
    details = json.loads(out["result-json"])["details"]
    assert details["base_branch"] == "main" and details["base_run_url"].endswith(f"/actions/runs/{base_run}")
    assert f"run {base_run}" in halted.summary and "`main` fails the same way" in halted.summary
    assert said(emu, loop) == [said(emu, loop)[0]] and f"run {base_run}" in said(emu, loop)[0]

    again, calls = loop.propose(run, editing(1))  # a re-run: said once
    assert (again.outputs["reason"], calls) == ("failing-on-base", 0)
    assert len(said(emu, loop)) == 1

    # another commit of the PR, and a newer failed run of main: still one comment, naming the newer run
    loop.human_commit({"notes.txt": "the cache, again\n"})
    newer_base = base_fails(emu, "test_widget")
    latest = loop.ci(log=pytest_log("test_widget"))
    later, calls = loop.propose(latest, editing(1))
    assert (later.outputs["reason"], calls) == ("failing-on-base", 0), later.log
    assert len(said(emu, loop)) == 1 and f"run {newer_base}" in said(emu, loop)[0]

    fixed, calls = loop.propose(latest, editing(1), **{"inherited-failures": "fix-here"})
    assert (fixed.outputs["status"], calls) == ("proposed", 2), fixed.log


@pytest.mark.slow
def test_another_failure_on_the_base_is_not_inherited(
    github_emulator: GitHubEmulator, tmp_path: Path
) -> None:
    emu = github_emulator
    loop = Loop(emu, tmp_path, {"check.py": FAILING})
    base_fails(emu, "test_gadget")
    proposed, calls = loop.propose(loop.ci(log=pytest_log("test_widget")), editing(1))
    assert (proposed.outputs["status"], calls) == ("proposed", 2), proposed.log


@pytest.mark.slow
def test_the_same_failure_in_a_file_the_pr_changed_is_the_prs(
    github_emulator: GitHubEmulator, tmp_path: Path
) -> None:
    emu = github_emulator
    loop = Loop(emu, tmp_path, {"check.py": FAILING})
    loop.human_commit({"test_cache.py": "def test_widget():\n    assert False, 'stale'\n"})
    base_fails(emu, "test_widget")  # main fails the same way, but the PR changed test_cache.py
    proposed, calls = loop.propose(loop.ci(log=pytest_log("test_widget")), editing(1))
    assert (proposed.outputs["status"], calls) == ("proposed", 2), proposed.log
    assert not [c for c in emu.comments(REPO, loop.failing_pr) if "ci-autofix:failing-on-base" in c]


@pytest.mark.slow
def test_fix_base_proposes_the_fix_against_the_base_branch(
    github_emulator: GitHubEmulator, tmp_path: Path
) -> None:
    emu = github_emulator
    loop = Loop(emu, tmp_path, {"check.py": FAILING}, inputs={"inherited-failures": "fix-base"})
    main = emu.branch_sha(REPO, "main")
    base_run = base_fails(emu, "test_widget")
    feature = emu.branch_sha(REPO, "feature")

    proposed, calls = loop.propose(loop.ci(log=pytest_log("test_widget")), editing(1))
    out = proposed.outputs
    assert (out["status"], calls) == ("proposed", 2), proposed.log
    assert out["fix-branch"] == f"ci-autofix/main/{base_run}"
    suggestion = emu.pull(REPO, int(out["pull-request"]))
    assert (suggestion.base_ref, suggestion.head_ref) == ("main", out["fix-branch"])
    assert git(emu.bare_path(REPO), "rev-parse", f"{out['fix-sha']}^") == main  # the base's head
    details = json.loads(out["result-json"])["details"]
    assert (details["proposed_against"], details["base_run_id"]) == ("main", base_run)
    assert "proposed its fix against `main`" in proposed.summary
    assert len(said(emu, loop)) == 1 and f"/pull/{suggestion.number}" in said(emu, loop)[0]
    assert emu.branch_sha(REPO, "feature") == feature  # nothing reached the PR's branch

    # the PR's next commit fails the same way: the base's suggestion stands, nothing is spent
    loop.human_commit({"notes.txt": "the cache, again\n"})
    again, calls = loop.propose(loop.ci(log=pytest_log("test_widget")), editing(1))
    assert (again.outputs["reason"], again.outputs["pull-request"], calls) == (
        "already-proposed",
        out["pull-request"],
        0,
    ), again.log
    assert len(said(emu, loop)) == 1
    assert len([p for p in emu.pulls(REPO) if p.state == "open"]) == 2

    # the same apply gate: the fix lands on main, leased on main's head
    loop.apply(out["pull-request"])
    assert emu.branch_sha(REPO, "main") == out["fix-sha"]


@pytest.mark.slow
def test_fix_base_halts_when_the_base_is_not_let_in(github_emulator: GitHubEmulator, tmp_path: Path) -> None:
    emu = github_emulator
    inputs = {"inherited-failures": "fix-base", "exclude-branches": "main"}
    loop = Loop(emu, tmp_path, {"check.py": FAILING}, inputs=inputs)
    base_run = base_fails(emu, "test_widget")
    halted, calls = loop.propose(loop.ci(log=pytest_log("test_widget")), editing(1))
    out = halted.outputs
    assert (out["status"], out["reason"], calls) == ("halted", "branch-filtered", 0), halted.log
    details = json.loads(out["result-json"])["details"]
    assert (details["base_branch"], details["base_run_id"]) == ("main", base_run)
    assert not [p for p in emu.pulls(REPO) if p.head_ref.startswith("ci-autofix/")]
