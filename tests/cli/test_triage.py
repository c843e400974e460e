"""`ci-autofix triage [FILE|-] [--max-tokens N] [--format text|json]`, run as a real process."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from ci_autofix.triage import estimate_tokens

SYNTHETIC = Path(__file__).resolve().parents[1] / "triage" / "fixtures" / "github-synthetic.txt"
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


def test_a_long_log_on_stdin_is_read_to_its_end(tmp_path: Path) -> None:
    # 3 MB of build output before the failure: standard input is spooled to a file whole (in
    # 1 MiB copies), so the failure at the end is in the excerpt, as it is from the file itself
    build = b"".join(b"2026-08-14T06:00:00.0000000Z compiling module %d\n" % i for i in range(70_000))
    log = build + SYNTHETIC.read_bytes()
    assert len(build) > 3_000_000
    path = tmp_path / "job.log"
    path.write_bytes(log)
    from_stdin, from_file = triage("-", stdin=log), triage(str(path))
    assert from_stdin.returncode == 0, from_stdin.stderr
    assert b"E       assert 3 == 4" in from_stdin.stdout
    assert from_stdin.stdout == from_file.stdout


def test_a_log_that_is_only_whitespace_is_empty_however_long(tmp_path: Path) -> None:
    blank = tmp_path / "blank.log"
    blank.write_bytes(b" \n\t\r\n" * 600_000)  # 3 MB: past the head that is sniffed
    done = triage(str(blank))
    assert done.returncode == 2
    assert f"The log {blank} is empty.".encode() in done.stderr
    late = tmp_path / "late.log"
    late.write_bytes(b" \n" * 600_000 + SYNTHETIC.read_bytes())  # text after a long blank head
    done = triage(str(late))
    assert done.returncode == 0, done.stderr
    assert b"E       assert 3 == 4" in done.stdout
