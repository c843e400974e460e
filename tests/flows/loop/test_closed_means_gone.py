"""Closed means gone, through the entrypoint against the emulator: the next run for a failing
branch deletes the suggestion branches no open PR stands on (a suggestion a person closed, one
left without its PR; a re-run of the very run whose suggestion a person closed, too), and leaves
alone a branch under the prefix that ci-autofix did not make."""

from __future__ import annotations

from pathlib import Path

import pytest

from ci_autofix.state import provenance
from tests.testing.emulator import BOT, GitHubEmulator
from tests.testing.loop import REPO, Loop, editing


def suggestion_branches(emu: GitHubEmulator) -> set[str]:
    return {name.removeprefix("refs/heads/") for name in emu.refs(REPO, "refs/heads/ci-autofix/")}


@pytest.mark.slow
def test_the_next_run_deletes_branches_without_an_open_pr(
    github_emulator: GitHubEmulator, tmp_path: Path
) -> None:
    emu = github_emulator
    loop = Loop(emu, tmp_path, inputs={"attempt-unreproduced": "true"})
    first, _ = loop.propose(loop.ci(), editing(1))
    closed_branch = first.outputs["fix-branch"]
    emu.pull(REPO, int(first.outputs["pull-request"])).state = "closed"  # a person closes it
    # a delivery that stopped before its PR left our fix; a person pushed a branch under the prefix
    bare = emu.bare_path(REPO)
    emu.repos[REPO].bare.update_ref("refs/heads/ci-autofix/feature/1", first.outputs["fix-sha"])
    emu.add_status(
        REPO,
        first.outputs["fix-sha"],
        context=provenance.CONTEXT,
        description=f"fix of {loop.head} for run 1",
        creator=BOT,
    )
    emu.repos[REPO].bare.update_ref("refs/heads/ci-autofix/feature/mine", loop.head)
    assert bare.exists() and {closed_branch, "ci-autofix/feature/1"} <= suggestion_branches(emu)

    second, _ = loop.propose(loop.ci(), editing(1))
    assert (second.outputs["status"], second.outputs["attempt"]) == ("proposed", "1"), second.log
    assert suggestion_branches(emu) == {second.outputs["fix-branch"], "ci-autofix/feature/mine"}
    assert "deleted 2 suggestion branch(es) without an open PR" in second.log


@pytest.mark.slow
def test_a_re_run_of_the_run_whose_suggestion_was_closed_deletes_its_branch(
    github_emulator: GitHubEmulator, tmp_path: Path
) -> None:
    emu = github_emulator
    loop = Loop(emu, tmp_path, inputs={"attempt-unreproduced": "true"})
    run = loop.ci()
    first, _ = loop.propose(run, editing(1))
    emu.pull(REPO, int(first.outputs["pull-request"])).state = "closed"  # a person closes it

    again, calls = loop.propose(run, [])  # the same run once more: nothing to adopt
    assert (again.outputs["reason"], calls) == ("already-proposed", 0), again.log
    assert suggestion_branches(emu) == set()
