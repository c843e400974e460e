"""Every outcome that is not `verified` shows the output that decided it, open, fenced, redacted:
in the PR's checks and in a halt's summary (the kept work's verification)."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest

from ci_autofix.deliver import kept
from ci_autofix.errors import Kept
from ci_autofix.ladder.environment import Environment
from ci_autofix.ladder.verify import reproduce, verify
from ci_autofix.sandbox import Sandbox
from tests.testing.git import DEV, git

BIN = Path(sys.executable).parent
TOKEN = "ghp_" + "b" * 36
# ruff shows the offending line: a backtick run of five in it, and a token
SOURCE = f"import os  # `````  Authorization: token {TOKEN}\n"


def _project(tmp_path: Path) -> Sandbox:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "ruff.toml").write_text("")
    (root / "demo.py").write_text(SOURCE)
    git(root, "init", "-q")
    git(root, "add", ".")
    git(root, "commit", "-qm", "unused import", author=DEV)
    return Sandbox(root, timeout=60, extra_env={"PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"})


def _outside_details(markdown: str) -> str:
    return re.sub(r"<details>.*?</details>", "", markdown, flags=re.S)


def test_a_fix_that_still_fails_shows_the_commands_output_open_fenced_and_redacted(tmp_path: Path) -> None:
    sandbox = _project(tmp_path)
    command = "ruff check --no-cache demo.py"
    before = reproduce(sandbox, [command], timeout=60)
    (sandbox.root / "demo.py").write_text(SOURCE + "x = 1\n")  # a "fix" that fixes nothing
    result = verify(sandbox, [command], before=before, timeout=60)
    assert result.outcome == "failed"
    markdown = result.to_markdown()
    shown = _outside_details(markdown)
    assert "The output of `ruff check --no-cache demo.py` after the fix (exit 1), its last lines:" in shown
    assert "F401" in shown and "`````" in shown  # ruff's own words, with the backticks of the line
    assert "\n``````text\n" in shown  # the fence is longer than any backtick run inside
    assert TOKEN not in markdown
    # a halt's summary shows the same, open: the kept work's verification is not collapsed
    summary = kept.summary(Kept(diff="x", evidence=markdown))
    assert "### Its verification: failed" in summary
    assert "F401" in _outside_details(summary)


def test_a_failure_that_did_not_reproduce_shows_the_run_before_the_fix(tmp_path: Path) -> None:
    sandbox = _project(tmp_path)
    command = "ruff format --check --no-cache demo.py"  # passes: the log's failure is not this
    before = reproduce(sandbox, [command], timeout=60)
    result = verify(sandbox, [command], before=before, timeout=60)
    assert result.outcome == "unverified"
    shown = _outside_details(result.to_markdown())
    assert "The output of `ruff format --check --no-cache demo.py` before the fix (exit 0)" in shown
    assert "1 file already formatted" in shown


@pytest.mark.slow  # installs packages into a fresh environment
def test_a_failed_setup_shows_its_output_and_the_remedy(tmp_path: Path) -> None:
    sandbox = _project(tmp_path)
    (sandbox.root / "pyproject.toml").write_text('[project]\nname = "demo"\nversion = "0"\n')
    result = verify(
        sandbox,
        ["pytest -q"],
        environment=Environment("pip install --no-index -e .[test,dev]", env_dir=tmp_path / "env"),
        timeout=120,
    )
    assert result.outcome == "unverified"
    assert "Set `setup-command` to what CI's job runs to install the project" in result.reason
    shown = _outside_details(result.to_markdown())
    assert "when preparing the environment (exit 1), its last lines:" in shown
    assert "ERROR" in shown  # pip's own words
