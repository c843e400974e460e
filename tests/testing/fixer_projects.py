"""Small git-initialised Python projects, failing real tool checks, and their GitHub-like logs."""

from __future__ import annotations

import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from ci_autofix.triage import diagnose
from ci_autofix.triage.model import Diagnosis
from tests.testing.git import DEV, git

# The tools that ship with the action (in tests: those of the venv running pytest).
BIN = Path(sys.executable).parent
_STAMP = "2026-11-30T01:02:03.0000000Z "


def github_step(command: str, output: str, exit_code: int) -> str:
    """A failed `run:` step as the runner logs it (timestamps, group header, script echo, error line)."""
    lines = [f"##[group]Run {command.splitlines()[0]}"]
    lines += [f"\x1b[36;1m{line}\x1b[0m" for line in command.splitlines()]
    lines += ["shell: /usr/bin/bash -e {0}", "##[endgroup]", *output.splitlines()]
    lines.append(f"##[error]Process completed with exit code {exit_code}.")
    return "".join(f"{_STAMP}{line}\n" for line in lines)


@dataclass
class Project:
    root: Path

    def write(self, rel: str, text: str) -> Path:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return path

    def read(self, rel: str) -> str:
        return (self.root / rel).read_text()

    def git(self, *args: str) -> str:
        return git(self.root, *args, author=DEV, strip=False)

    def commit(self) -> str:
        self.git("add", "-A")
        self.git("commit", "-q", "-m", "broken", "--allow-empty")
        return self.git("rev-parse", "HEAD").strip()

    def diff(self) -> str:
        return self.git("diff", "--no-color", "HEAD")

    def run_step(self, script: str) -> str:
        """Run each line of `script` (tools from our venv) until one fails, like `bash -e`; the step's log."""
        output = []
        for line in script.splitlines():
            argv = shlex.split(line)
            if (BIN / argv[0]).is_file():
                argv[0] = str(BIN / argv[0])
            done = subprocess.run(argv, cwd=self.root, capture_output=True, text=True, timeout=120)
            output.append(done.stdout + done.stderr)
            if done.returncode:
                return github_step(script, "".join(output), done.returncode)
        raise AssertionError(f"the step passed, a failing one was wanted: {script}")

    def diagnose(self, script: str) -> Diagnosis:
        return diagnose(self.run_step(script))


def own_version(tool: str) -> str:
    flag = "--version-number" if tool == "isort" else "--version"
    out = subprocess.run([str(BIN / tool), flag], capture_output=True, text=True, check=True).stdout
    return out.split()[1].rstrip(",") if tool != "isort" else out.split()[0]
