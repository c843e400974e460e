"""Lockfile and dependency-pin changes (flag): a fix that changes what gets installed needs a look."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from pathlib import PurePosixPath

from ci_autofix.policy.checks.limits import Limits
from ci_autofix.policy.diff import FileDiff, Line
from ci_autofix.policy.model import Finding
from ci_autofix.policy.table import finding

LOCKFILES = frozenset(
    {
        "poetry.lock",
        "uv.lock",
        "Pipfile.lock",
        "pdm.lock",
        "pylock.toml",
        "package-lock.json",
        "npm-shrinkwrap.json",
        "yarn.lock",
        "pnpm-lock.yaml",
        "bun.lock",
        "bun.lockb",
        "Cargo.lock",
        "go.sum",
        "Gemfile.lock",
        "composer.lock",
        "gradle.lockfile",
        "packages.lock.json",
        "mix.lock",
        "pubspec.lock",
        "Podfile.lock",
        "flake.lock",
        "conda-lock.yml",
    }
)
_PY_SPEC = re.compile(r"""^\s*["']?[A-Za-z0-9][\w.\-]*(?:\[[\w,\s.\-]*\])?\s*(?:===?|>=|<=|~=|!=|>|<|@)""")
_REQUIREMENTS_NAME = re.compile(r"^(?:.*requirements.*\.(?:txt|in)|constraints.*\.txt)$")
_TOML_DEP = re.compile(r"""^\s*["']?[\w.\-]+["']?\s*=\s*(?:["'][\^~=<>!*\d]|\{.*\bversion\b)""")
_TOML_SKIP = re.compile(r"^\s*(?:version|edition|rust-version|requires-python|name)\s*=")
_JSON_DEP = re.compile(
    r"""^\s*"(@?[\w.\-/]+)"\s*:\s*"(?:[\^~<>=*]|\d|latest|next|npm:|file:|link:|git|https?:|"""
    r"""workspace:|github:)"""
)
_GO_MOD = re.compile(
    r"^\s*(?:require\s+|replace\s+|\S+\s+=>\s+)?[\w.\-]+\.[\w.\-/]+\s+v\d|^\s*(?:go|toolchain)\s+\d"
)
_GRADLE = re.compile(
    r"""\b(?:implementation|api|compileOnly|runtimeOnly|testImplementation|classpath|\w+Implementation)"""
    r"""\s*\(?\s*["'][^"':]+:[^"':]+:[^"']+["']"""
)
_MAVEN = re.compile(r"<version>|<artifactId>")
_GEMFILE = re.compile(r"""^\s*gem\s+["']""")


def check(files: Sequence[FileDiff], limits: Limits) -> Iterator[Finding]:
    for file in files:
        name = PurePosixPath(file.path).name
        if name in LOCKFILES:
            yield finding(
                "lockfile-changed",
                f"The lockfile {name} changes: the versions that get installed change with this fix.",
                file.path,
            )
            continue
        line = _pin_change(file, name)
        if line is not None:
            yield finding(
                "dependency-pin-changed",
                "A dependency requirement or version pin changes; check that "
                "the fix is not just an upgrade or downgrade around the failure.",
                file.path,
                line.number,
            )


def _pin_change(file: FileDiff, name: str) -> Line | None:
    changed = [*file.added, *file.removed]
    changed.sort(key=lambda li: li.number)
    for line in changed:
        text = line.view.bare
        if not text.strip():
            continue
        if _REQUIREMENTS_NAME.match(name) and not text.lstrip().startswith("-"):
            return line
        if _REQUIREMENTS_NAME.match(name) and text.lstrip().startswith(("-r", "-c", "--requirement")):
            return line
        if name in ("pyproject.toml", "setup.cfg", "setup.py", "Pipfile") and _PY_SPEC.match(text):
            return line
        if (
            name in ("pyproject.toml", "Cargo.toml", "Pipfile")
            and _TOML_DEP.match(text)
            and not _TOML_SKIP.match(text)
        ):
            return line
        if name == "package.json":
            match = _JSON_DEP.match(line.text)
            if match and match.group(1) not in ("version", "name", "main", "description"):
                return line
        if name == "go.mod" and _GO_MOD.match(text):
            return line
        if name in ("build.gradle", "build.gradle.kts") and _GRADLE.search(text):
            return line
        if name == "pom.xml" and _MAVEN.search(line.text):
            return line
        if name == "Gemfile" and _GEMFILE.match(text):
            return line
    return None
