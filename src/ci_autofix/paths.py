"""Path globs, and the paths no fix may change: the files that decide what CI executes, and with which rights.

A fix is code that CI will run, so it may change the code under test; it may not change what CI
itself is: which jobs run, with which permissions and secrets, which third-party actions or hooks
they fetch, who must review. Those files are protected: the sandbox refuses to write them, the
fixers' changes to them are put back, and the patch policy blocks a diff that touches them
(`protected-path`). The `protected-paths` input adds globs to these; it never removes one.

Not protected, on purpose: build and dependency files a real fix may need (`Makefile`,
`pyproject.toml`, `package.json`, `tox.ini`, `noxfile.py`, `Dockerfile`, lockfiles). CI runs
them as it runs the tests; the patch policy flags dependency and lockfile changes, and a flagged
fix gets no CI before a human has reviewed it (`ci_trigger`).
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable

DEFAULT_PROTECTED: tuple[str, ...] = (
    # GitHub's own: workflows, local actions, CODEOWNERS, dependabot, issue and PR templates
    ".github/**",
    # a local action (`uses: ./path`) can live anywhere in the repository
    "**/action.yml",
    "**/action.yaml",
    # hooks that pre-commit (and pre-commit.ci, on every push) fetches and runs
    ".pre-commit-config.yaml",
    # other CI systems that build every pushed branch, the suggestion branch included
    ".circleci/**",
    ".gitlab-ci.yml",
    ".travis.yml",
    "azure-pipelines.yml",
    ".buildkite/**",
    "Jenkinsfile",
    "appveyor.yml",
    ".appveyor.yml",
)


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
