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
from pathlib import Path
from typing import Any

from fakes.messages import reply, tool_use

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
    tests = Path(__file__).parent
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "fakes.messages",
            "--script",
            str(script),
            "--port-file",
            str(port_file),
            "--record",
            str(record),
        ],
        cwd=tests,
        env={**os.environ, "PYTHONPATH": str(tests)},
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
