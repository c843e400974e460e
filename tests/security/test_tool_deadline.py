"""Issue 27, item 2: one tool call must not outlive the attempt's deadline.

When `str_replace`'s `old_str` was not found, the editor's "most similar text" search compared
every window of the file with no bound on time or size, and the deadline (`max-minutes`) was only
checked between turns: a 3,000-line `old_str` against a 62-line file kept a run with
`max-minutes: 0.5` inside that one tool call for minutes. Anyone who steers the model by prompt
injection could hold a runner until the job's timeout, turn after turn.

The same holds for a command: `run`'s timeout is what is left of the minutes (it was set once
per turn, so each call of a turn got the whole rest), and a call that runs into the deadline ends
the attempt with a `budget` halt that names the tool.

End to end through the entrypoint laid out like the runner (uid 1001), against the GitHub
emulator and a scripted Claude session. The test is bounded by construction: the runner
simulation's subprocess timeout ends a run stuck in the tool, and the test then fails.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.security.ci_guards_helpers import fix_and_finish, seed, tool_results
from tests.testing.calc_scenario import EDITOR, messages_process
from tests.testing.emulator import GitHubEmulator
from tests.testing.fakes.messages import reply, tool_use

# a 62-line module, and an `old_str` of its lines (slightly changed, so it matches nowhere) 49 times over
STATS = "".join(
    f"def stat_{i}(values):\n    return sum(v * {i} for v in values) / len(values)\n" for i in range(31)
)
HUGE_OLD_STR = STATS.replace("sum(", "total(") * 49


def test_a_huge_old_str_gets_a_bounded_answer_and_the_run_goes_on(
    github_emulator: GitHubEmulator, tmp_path: Path
) -> None:
    assert (len(STATS.splitlines()), len(HUGE_OLD_STR.splitlines())) == (62, 3038)
    calc = seed(github_emulator, tmp_path, {"stats.py": STATS})
    stall = reply(
        tool_use(
            EDITOR, {"command": "str_replace", "path": "stats.py", "old_str": HUGE_OLD_STR, "new_str": "x"}
        )
    )
    with messages_process([stall, *fix_and_finish()], tmp_path) as (url, record):
        result = calc.propose(url, timeout=120, **{"max-minutes": "0.5"})

    answered = tool_results(record)
    assert answered, result.log
    told = answered[0]
    assert "was not found in stats.py" in told and "view" in told, told
    assert "gave up" in told or "too long" in told, told  # the search said why it stopped
    outcome = (result.outputs["status"], result.outputs.get("reason", ""))
    # the attempt went on within its minutes: the fix, or a typed budget halt, never a stuck tool call
    assert outcome in (("proposed", ""), ("halted", "budget")), result.log


@pytest.fixture
def marks() -> Iterator[Path]:
    """A directory the sandbox's uid can write to (pytest's own temp dir is 0700); removed at teardown."""
    path = Path(tempfile.mkdtemp(prefix="ci-autofix-deadline-"))
    path.chmod(0o777)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def test_a_command_that_outlives_the_minutes_ends_the_attempt_and_the_turns_next_call_never_runs(
    github_emulator: GitHubEmulator, tmp_path: Path, marks: Path
) -> None:
    calc = seed(github_emulator, tmp_path)
    stall = reply(
        tool_use("run", {"command": f"touch {marks}/first && sleep 600"}),
        tool_use("run", {"command": f"touch {marks}/second"}),
    )
    with messages_process([stall, *fix_and_finish()], tmp_path) as (url, record):
        result = calc.propose(url, timeout=120, **{"max-minutes": "0.25", "allow-shell": "true"})

    assert (result.outputs["status"], result.outputs["reason"]) == ("halted", "budget"), result.log
    assert "inside a call of the `run` tool" in result.summary, result.summary
    assert (marks / "first").exists(), result.log  # the command did start
    assert not (marks / "second").exists()  # and the attempt ended there
    assert tool_results(record) == []  # the model was not asked again
