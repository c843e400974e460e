"""Path globs, and the paths no fix may change: the files that decide what CI executes, with which
rights, who must review a change, and when a bot merges one.

A fix is code that CI will run, so it may change the code under test; it may not change what CI
itself is: which jobs run, with which permissions and secrets, which third-party actions or hooks
they fetch (hooks, submodules), who must review, which pull requests a merge bot merges on its own. Those files are
protected (`PROTECTED`, the one table of them): the sandbox refuses to write them, the fixers'
changes to them are put back, and the patch policy blocks a diff that touches them
(`protected-path`). The README's table of them is rendered from `PROTECTED`. The
`protected-paths` input adds globs to these; it never removes one.

Not protected, on purpose: build and dependency files a real fix may need (`Makefile`,
`pyproject.toml`, `package.json`, `tox.ini`, `noxfile.py`, `Dockerfile`, lockfiles). CI runs
them as it runs the tests; the patch policy flags dependency and lockfile changes, and a flagged
fix gets no CI before a human has reviewed it (`ci_trigger`).
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Protected:
    """A group of protected globs and what those files decide (the README's words)."""

    what: str
    globs: tuple[str, ...]


PROTECTED: tuple[Protected, ...] = (
    Protected(
        "GitHub's own: workflows, local actions, `CODEOWNERS`, Dependabot, and the merge bots' files kept there",
        (".github/**",),
    ),
    Protected(
        "a local action (`uses: ./path`), which can live anywhere", ("**/action.yml", "**/action.yaml")
    ),
    Protected(
        "who must review: `CODEOWNERS` where GitHub also reads it (the root, `docs/`; GitLab's is under "
        "`.gitlab/`), Prow's `OWNERS` files",
        ("CODEOWNERS", "docs/CODEOWNERS", "**/OWNERS", "**/OWNERS_ALIASES"),
    ),
    Protected(
        "merge bots and automerge rules: Mergify, Kodiak, bors, Renovate (Dependabot's is under `.github/`)",
        (
            ".mergify.yml",
            ".mergify/**",
            ".kodiak.toml",
            "bors.toml",
            "renovate.json",
            "renovate.json5",
            ".renovaterc",
            ".renovaterc.json",
            ".renovaterc.json5",
        ),
    ),
    Protected(
        "hooks that pre-commit (and pre-commit.ci, on every push) fetches and runs",
        (".pre-commit-config.yaml",),
    ),
    Protected(
        "which repositories CI clones as submodules (`actions/checkout` with `submodules:`, GitLab's "
        "`GIT_SUBMODULE_STRATEGY`), and builds and runs",
        (".gitmodules",),
    ),
    Protected(
        "other CI systems, which build every pushed branch (the suggestion branch too): GitLab (with its "
        "includes), CircleCI, Travis, Azure Pipelines, Buildkite, Jenkins, AppVeyor, Drone, Bitbucket "
        "Pipelines, Woodpecker, Cirrus, Codefresh, Semaphore, Google Cloud Build, AWS CodeBuild, Bitrise, "
        "Gitea and Forgejo Actions, Taskcluster, TeamCity (versioned settings)",
        (
            ".gitlab-ci.yml",
            ".gitlab/**",
            ".circleci/**",
            ".travis.yml",
            "azure-pipelines.yml",
            "azure-pipelines.yaml",
            ".azure-pipelines/**",
            ".buildkite/**",
            "buildkite.yml",
            "buildkite.yaml",
            "buildkite.json",
            "**/Jenkinsfile",
            "appveyor.yml",
            ".appveyor.yml",
            ".drone.yml",
            ".drone.yaml",
            ".drone.star",
            ".drone.jsonnet",
            "bitbucket-pipelines.yml",
            ".woodpecker.yml",
            ".woodpecker.yaml",
            ".woodpecker/**",
            ".cirrus.yml",
            ".cirrus.star",
            "codefresh.yml",
            "codefresh.yaml",
            ".codefresh/**",
            ".semaphore/**",
            "cloudbuild.yaml",
            "cloudbuild.yml",
            "cloudbuild.json",
            "buildspec.yml",
            "buildspec.yaml",
            "bitrise.yml",
            ".gitea/**",
            ".forgejo/**",
            ".taskcluster.yml",
            ".teamcity/**",
        ),
    ),
)
DEFAULT_PROTECTED: tuple[str, ...] = tuple(glob for group in PROTECTED for glob in group.globs)


def protected_markdown() -> str:
    """The table of `PROTECTED` for the README."""
    rows = ["| protected paths | what they decide |", "|---|---|"]
    rows += [f"| {', '.join(f'`{g}`' for g in group.globs)} | {group.what} |" for group in PROTECTED]
    return "\n".join(rows)


def protected_globs(extra: Iterable[str] = ()) -> tuple[str, ...]:
    """The default protected globs followed by `extra` (blank globs dropped), each once."""
    return tuple(dict.fromkeys((*DEFAULT_PROTECTED, *(g for g in extra if g.strip()))))


def path_matches(rel: str, pattern: str) -> bool:
    """Glob match where `**` spans directories and a trailing `/**` covers the directory itself."""
    pattern = pattern.strip().lstrip("/")
    if pattern.endswith("/**") and (rel == pattern[:-3] or rel.startswith(pattern[:-2])):
        return True
    regex = re.escape(pattern).replace(r"\*\*/", "(?:.*/)?").replace(r"\*\*", ".*").replace(r"\*", "[^/]*")
    regex = regex.replace(r"\?", "[^/]")
    return re.fullmatch(regex, rel) is not None or fnmatch.fnmatchcase(rel, pattern)
