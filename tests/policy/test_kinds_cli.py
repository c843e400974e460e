"""`check-diff --repo DIR`: the command line reads whole files from a repository, as the ladder can."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from conftest import Repo

TEST = "tests/test_pager.py"
BEFORE = "from app import Pager\n\n\ndef test_page():\n    assert Pager().page == 0\n"
# `pager.skip(2)` is the application's own method: only the whole file shows pytest is not involved
AFTER = BEFORE + "\n\ndef test_skip():\n    pager = Pager()\n    pager.skip(2)\n    assert pager.page == 2\n"


def run(diff: str, *args: str) -> tuple[int, dict[str, object]]:
    result = subprocess.run(
        [sys.executable, "-m", "ci_autofix.policy.command", "--format", "json", *args, "-"],
        input=diff,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return result.returncode, json.loads(result.stdout) if result.stdout.strip() else {
        "stderr": result.stderr
    }


def test_repo_option_resolves_a_look_alike_that_the_hunks_cannot(repo: Repo) -> None:
    base = repo.commit({TEST: BEFORE})
    head = repo.commit({TEST: AFTER})
    diff = repo.git.diff(base, head)
    hunks_code, hunks = run(diff)
    assert (hunks_code, hunks["codes"]) == (2, ["skip-marker-added"])
    code, verdict = run(diff, "--repo", str(repo.root))
    assert (code, verdict["status"]) == (0, "clean"), verdict


def test_repo_option_still_blocks_an_aliased_skip(repo: Repo) -> None:
    base = repo.commit({TEST: BEFORE})
    aliased = "import pytest as pt\n" + BEFORE.replace("def test_page", "@pt.mark.skip\ndef test_page")
    head = repo.commit({TEST: aliased})
    code, verdict = run(repo.git.diff(base, head), "--repo", str(repo.root))
    assert (code, verdict["codes"]) == (2, ["skip-marker-added"])


def test_a_repo_that_is_not_one_is_an_error_with_a_remedy(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "ci_autofix.policy.command", "--repo", str(tmp_path / "none"), "-"],
        input="",
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 3
    assert "--repo" in result.stderr and "git repository" in result.stderr
