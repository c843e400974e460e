"""The fix ladder on a real work area: real git, real commands, the agent through the Messages API fake.

The failing command of these repositories is `grep -qx ok status.txt`: a fix is a `status.txt`
that says `ok`. Each test pins one decision of `run_ladder` (what is proposed, what halts).
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from ci_autofix.errors import Halt, HaltReason
from ci_autofix.ladder.run import LadderInput, Proposal, run_ladder
from ci_autofix.ladder.workarea import workarea
from ci_autofix.runner import Runner
from ci_autofix.settings import Settings
from ci_autofix.triage.model import Category, Diagnosis
from tests.testing.failed import failed_steps
from tests.testing.fakes.messages import FakeMessagesAPI, reply, tool_use
from tests.testing.fakes.messages_fixtures import TEST_KEY, make_llm
from tests.testing.git import init_repo
from tests.testing.sandbox_tools import sandbox_path

EDITOR = "str_replace_based_edit_tool"
CHECK = "grep -qx ok status.txt"
MESSY = 'def add(a,b):\n    return {  "sum":a+b }\n'


def diagnosis(category: Category = Category.TEST) -> Diagnosis:
    return Diagnosis(
        failures=[],
        log_commands=[CHECK],
        category=category,
        excerpt="status.txt does not say ok\n##[error]Process completed with exit code 1.",
        excerpt_tokens=10,
        budget_tokens=1000,
    )


def costing(dollars: float) -> dict[str, int]:
    """Usage that costs `dollars` on claude-sonnet-5-5 ($2 per million input tokens)."""
    return {
        "input_tokens": round(dollars * 500_000),
        "output_tokens": 0,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }


def edit(old: str, new: str, *, dollars: float | None = None) -> dict[str, Any]:
    return reply(
        tool_use(EDITOR, {"command": "str_replace", "path": "status.txt", "old_str": old, "new_str": new}),
        usage=None if dollars is None else costing(dollars),
    )


def finish(summary: str = "status.txt says ok again.", *, dollars: float | None = None) -> dict[str, Any]:
    arguments = {
        "summary": summary,
        "root_cause": "status.txt:1",
        "confidence": "high",
        "notes_left_as_is": [],
    }
    return reply(tool_use("finish", arguments), usage=None if dollars is None else costing(dollars))


@dataclass
class Ladder:
    repo: Path
    head: str
    api: FakeMessagesAPI
    log: io.StringIO

    def run(
        self,
        *,
        commands: list[str] | None = None,
        category: Category = Category.TEST,
        key: bool = True,
        **settings: Any,
    ) -> Proposal:
        configured = Settings(
            anthropic_api_key=TEST_KEY if key else None, **{"fixers": [], "command_timeout": 60, **settings}
        )
        with workarea(self.repo, self.head) as area:
            return run_ladder(
                LadderInput(
                    area=area,
                    head_sha=self.head,
                    diagnosis=diagnosis(category),
                    settings=configured,
                    commit_message="Fix CI failure\n",
                    tools_dir=area.tools_dir,
                    llm_factory=lambda: make_llm(self.api),
                    failed=failed_steps(*([CHECK] if commands is None else commands)),
                ),
                Runner(in_actions=False, stream=self.log),
            )


@pytest.fixture
def ladder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, messages_api: FakeMessagesAPI
) -> Iterator[Ladder]:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PATH", sandbox_path())  # the commands run as the work area's uid
    repo = tmp_path / "repo"
    head = init_repo(repo, {"status.txt": "bad\n", "calc.py": MESSY})
    yield Ladder(repo, head, messages_api, io.StringIO())


def test_a_verified_fix_is_proposed_as_a_commit_on_the_failing_one(ladder: Ladder) -> None:
    ladder.api.push(edit("bad", "ok"), finish())
    proposal = ladder.run()
    assert proposal.verification is not None and proposal.verification.outcome == "verified"
    assert proposal.changed_files == ["status.txt"]
    assert proposal.head_sha == ladder.head
    assert "-bad\n+ok\n" in proposal.diff
    assert proposal.agent is not None and proposal.agent.summary == "status.txt says ok again."


def test_a_fix_that_still_fails_is_not_proposed(ladder: Ladder) -> None:
    # first run: a change that does not fix it; the one more turn with the new output: no better
    ladder.api.push(edit("bad", "worse"), finish("changed it"), finish("still changed"))
    with pytest.raises(Halt) as halt:
        ladder.run(require_verified=False)
    assert halt.value.reason is HaltReason.UNVERIFIED_FIX
    assert halt.value.message.startswith("The fix does not make the failing command pass:")
    assert "still fails after the fix" in halt.value.message
    assert not ladder.api.turns  # both agent runs happened
    assert "one more turn with the new output" in ladder.log.getvalue()
    assert halt.value.spent is not None and halt.value.spent.turns == 3  # both runs' turns
    assert halt.value.spent.cost_usd > 0


def test_the_retry_after_a_failed_verification_gets_what_is_left_of_the_budget(ladder: Ladder) -> None:
    # the first run spends $1.00 of $1.20; its fix fails verification; the retry may take one turn
    ladder.api.push(
        edit("bad", "worse", dollars=0.5),
        finish("changed it", dollars=0.5),
        *[reply(tool_use("list_files", {}), usage=costing(0.5))] * 5,
    )
    with pytest.raises(Halt) as halt:
        ladder.run(max_cost_usd=1.2)
    assert halt.value.reason is HaltReason.BUDGET
    assert "first fix did not make the failing command pass" in halt.value.message
    assert "$1.20 cost limit" in halt.value.message
    assert len(ladder.api.bodies) == 3  # not a fresh $1.20 for the retry
    spent = halt.value.spent
    assert spent is not None and spent.turns == 3
    assert 1.2 <= spent.cost_usd <= 1.2 + 0.5 + 0.01  # the limit plus at most one turn


def test_a_first_run_that_spent_the_whole_budget_leaves_the_retry_no_turn(ladder: Ladder) -> None:
    ladder.api.push(
        edit("bad", "worse", dollars=0.7),
        finish("changed it", dollars=0.6),
        *[reply(tool_use("list_files", {}))] * 3,
    )
    with pytest.raises(Halt) as halt:
        ladder.run(max_cost_usd=1.2)
    assert halt.value.reason is HaltReason.BUDGET
    assert len(ladder.api.bodies) == 2  # the retry never called the model
    assert halt.value.spent is not None and halt.value.spent.cost_usd == pytest.approx(1.3, abs=0.01)


def test_the_retry_shares_the_turn_budget_too(ladder: Ladder) -> None:
    ladder.api.push(edit("bad", "worse"), finish("changed it"), *[reply(tool_use("list_files", {}))] * 5)
    with pytest.raises(Halt) as halt:
        ladder.run(max_turns=3)
    assert halt.value.reason is HaltReason.BUDGET and "all 3 turns" in halt.value.message
    assert len(ladder.api.bodies) == 3


def test_require_verified_halts_a_fix_nothing_could_verify(ladder: Ladder) -> None:
    ladder.api.push(edit("bad", "ok"), finish())
    with pytest.raises(Halt) as halt:
        ladder.run(commands=[], require_verified=True)  # no command of the failed step can be re-run
    assert halt.value.reason is HaltReason.UNVERIFIED_FIX
    assert "`require-verified` is on" in halt.value.message
    assert "no command of the failed step can be re-run here" in halt.value.message
    assert halt.value.spent is not None and halt.value.spent.turns == 2


def test_without_require_verified_an_unverified_fix_is_proposed(ladder: Ladder) -> None:
    ladder.api.push(edit("bad", "ok"), finish())
    proposal = ladder.run(commands=[], require_verified=False)
    assert proposal.verification is None
    assert proposal.changed_files == ["status.txt"]


def test_a_fixer_change_does_not_settle_a_test_failure(ladder: Ladder) -> None:
    """The formatter changed a file, but a failing test is not a formatting problem: the agent is
    still needed, and without it the proposal says that only part of the failure is fixed."""
    proposal = ladder.run(commands=[], key=False, fixers=["ruff-format"], require_verified=False)
    assert proposal.changed_files == ["calc.py"]
    assert [run.name for run in proposal.fixers] == ["ruff-format"]
    assert any(note.startswith("The fixers fixed part of the failure") for note in proposal.notes)


def test_a_fixer_change_settles_a_format_failure(ladder: Ladder) -> None:
    proposal = ladder.run(
        commands=[], key=False, category=Category.FORMAT, fixers=["ruff-format"], require_verified=False
    )
    assert proposal.changed_files == ["calc.py"]
    assert proposal.notes == []


def test_a_fixer_change_that_fails_verification_goes_to_the_agent(ladder: Ladder) -> None:
    """Formatting `calc.py` does not make the failing command pass: a FORMAT failure is settled
    only by a verified change, so the agent runs (and its fix is proposed)."""
    ladder.api.push(edit("bad", "ok"), finish())
    proposal = ladder.run(category=Category.FORMAT, fixers=["ruff-format"])
    assert proposal.agent is not None
    assert proposal.changed_files == ["calc.py", "status.txt"]
    assert proposal.verification is not None and proposal.verification.outcome == "verified"


def test_a_verified_fix_the_patch_policy_blocks_is_not_proposed(ladder: Ladder) -> None:
    ladder.api.push(edit("bad", "ok"), finish())
    with pytest.raises(Halt) as halt:
        ladder.run(max_changed_lines=1)  # the fix changes two lines (one removed, one added)
    assert halt.value.reason is HaltReason.POLICY
    assert "too-many-changed-lines" in halt.value.message
    assert "nothing was pushed" in halt.value.message
    assert halt.value.spent is not None and halt.value.spent.turns == 2


@pytest.mark.slow  # installs packages into a fresh environment
def test_the_fixer_and_verification_run_the_ruff_the_failed_job_installed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The job's log says ruff 0.8.6 ran; the repository pins none, and this machine's ruff (first on
    the commands' PATH) is newer and formats another way. Fixed and verified with 0.8.6, both."""
    from ci_autofix.agent.joblogs import JobLog

    # ruff 0.9 (the 2025 style) joins implicitly concatenated strings that fit on one line; 0.8 keeps them
    source = 'GREETING = "hello, " "world"\n\n\ndef f(a,):\n    return a\n'
    fixed_by_old = 'GREETING = "hello, " "world"\n\n\ndef f(\n    a,\n):\n    return a\n'

    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PATH", sandbox_path())
    repo = tmp_path / "repo"
    head = init_repo(repo, {"ruff.toml": "", "demo.py": source})
    log = "2025-01-08T10:00:00.0000000Z Successfully installed ruff-0.8.6\n"
    settings = Settings(fixers=["auto"], command_timeout=120, require_verified=True)
    out = io.StringIO()
    with workarea(repo, head) as area:
        proposal = run_ladder(
            LadderInput(
                area=area,
                head_sha=head,
                diagnosis=diagnosis(Category.FORMAT),
                settings=settings,
                commit_message="Fix CI failure\n",
                tools_dir=area.tools_dir,
                llm_factory=lambda: pytest.fail("no model is needed"),
                failed=failed_steps("ruff format --check ."),
                logs=[JobLog("lint", log.encode())],
            ),
            Runner(in_actions=False, stream=out),
        )
        fixed = area.git.run("show", f"{proposal.fix_sha}:demo.py").output
    assert [(run.name, run.version) for run in proposal.fixers] == [("ruff-format", "0.8.6")]
    assert fixed == fixed_by_old
    assert proposal.verification is not None and proposal.verification.outcome == "verified", out.getvalue()
    read = "the failed job's log: Successfully installed ruff-0.8.6"
    assert proposal.verification.tools == [("ruff", "0.8.6", read)]
    assert f"- ruff `0.8.6`: `{read}`" in proposal.verification.to_markdown()
