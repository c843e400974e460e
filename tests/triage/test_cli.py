"""`ci-autofix triage [FILE|-] [--max-tokens N] [--format text|json]`, run as a real process."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from ci_autofix.triage import estimate_tokens

SYNTHETIC = Path(__file__).parent / "fixtures" / "github-synthetic.txt"
CLI = Path(sys.executable).parent / "ci-autofix"


def triage(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "ci_autofix.cli.triage", *args],
        input=stdin,
        capture_output=True,
        timeout=60,
        check=False,
    )


def test_text_from_a_file() -> None:
    done = triage(str(SYNTHETIC))
    assert done.returncode == 0, done.stderr
    out = done.stdout.decode()
    assert "E       assert 3 == 4" in out.splitlines()
    assert "##[error]Process completed with exit code 1." in out


def test_json_from_stdin() -> None:
    done = triage("-", "--format", "json", stdin=SYNTHETIC.read_bytes())
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["category"] == "test" and data["is_infra"] is False
    assert data["log_commands"] == ["python -m pytest -q"]
    assert data["failures"][0]["test_id"] == "test_add"
    assert data["budget_tokens"] == 6000


def test_budget_flag() -> None:
    done = triage(str(SYNTHETIC), "--max-tokens", "40")
    assert done.returncode == 0
    assert estimate_tokens(done.stdout.decode().rstrip("\n")) <= 40


def test_missing_file_is_a_clear_error() -> None:
    done = triage("no-such-log.txt")
    assert done.returncode == 2
    err = done.stderr.decode()
    assert "Cannot read the log no-such-log.txt: No such file or directory." in err and "What to do:" in err
    assert done.stdout == b""


def test_binary_garbage_on_stdin_is_refused() -> None:
    done = triage("-", stdin=bytes(range(256)) * 100)
    assert done.returncode == 2
    assert b"The log on standard input is binary data" in done.stderr and done.stdout == b""


def test_through_the_project_cli() -> None:
    done = subprocess.run(
        [str(CLI), "triage", "-", "--format", "json"],
        input=SYNTHETIC.read_bytes(),
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["failures"][0]["file"] == "tests/test_calc.py"
