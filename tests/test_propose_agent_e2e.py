"""The propose flow with the agent: a real failing test, fixed by a scripted Claude session.

The action runs as a subprocess laid out like the runner; the real anthropic SDK talks to the
Messages API fake (a separate process, reached through ANTHROPIC_BASE_URL) and the real
PyGithub to the GitHub emulator. The tools really edit the checkout; verification really
re-runs the failing pytest; the suggestion PR carries the agent's explanation and its cost.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from emulator import GitHubEmulator, JobSpec, StepSpec
from emulator.sample import ALICE, commit, git, init_repo
from fakes.messages import reply, tool_use
from runner_sim import RunnerSim

from ci_autofix.demo import job_log
from ci_autofix.marker import parse

REPO = "acme/calc"
KEY = "sk-ant-api03-" + "k" * 40
EDITOR = "str_replace_based_edit_tool"
COMMAND = "python -m pytest -q -p no:cacheprovider tests"
CALC_OK = 'def add(a, b):\n    """The sum of a and b."""\n    return a + b\n'
CALC_BROKEN = CALC_OK.replace("a + b", "a - b")
TEST = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"


def script() -> list[dict[str, Any]]:
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
        reply(tool_use("run", {"command": COMMAND})),
        reply(
            tool_use(
                "finish",
                {
                    "summary": "add() subtracted its arguments; it adds them again.",
                    "root_cause": "calc.py:3 returned a - b",
                    "confidence": "high",
                    "notes_left_as_is": [],
                },
            )
        ),
    ]


@pytest.fixture
def messages_fake(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """The Messages API fake as its own process, as the container run uses it."""
    turns = tmp_path / "turns.json"
    turns.write_text(json.dumps(script()))
    port_file, record = tmp_path / "port.txt", tmp_path / "requests.jsonl"
    tests_dir = Path(__file__).parent
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "fakes.messages",
            "--script",
            str(turns),
            "--port-file",
            str(port_file),
            "--record",
            str(record),
        ],
        cwd=tests_dir,
        env={**os.environ, "PYTHONPATH": str(tests_dir)},
    )
    try:
        for _ in range(200):
            if port_file.is_file() and port_file.read_text().strip():
                break
            time.sleep(0.05)
        yield port_file.read_text().strip(), record
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=10)


def test_the_agent_fixes_a_failing_test_through_the_whole_propose_flow(
    github_emulator: GitHubEmulator, messages_fake: tuple[str, Path], tmp_path: Path
) -> None:
    emu = github_emulator
    url, record = messages_fake
    source = tmp_path / "source"
    init_repo(source, {"calc.py": CALC_OK, "tests/test_calc.py": TEST})
    git(source, "checkout", "-q", "-b", "fix-rounding")
    head_sha = commit(source, {"calc.py": CALC_BROKEN}, "Refactor add")
    log = job_log(source, [COMMAND])
    assert b"1 failed" in log
    emu.create_repo(REPO, source=source)
    emu.add_user("alice", permission="write", email=ALICE[1])
    run = emu.add_workflow_run(
        REPO,
        ".github/workflows/ci.yml",
        "fix-rounding",
        head_sha,
        "failure",
        jobs=[JobSpec("test", "failure", [StepSpec(f"Run {COMMAND}", "failure")], log=log)],
    )
    workspace = tmp_path / "workspace"
    subprocess.run(["git", "clone", "-q", str(source), str(workspace)], check=True)
    git(workspace, "checkout", "-q", "--detach", head_sha)

    result = (
        RunnerSim(tmp_path)
        .for_emulator(emu, REPO)
        .run(
            event_name="workflow_run",
            event=emu.workflow_run_event(run),
            workspace=workspace,
            inputs={"anthropic-api-key": KEY},
            extra_env={"ANTHROPIC_BASE_URL": url, "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin"},
        )
    )
    assert result.exit_code == 0, result.stdout + result.stderr
    assert result.outputs["status"] == "proposed", result.summary
    assert float(result.outputs["cost-usd"]) > 0

    [pull] = emu.pulls(REPO)
    fix_sha = result.outputs["fix-sha"]
    bare = emu.bare_path(REPO)
    assert git(bare, "diff", head_sha, fix_sha, "--", "calc.py").count("\n+    return a + b") == 1
    assert git(bare, "show", f"{fix_sha}:calc.py") == CALC_OK.rstrip("\n")
    assert git(bare, "diff", "--name-only", head_sha, fix_sha) == "calc.py"  # no pytest cache, no artefacts
    assert "add() subtracted its arguments" in pull.body
    assert "calc.py:3 returned a - b" in pull.body
    suggestion = parse(pull.body)
    assert suggestion is not None and suggestion.verification == "verified"
    assert not pull.draft

    sent = [json.loads(line) for line in record.read_text().splitlines()]
    assert len(sent) == 4
    assert emu.token not in json.dumps(sent)  # the GitHub token never reaches the model
    assert all(KEY not in json.dumps(r["body"]) for r in sent)  # the key only authenticates
    assert all(r["headers"].get("authorization") == f"Bearer {KEY}" for r in sent)
