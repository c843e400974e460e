"""Formatter versions a repository's workflows install, read from `.github/workflows/*.yml`.

What CI ran is often pinned in the workflow itself rather than in a requirements file:
`pip install black==24.2.0`, `uvx ruff@0.8.6 format --check`, or the `version:` input of the
tools' own actions (`astral-sh/ruff-action`, `psf/black`, `isort/isort-action`). Lines are
matched one by one (no YAML parser); only strict versions are taken.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ci_autofix.tooling.versions import VERSION, Requirement

# action (owner/name, lower case) -> (package, the inputs that carry its version)
ACTIONS: dict[str, tuple[str, tuple[str, ...]]] = {
    "astral-sh/ruff-action": ("ruff", ("version",)),
    "chartboost/ruff-action": ("ruff", ("version",)),
    "psf/black": ("black", ("version",)),
    "isort/isort-action": ("isort", ("isort-version", "isortversion")),
    "jamescurtin/isort-action": ("isort", ("isort-version", "isortversion")),
}
# pre-commit hook repositories (a marker in the URL, lower case) -> the package their hooks run
PRE_COMMIT_REPOS = (("ruff-pre-commit", "ruff"), ("/black", "black"), ("isort", "isort"))
_INSTALLS_RE = re.compile(r"\b(?:install|uvx|pipx\s+run|uv\s+tool\s+run|--with|--from)\b")
_PINNED_RE = re.compile(
    rf"(?<![\w.-])(?P<name>ruff|black|isort)(?:\[[^\]\s]*\])?\s*(?:==|@)\s*(?P<version>{VERSION})(?![\w.])",
    re.I,
)
_USES_RE = re.compile(r"^(?P<lead>\s*(?:-\s+)?)uses:\s*['\"]?(?P<action>[\w.-]+/[\w.-]+)@")
_INPUT_RE = re.compile(r"^\s*(?P<key>[\w-]+)\s*:\s*(?P<value>.*?)\s*$")


@dataclass(frozen=True)
class WorkflowTool:
    package: str
    requirement: Requirement | None  # None: the tool is used, its version not pinned
    source: str


def scan_workflow(source: str, text: str) -> list[WorkflowTool]:
    found: list[WorkflowTool] = []
    action: tuple[str, tuple[str, ...], int] | None = None  # package, version inputs, column of `uses`
    for line in text.splitlines():
        stripped = re.sub(r"(^|\s)#.*$", "", line)
        if not stripped.strip():
            continue
        indent = len(stripped) - len(stripped.lstrip(" -"))
        if action and (indent < action[2] or (stripped.lstrip().startswith("-") and indent <= action[2])):
            action = None
        if action and (match := _INPUT_RE.match(stripped)) and match.group("key").lower() in action[1]:
            value = match.group("value").strip("'\"")
            found.append(WorkflowTool(action[0], Requirement.parse(value), source))
        if uses := _USES_RE.match(stripped):
            known = ACTIONS.get(uses.group("action").lower())
            if known:
                action = (known[0], known[1], len(uses.group("lead")))
                found.append(WorkflowTool(known[0], None, source))
        elif _INSTALLS_RE.search(stripped):
            for pinned in _PINNED_RE.finditer(stripped):
                found.append(
                    WorkflowTool(
                        pinned.group("name").lower(), Requirement.parse(pinned.group("version")), source
                    )
                )
    return found


def action_package(command: str) -> str | None:
    """The package a `uses:` step runs, from the step's `Run owner/action@ref` header."""
    match = re.fullmatch(r"\s*([\w.-]+/[\w.-]+)(?:/[\w./-]+)?@\S+\s*", command)
    known = ACTIONS.get(match.group(1).lower()) if match else None
    return known[0] if known else None
