"""A broken `add` and the scripted Claude session that fixes it, shared by the agent end-to-end
tests (in process, as a subprocess laid out like the runner, and inside the image)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ci_autofix.cli.demo import job_log
from tests.testing.emulator import GitHubEmulator, Run
from tests.testing.fakes.messages import reply, tool_use
from tests.testing.runner_sim import RunnerSim, RunResult
from tests.testing.sandbox_tools import sandbox_path
from tests.testing.world import alice_repository

EDITOR = "str_replace_based_edit_tool"
PYTEST = "python -m pytest -q -p no:cacheprovider tests"
CALC_OK = 'def add(a, b):\n    """The sum of a and b."""\n    return a + b\n'
CALC_BROKEN = CALC_OK.replace("a + b", "a - b")
CALC_TEST = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
API_KEY = "sk-ant-api03-" + "k" * 40
SUMMARY = "add() subtracted its arguments; it adds them again."


def fixing_turns() -> list[dict[str, Any]]:
    """View, fix, re-run the failing command, finish: four turns."""
    return [
        reply(
            "Let me look at the code under test.", tool_use(EDITOR, {"command": "view", "path": "calc.py"})
        ),
        reply(
            tool_use(
                EDITOR,
                {
                    "command": "str_replace",
                    "path": "calc.py",
                    "old_str": "return a - b",
                    "new_str": "return a + b",
                },
            )
        ),
        reply(tool_use("run", {"command": PYTEST})),
        reply(
            tool_use(
                "finish",
                {
                    "summary": SUMMARY,
                    "root_cause": "calc.py:3 returned a - b",
                    "confidence": "high",
                    "notes_left_as_is": [],
                },
            )
        ),
    ]


@contextmanager
def messages_process(turns: list[dict[str, Any]], workdir: Path) -> Iterator[tuple[str, Path]]:
    """The Messages API fake as a process of its own (as another process or a container reaches it):
    yields its base URL and the file it records every request to."""
    script, port_file, record = workdir / "turns.json", workdir / "port.txt", workdir / "requests.jsonl"
    script.write_text(json.dumps(turns))
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.testing.fakes.messages",
            "--script",
            str(script),
            "--port-file",
            str(port_file),
            "--record",
            str(record),
        ],
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(root)},
    )
    try:
        for _ in range(400):
            if port_file.is_file() and port_file.read_text().strip():
                break
            time.sleep(0.05)
        yield port_file.read_text().strip(), record
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=10)


REPO = "acme/calc"
BRANCH = "fix-rounding"


@dataclass
class Broken:
    """The failing commit seeded in the emulator, its CI run, and the propose job's checkout."""

    run: Run
    head_sha: str
    workspace: Path


def seed(emu: GitHubEmulator, tmp_path: Path, files: dict[str, str] | None = None) -> Broken:
    """`acme/calc` with a working `add` (and `files`) on main, broken on `fix-rounding`, whose CI failed."""
    ci = f"on: [push]\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - run: {PYTEST}\n"
    layout = {
        "calc.py": CALC_OK,
        "tests/test_calc.py": CALC_TEST,
        ".github/workflows/ci.yml": ci,
        **(files or {}),
    }
    repository = alice_repository(
        emu, tmp_path / "source", REPO, layout, BRANCH, {"calc.py": CALC_BROKEN}, "Refactor add"
    )
    log = job_log(repository.source, [PYTEST])
    assert b" failed" in log
    run = repository.failed_run(PYTEST, log)
    return Broken(run, repository.head_sha, repository.checkout(tmp_path / "workspace"))


def propose(
    emu: GitHubEmulator,
    tmp_path: Path,
    broken: Broken,
    messages_url: str,
    *,
    runner_uid: int | None = None,
    inputs: dict[str, str] | None = None,
) -> RunResult:
    """The propose job, laid out like the runner, with the model at `messages_url` (and `inputs`
    besides the model key)."""
    return (
        RunnerSim(tmp_path, runner_uid=runner_uid)
        .for_emulator(emu, REPO)
        .run(
            event_name="workflow_run",
            event=emu.workflow_run_event(broken.run),
            workspace=broken.workspace,
            inputs={"anthropic-api-key": API_KEY, **(inputs or {})},
            extra_env={
                "ANTHROPIC_BASE_URL": messages_url,
                "PATH": sandbox_path(),  # its pytest runs as the work area's uid
            },
        )
    )
