"""The propose flow with the `logs` tool: the agent lists, searches and reads the failed job's
whole log, writes a failing test first (Trace & Verify), fixes, and the fix is proposed.

As in `test_agent.py`: the action runs as a subprocess laid out like the runner, the
real SDK talks to the Messages API fake, the real PyGithub to the GitHub emulator, whose job log
is the real output of the failing pytest. The log is downloaded once, by triage; what the tool
returns comes from the copy the ladder stored.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from ci_autofix.state.marker import parse
from tests.testing.calc_scenario import (
    CALC_OK,
    EDITOR,
    PYTEST,
    REPO,
    fixing_turns,
    messages_process,
    propose,
    seed,
)
from tests.testing.emulator import GitHubEmulator
from tests.testing.fakes.messages import reply, tool_use
from tests.testing.git import git


def tool_results(record: Path) -> list[str]:
    """The text of every tool result sent back to the model, in order (the last request has them all)."""
    last = json.loads(record.read_text().splitlines()[-1])["body"]["messages"]
    return [
        str(block["content"])
        for message in last
        if message["role"] == "user" and isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    ]


REPRO = "from calc import add\n\n\ndef test_add_of_negatives():\n    assert add(-2, -3) == -5\n"


def test_the_agent_reads_and_searches_the_whole_log_and_its_added_test_is_proposed(
    github_emulator: GitHubEmulator, tmp_path: Path
) -> None:
    emu = github_emulator
    broken = seed(emu, tmp_path)
    turns = [
        reply(tool_use("logs", {"action": "list"})),
        reply(tool_use("logs", {"action": "search", "pattern": r"assert add\(2, 3\)", "context": 1})),
        reply(tool_use("logs", {"action": "read", "job": "test", "start": 1, "end": 4})),
        reply(tool_use(EDITOR, {"command": "create", "path": "tests/test_repro.py", "file_text": REPRO})),
        *fixing_turns()[1:],  # the fix, the failing command again, finish
    ]
    with messages_process(turns, tmp_path) as (url, record):
        result = propose(emu, tmp_path, broken, url)

    assert result.outputs["status"] == "proposed", result.log
    assert (
        len(emu.api_requests("GET", r"/actions/jobs/\d+/logs$")) == 1
    )  # downloaded once, for triage and tool
    listed, found, read = tool_results(record)[:3]
    counted = re.search(r"- `test`: (\d+) lines", listed)
    assert counted, listed  # the tool was offered, over the job the run failed in
    lines = int(counted.group(1))
    assert lines > 10 and "<untrusted" in listed
    match = re.search(r"^test:(\d+): >\s+assert add\(2, 3\) == 5$", found, re.M)
    assert match, found
    number = int(match.group(1))
    assert f"test-{number + 1}- E       assert -1 == 5" in found  # the line after it, as context
    assert read.splitlines()[2:6] == [
        "1: Run actions/checkout@v4",
        "2: ",
        f"3: Run {PYTEST}",
        f"4: {PYTEST}",  # its colours are gone
    ]
    assert all(re.search(r"\d{4}-\d\d-\d\dT\d\d:", text) is None for text in (listed, found, read))
    assert all(r"<untrusted source=" in text for text in (listed, found, read))

    first = json.loads(record.read_text().splitlines()[0])["body"]
    assert "logs" in {t["name"] for t in first["tools"]}
    intro, log_block = (b["text"] for b in first["messages"][0]["content"][:2])
    assert "the `logs` tool" in intro and "the failed job" in intro
    assert f"- `test`: {lines} lines" in log_block

    fix_sha, bare = result.outputs["fix-sha"], emu.bare_path(REPO)
    assert git(bare, "show", f"{fix_sha}:calc.py") == CALC_OK.rstrip("\n")
    assert git(bare, "show", f"{fix_sha}:tests/test_repro.py") == REPRO.rstrip("\n")  # the added test stays
    [pull] = emu.pulls(REPO)
    suggestion = parse(pull.body)
    assert suggestion is not None and suggestion.verification == "verified"
    assert not pull.draft  # an added test is no weakening: nothing flags the proposal
