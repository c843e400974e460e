"""Wrap real tool output the way GitHub serves a job log (timestamps, groups, exit marker)."""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

START = datetime(2026, 8, 14, 5, 58, 30, tzinfo=UTC)


def _stamp(n: int) -> str:
    t = START + timedelta(milliseconds=n)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond:06d}0Z"


def github_log(script: str, output: str, *, exit_code: int = 1, bom: bool = True, prefix: str = "") -> str:
    """A raw GitHub job log in which a `run:` step ran `script`, printed `output` and exited."""
    lines = [
        "Current runner version: '2.331.0'",
        "##[group]Runner Image",
        "Image: ubuntu-24.04",
        "##[endgroup]",
        "##[group]Run actions/checkout@v4",
        "with:",
        "  token: ***",
        "##[endgroup]",
        "Syncing repository: octo/demo",
    ]
    script_lines = script.splitlines()
    lines.append(f"##[group]Run {script_lines[0]}")
    lines += [f"\x1b[36;1m{s}\x1b[0m" for s in script_lines]
    lines += [
        "shell: /usr/bin/bash -e {0}",
        "env:",
        "  pythonLocation: /opt/hostedtoolcache/Python/3.12.3/x64",
    ]
    lines.append("##[endgroup]")
    lines += output.splitlines()
    if exit_code:
        lines.append(f"##[error]Process completed with exit code {exit_code}.")
    lines += [
        "Post job cleanup.",
        "[command]/usr/bin/git version",
        "git version 2.51.0",
        "Cleaning up orphan processes",
    ]
    text = "\n".join(f"{_stamp(n)} {line}" for n, line in enumerate(lines)) + "\n"
    return ("\ufeff" if bom else "") + prefix + text


def run_tool(argv: list[str], cwd: Path, timeout: float = 120) -> str:
    """Run a real tool in `cwd` and return what it printed (stdout then stderr), as CI would show it."""
    done = subprocess.run(
        [sys.executable, "-m", *argv],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        env={"PATH": str(Path(sys.executable).parent), "NO_COLOR": "1", "PYTHONDONTWRITEBYTECODE": "1"},
    )
    assert done.returncode != 0, f"{argv} was expected to fail:\n{done.stdout}\n{done.stderr}"
    return done.stdout + done.stderr


def write(root: Path, files: dict[str, str]) -> Path:
    for name, body in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body)
    return root
