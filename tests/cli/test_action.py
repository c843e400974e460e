"""Run as the Action (`python -m ci_autofix`, no command, `GITHUB_ACTIONS=true`), a bad input is
named as the input under `with:`, never as a command-line flag; a bad `CI_AUTOFIX_PRICES` is
reported at start-up, before any flow reads the event."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

TRACEBACK = "Traceback (most recent call last)"


def as_the_action(tmp_path: Path, **env: str) -> tuple[subprocess.CompletedProcess[str], str]:
    """The container's entrypoint with `env` besides the runner's variables; its result and the summary."""
    summary, output = tmp_path / "summary.md", tmp_path / "output"
    base = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "INPUT_", "GITHUB_"))}
    base.update(
        {
            "GITHUB_ACTIONS": "true",
            "GITHUB_OUTPUT": str(output),
            "GITHUB_STEP_SUMMARY": str(summary),
            "GITHUB_EVENT_NAME": "workflow_run",
            "GITHUB_EVENT_PATH": str(tmp_path / "no-event.json"),
            "GITHUB_REPOSITORY": "octo/app",
            "GITHUB_WORKSPACE": str(tmp_path),
            "HOME": str(tmp_path),
        }
    )
    done = subprocess.run(
        [sys.executable, "-m", "ci_autofix"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**base, **env},
        timeout=120,
        check=False,
    )
    return done, summary.read_text() if summary.exists() else ""


def test_a_bad_input_is_named_under_with(tmp_path: Path) -> None:
    done, summary = as_the_action(tmp_path, **{"INPUT_MAX-MINUTES": "0"})
    assert done.returncode == 1
    said = done.stdout + done.stderr
    assert TRACEBACK not in said
    assert "input `max-minutes` (got '0'): Input should be greater than 0" in said
    assert "under `with:`" in said
    assert "--max-minutes" not in said and "command-line" not in said
    assert "max-minutes" in summary and "--max-minutes" not in summary


def test_a_bad_price_table_is_reported_at_start_up(tmp_path: Path) -> None:
    done, summary = as_the_action(tmp_path, CI_AUTOFIX_PRICES="{not json")
    assert "CI_AUTOFIX_PRICES" in summary
    assert done.returncode == 1
    said = done.stdout + done.stderr
    assert "CI_AUTOFIX_PRICES is not a valid price table" in said
    assert "in the step's `env:`" in said
    assert "no-event.json" not in said  # no flow started: the event was never read
