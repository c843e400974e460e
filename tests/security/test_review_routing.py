"""Issue 27, item 3: the files that decide who must review, and when a merge bot merges, are
protected like the files that decide what CI runs.

`check-diff` called clean a rewrite of `CODEOWNERS` at the root or in `docs/` (GitHub reads those
when `.github/CODEOWNERS` is absent), a `.mergify.yml` rule that merges every PR, `.drone.yml`
and `bitbucket-pipelines.yml`, and the agent could write all of them. A clean verdict starts CI
on the unreviewed fix and, with auto-apply, dispatches it.

One table (`paths.PROTECTED`) serves the sandbox (the agent cannot write a protected path), the
fixers (their changes to one are put back) and the patch policy (`protected-path` blocks a diff
touching one). Each row below is a path that table must cover; the end-to-end test runs the
entrypoint laid out like the runner, with a scripted model that tries to write two of them.
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

ROUTES_REVIEWS_OR_RUNS_CI = [
    # who must review: GitHub reads .github/, the root, then docs/; GitLab reads .gitlab/ too; Prow's OWNERS
    "CODEOWNERS",
    "docs/CODEOWNERS",
    ".github/CODEOWNERS",
    ".gitlab/CODEOWNERS",
    "OWNERS",
    "pkg/api/OWNERS",
    "OWNERS_ALIASES",
    # merge bots and automerge settings
    ".mergify.yml",
    ".mergify/config.yml",
    ".github/mergify.yml",
    ".kodiak.toml",
    ".github/.kodiak.toml",
    "bors.toml",
    "renovate.json",
    "renovate.json5",
    ".renovaterc",
    ".renovaterc.json",
    ".renovaterc.json5",
    ".github/renovate.json",
    ".github/renovate.json5",
    ".gitlab/renovate.json",
    ".gitlab/renovate.json5",
    ".github/dependabot.yml",
    # other CI systems that build every pushed branch
    ".drone.yml",
    ".drone.yaml",
    ".drone.star",
    ".drone.jsonnet",
    "bitbucket-pipelines.yml",
    ".gitlab-ci.yml",
    ".gitlab/ci/build.yml",
    ".buildkite/pipeline.yml",
    "buildkite.yml",
    ".circleci/config.yml",
    "Jenkinsfile",
    "ci/Jenkinsfile",
    "azure-pipelines.yml",
    "azure-pipelines.yaml",
    ".azure-pipelines/build.yml",
    ".travis.yml",
    "appveyor.yml",
    ".appveyor.yml",
    ".woodpecker.yml",
    ".woodpecker.yaml",
    ".woodpecker/test.yml",
    ".cirrus.yml",
    ".cirrus.star",
    "codefresh.yml",
    ".codefresh/build.yml",
    ".semaphore/semaphore.yml",
    "cloudbuild.yaml",
    "cloudbuild.yml",
    "cloudbuild.json",
    "buildspec.yml",
    "bitrise.yml",
    ".gitea/workflows/ci.yml",
    ".forgejo/workflows/ci.yml",
    # as before
    ".github/workflows/ci.yml",
    "tools/lint/action.yml",
    ".pre-commit-config.yaml",
]


@pytest.mark.parametrize("path", ROUTES_REVIEWS_OR_RUNS_CI)
def test_check_diff_blocks_a_change_to_a_file_that_routes_reviews_merges_or_ci(
    path: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert_check_diff_blocks_as_protected(
        f"--- a/{path}\n+++ b/{path}\n@@ -1 +1,2 @@\n keep: this\n+merge: everything\n",
        path,
        tmp_path,
        capsys,
    )


@pytest.mark.parametrize("path", ROUTES_REVIEWS_OR_RUNS_CI)
def test_the_sandbox_refuses_to_write_a_file_that_routes_reviews_merges_or_ci(
    tmp_path: Path, path: str
) -> None:
    with pytest.raises(SandboxViolation, match="protected"):
        Sandbox(tmp_path).resolve(path, write=True)


@pytest.mark.parametrize(
    "path",
    ["docs/guide.md", "src/owners.py", "renovate_helpers.py", "tests/test_bors.py", "jenkins_notes.txt"],
)
def test_look_alike_paths_stay_writable(tmp_path: Path, path: str) -> None:
    Sandbox(tmp_path).resolve(path, write=True)


MERGE_EVERYTHING = (
    "pull_request_rules:\n  - name: merge everything\n    conditions: []\n    actions:\n      merge:\n"
    "        method: merge\n"
)


def test_an_agent_writing_codeowners_and_a_mergify_rule_is_refused_and_nothing_reaches_a_branch(
    github_emulator: GitHubEmulator, tmp_path: Path
) -> None:
    emu = github_emulator
    calc = seed(emu, tmp_path)
    attacks = [
        reply(tool_use(EDITOR, {"command": "create", "path": "CODEOWNERS", "file_text": "* @attacker\n"})),
        reply(tool_use(EDITOR, {"command": "create", "path": ".mergify.yml", "file_text": MERGE_EVERYTHING})),
    ]
    with messages_process([*attacks, *fix_and_finish()], tmp_path) as (url, record):
        result = calc.propose(url)

    codeowners, mergify = tool_results(record)[:2]
    assert "protected" in codeowners and "CODEOWNERS" in codeowners, codeowners
    assert "protected" in mergify and ".mergify.yml" in mergify, mergify
    assert calc.branches_holding("@attacker", "CODEOWNERS") == [], result.log
    assert calc.branches_holding("merge everything", ".mergify.yml") == [], result.log
    # the real fix is still proposed, and it holds calc.py only
    assert result.outputs["status"] == "proposed", result.log
    changed = git(emu.bare_path(REPO), "diff", "--name-only", calc.head_sha, result.outputs["fix-sha"])
    assert changed == "calc.py"
