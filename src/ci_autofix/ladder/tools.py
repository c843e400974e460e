"""The fixers' tools on the PATH of the commands we and the agent run for the repository.

The image ships no ruff, black or isort (each is installed when a run needs it, `fixers.install`),
so a failing `ruff format --check .` (or a `make lint` that runs black) could not be reproduced or
verified, nor the changed files be checked with ruff, where the repository's own environment lacks
the tool. `tool_dir` resolves every tool the fixer plan names, every tool the failing commands run
by name, and ruff when the repository uses it, each at the version CI ran as the plan decides it
(`fixers.plan.pinned`; else the default), and links them into one directory that goes at the end
of those commands' PATH: a tool the repository's environment has comes first. A tool decided to an
exact version is also linked into `CI_TOOLS`, which goes first, before the prepared environment
(whose copy of an unpinned tool is today's release, not the one CI ran).
"""

from __future__ import annotations

import dataclasses
import os
import shutil
from collections.abc import Sequence
from pathlib import Path

from ci_autofix.fixers.commands import read_commands
from ci_autofix.fixers.config import read_repo_config
from ci_autofix.fixers.install import Installed, Installer
from ci_autofix.fixers.plan import FixerSpec, pinned
from ci_autofix.ladder.environment import CI_TOOLS, uses_ruff
from ci_autofix.sandbox import Sandbox
from ci_autofix.tooling.ci_versions import CIRun
from ci_autofix.tooling.versions import Requirement

LINKS = "path"  # under the tools directory


def wanted_tools(
    root: Path, commands: Sequence[str], plan: Sequence[FixerSpec], ci: CIRun | None = None
) -> dict[str, Requirement | None]:
    """Each tool to link, with the version it must be (None: any; the default when none is installed):
    the plan's version for a fixer's tool, else decided as the plan decides (`pinned`, with `ci`)."""
    # the Python fixers' tools only: gofmt, cargo and node_modules' are the runtimes' and the repository's
    wanted: dict[str, Requirement | None] = {s.package: s.requirement for s in plan if not s.fixer.program}
    facts = read_commands(commands, root)
    packages = [
        i.fixer.package for i in facts.invocations if not i.fixer.program and i.fixer.package not in wanted
    ]
    if packages:
        config = read_repo_config(root)
        for package in packages:
            wanted[package] = pinned(package, facts, config, ci)[0]  # as the plan decides
    if uses_ruff(root):
        # only for the check of the changed files: a ruff the repository's environment installs comes
        # first; this one (installed already, else the default) is for when it installs none
        wanted.setdefault("ruff", None)
    return wanted


def tool_dir(
    root: Path,
    commands: Sequence[str],
    plan: Sequence[FixerSpec],
    tools_dir: Path,
    *,
    timeout: float,
    ci: CIRun | None = None,
) -> Path | None:
    """A directory of links to those tools, under `tools_dir`; None when there are none (or it
    cannot be made: the commands then run without them, as the repository's environment has them).

    Read before any of the repository's code runs (the configuration and pins are its files)."""
    wanted = wanted_tools(root, commands, plan, ci)
    if not wanted:
        return None
    installer = Installer(tools_dir, timeout=timeout)
    links, first = tools_dir / LINKS, tools_dir / CI_TOOLS
    try:
        for directory in (links, first):
            shutil.rmtree(directory, ignore_errors=True)
            directory.mkdir(parents=True)
            directory.chmod(0o755)
        for package, requirement in sorted(wanted.items()):
            tool = installer.tool(package, requirement)
            if isinstance(tool, Installed):
                (links / package).symlink_to(tool.executable)
                if requirement is not None and requirement.exact:  # CI's version: before any other
                    (first / package).symlink_to(tool.executable)
    except OSError:
        return None
    return links


def with_tools(sandbox: Sandbox, links: Path | None) -> Sandbox:
    """`sandbox` with the linked tools last on its commands' PATH, and those at the exact version
    CI ran (`CI_TOOLS`, beside them) first: before the prepared environment too (`prepare`)."""
    if links is None:
        return sandbox
    first = links.parent / CI_TOOLS
    lead = f"{first}{os.pathsep}" if first.is_dir() and any(first.iterdir()) else ""
    path = f"{lead}{sandbox.env().get('PATH', os.defpath)}{os.pathsep}{links}"
    return dataclasses.replace(sandbox, extra_env={**sandbox.extra_env, "PATH": path})
