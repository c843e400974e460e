"""The fixers' tools on the PATH of the commands we re-run.

The image ships no ruff, black or isort (each is installed when a run needs it, `fixers.install`),
so a failing `ruff format --check .` could not be reproduced or verified, nor the changed files be
checked with ruff, where the repository's own environment lacks the tool. `tool_dir` resolves each
tool those commands run (and ruff, when the repository uses it) at the version the repository pins,
else the default, and links it into one directory that goes at the end of the commands' PATH: a
tool the repository's environment has comes first.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path

from ci_autofix.fixers.commands import read_commands
from ci_autofix.fixers.config import read_repo_config
from ci_autofix.fixers.install import Installer, Tool
from ci_autofix.fixers.versions import Requirement
from ci_autofix.ladder.environment import uses_ruff


def tool_dir(root: Path, commands: Sequence[str], tools_dir: Path, *, timeout: float) -> Path | None:
    """A directory of links to the tools `commands` run, under `tools_dir`; None when they run none.

    Read before any of the repository's code runs (the configuration and pins are its files)."""
    facts = read_commands(commands)
    wanted = {invocation.fixer.package: invocation.pin for invocation in facts.invocations}
    if uses_ruff(root):
        wanted.setdefault("ruff", None)
    if not wanted:
        return None
    config = read_repo_config(root)
    installer = Installer(tools_dir, timeout=timeout)
    links = tools_dir / "path"
    shutil.rmtree(links, ignore_errors=True)
    links.mkdir(parents=True)
    links.chmod(0o755)
    for package, inline in sorted(wanted.items()):
        pin = config.pin(package, prefer_pre_commit=bool(facts.pre_commit))
        requirement = Requirement(f"=={inline}") if inline else (pin.requirement if pin else None)
        tool = installer.tool(package, requirement)
        if isinstance(tool, Tool):
            (links / package).symlink_to(tool.executable)
    return links
