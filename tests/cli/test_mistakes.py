"""The mistakes a new user makes on the command line, each through the real `ci-autofix` entrypoint:
every one ends in a message naming the cause and the remedy and a documented exit code, never a
traceback."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from ci_autofix.cli.demo import job_log
from tests.testing.git import git, init_repo

BIN = Path(sys.executable).parent
BROKEN = {"pyproject.toml": "[tool.ruff]\nline-length = 100\n", "app.py": "def f( x ):\n    return x*2\n"}
TRACEBACK = "Traceback (most recent call last)"


def ci_autofix(
    *args: str,
    cwd: Path,
    stdin: bytes | None = None,
    env: dict[str, str] | None = None,
    stdout: int | None = None,
) -> subprocess.CompletedProcess[str]:
    """The installed entrypoint as a user runs it: no Actions variables, HOME in the test's directory."""
    base = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("ANTHROPIC_", "INPUT_", "GITHUB_")) and k != "PYTHONUNBUFFERED"  # as in a shell
    }
    base["PATH"] = f"{BIN}{os.pathsep}{base.get('PATH', '')}"
    base["HOME"] = str(cwd)
    done = subprocess.run(
        [str(BIN / "ci-autofix"), *args],
        cwd=cwd,
        input=stdin,
        stdout=stdout if stdout is not None else subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**base, **(env or {})},
        timeout=300,
        check=False,
    )
    return subprocess.CompletedProcess(
        done.args,
        done.returncode,
        (done.stdout or b"").decode(errors="replace"),
        done.stderr.decode(errors="replace"),
    )


def a_failing_checkout(tmp_path: Path) -> tuple[Path, Path, str]:
    """A repository whose formatting a fixer repairs, and its CI log: `fix` would succeed on it."""
    repo = tmp_path / "repo"
    head = init_repo(repo, BROKEN)
    log = tmp_path / "ci.log"
    log.write_bytes(job_log(repo, ["ruff format --check ."]))
    return repo, log, head


def assert_told(result: subprocess.CompletedProcess[str], code: int, cause: str) -> None:
    assert result.returncode == code, result.stderr
    assert TRACEBACK not in result.stderr
    assert cause in result.stderr and "What to do:" in result.stderr


# ---- fix --------------------------------------------------------------------------------------
def test_fix_refuses_an_existing_branch_before_any_work(tmp_path: Path) -> None:
    repo, log, head = a_failing_checkout(tmp_path)
    git(repo, "branch", "taken")  # at HEAD: the fix's commit would fast-forward it
    result = ci_autofix("fix", str(log), "--repo", str(repo), "--branch", "taken", cwd=tmp_path)
    assert_told(result, 2, "A branch named taken already exists")
    assert "--branch" in result.stderr and "branch -D" not in result.stderr  # a branch of yours is kept
    assert "triage" not in result.stderr  # refused before any stage ran
    assert git(repo, "rev-parse", "taken") == head


def test_fix_refuses_a_branch_name_git_rejects(tmp_path: Path) -> None:
    repo, log, _ = a_failing_checkout(tmp_path)
    result = ci_autofix("fix", str(log), "--repo", str(repo), "--branch", "a..b", cwd=tmp_path)
    assert_told(result, 2, "`a..b` is not a valid git branch name")
    assert "triage" not in result.stderr
    assert git(repo, "branch", "--list") == "* main"


def test_fix_names_a_repo_directory_that_does_not_exist(tmp_path: Path) -> None:
    _, log, _ = a_failing_checkout(tmp_path)
    result = ci_autofix("fix", "--repo", str(tmp_path / "nowhere"), str(log), cwd=tmp_path)
    assert_told(result, 2, f"The repository directory {tmp_path / 'nowhere'} does not exist.")
    assert "not installed" not in result.stderr


def test_fix_names_a_repo_that_is_a_file(tmp_path: Path) -> None:
    _, log, _ = a_failing_checkout(tmp_path)
    result = ci_autofix("fix", "--repo", str(log), str(log), cwd=tmp_path)
    assert_told(result, 2, f"{log} is a file, not a repository directory.")
    assert "not installed" not in result.stderr


def test_fix_on_empty_standard_input_says_the_log_is_empty(tmp_path: Path) -> None:
    repo, _, _ = a_failing_checkout(tmp_path)
    result = ci_autofix("fix", "--repo", str(repo), cwd=tmp_path, stdin=b"")
    assert_told(result, 2, "The log on standard input is empty.")
    assert "gh run view" in result.stderr
    assert "agent-disabled" not in result.stderr and "0 failure(s)" not in result.stderr


# ---- demo -------------------------------------------------------------------------------------
def test_demo_dir_that_is_a_file(tmp_path: Path) -> None:
    (tmp_path / "taken").write_text("mine\n")
    result = ci_autofix("demo", "--dir", str(tmp_path / "taken"), cwd=tmp_path)
    assert_told(result, 2, f"{tmp_path / 'taken'} is a file, not a directory.")
    assert (tmp_path / "taken").read_text() == "mine\n"


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs a /proc, where nothing can be created")
def test_demo_dir_that_cannot_be_created(tmp_path: Path) -> None:
    result = ci_autofix("demo", "--dir", "/proc/ci-autofix-nope", cwd=tmp_path)
    assert_told(result, 2, "Cannot create the sample project in /proc/ci-autofix-nope/statskit")


# ---- triage -----------------------------------------------------------------------------------
@pytest.mark.parametrize("size", ["beyond the output buffer", "within it, written at exit"])
def test_triage_into_a_closed_pipe_is_quiet(tmp_path: Path, size: str) -> None:
    """`ci-autofix triage LOG | head -2`, made certain: the reader is gone before the first write."""
    if size == "beyond the output buffer":
        _, log, _ = a_failing_checkout(tmp_path)
    else:
        log = tmp_path / "short.log"
        log.write_text("E   assert 1 == 2\n##[error]Process completed with exit code 1.\n")
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        result = ci_autofix("triage", str(log), cwd=tmp_path, stdout=write_end)
    finally:
        os.close(write_end)
    assert (result.returncode, result.stderr) == (0, "")


def test_triage_on_an_empty_log(tmp_path: Path) -> None:
    (tmp_path / "empty.log").write_bytes(b"\n \n")
    result = ci_autofix("triage", str(tmp_path / "empty.log"), cwd=tmp_path)
    assert_told(result, 2, f"The log {tmp_path / 'empty.log'} is empty.")
    assert result.stdout == ""


def test_triage_on_binary_bytes(tmp_path: Path) -> None:
    (tmp_path / "garbage.bin").write_bytes(bytes(range(128, 256)) * 80)  # no NUL: undecodable text
    result = ci_autofix("triage", str(tmp_path / "garbage.bin"), cwd=tmp_path)
    assert_told(result, 2, "is binary data, not the text of a CI log.")
    assert result.stdout == ""


def test_triage_on_the_zip_github_downloads_for_a_run(tmp_path: Path) -> None:
    with zipfile.ZipFile(tmp_path / "logs.zip", "w") as archive:
        archive.writestr(
            "0_test.txt", "2024-01-01T00:00:00.0000000Z ##[error]Process completed with exit code 1.\n"
        )
    result = ci_autofix("triage", str(tmp_path / "logs.zip"), cwd=tmp_path)
    assert_told(result, 2, "is a zip archive")
    assert "unzip it" in result.stderr


def test_a_log_with_a_few_latin1_bytes_is_still_a_log(tmp_path: Path) -> None:
    _, log, _ = a_failing_checkout(tmp_path)
    (tmp_path / "latin1.log").write_bytes(log.read_bytes() + b"caf\xe9 na\xefve r\xe9sum\xe9\n" * 5)
    result = ci_autofix("triage", str(tmp_path / "latin1.log"), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "ruff format --check" in result.stdout


def test_a_missing_file_reads_the_same_in_every_command(tmp_path: Path) -> None:
    missing = str(tmp_path / "missing.log")
    expected = f"Cannot read the log {missing}: No such file or directory."
    for command in ("fix", "triage"):
        assert_told(ci_autofix(command, missing, cwd=tmp_path), 2, expected)
    standalone = subprocess.run(
        [sys.executable, "-m", "ci_autofix.cli.triage", missing],
        capture_output=True,
        text=True,
        check=False,
    )
    assert_told(subprocess.CompletedProcess([], standalone.returncode, "", standalone.stderr), 2, expected)
    diff = str(tmp_path / "missing.diff")
    assert_told(
        ci_autofix("check-diff", diff, cwd=tmp_path),
        3,
        f"Cannot read the diff {diff}: No such file or directory.",
    )


# ---- the action, check-diff, --help -------------------------------------------------------------
def test_bare_command_outside_actions_points_at_the_local_commands(tmp_path: Path) -> None:
    summary = tmp_path / "summary.md"
    result = ci_autofix(cwd=tmp_path, env={"GITHUB_STEP_SUMMARY": str(summary)})
    assert_told(result, 2, "this is not a GitHub Actions run")
    assert "`ci-autofix fix LOG`" in result.stderr and "ci-autofix --help" in result.stderr
    assert "(none)" not in result.stderr and result.stdout == ""
    assert not summary.exists()


def test_check_diff_markdown_on_its_own_does_not_speak_of_a_push(tmp_path: Path) -> None:
    skipped = "import pytest\n\n\n@pytest.mark.skip\ndef test_a():\n    assert 1 == 1\n"
    repo = tmp_path / "repo"
    init_repo(repo, {"tests/test_a.py": skipped.replace("@pytest.mark.skip\n", "")})
    (repo / "tests" / "test_a.py").write_text(skipped)
    diff = git(repo, "diff").encode() + b"\n"
    result = ci_autofix("check-diff", "--format", "markdown", cwd=tmp_path, stdin=diff)
    assert result.returncode == 2
    assert result.stdout.startswith(
        "**Patch policy: blocked.** This diff breaks a rule that no fix may break.\n"
    )
    assert "pushed" not in result.stdout
    assert "| ⛔ block | `skip-marker-added` | `tests/test_a.py:4` |" in result.stdout


@pytest.mark.parametrize(
    ("command", "codes"),
    [
        (
            "fix",
            [
                "0 the fix is committed",
                "1 a partial fix",
                "2 a wrong argument or input",
                "3 halted without a fix",
                "130",
            ],
        ),
        (
            "demo",
            [
                "0 the sample's fix is committed",
                "1 a partial fix",
                "2 a wrong argument",
                "3 halted without a fix",
                "130",
            ],
        ),
        ("triage", ["0 the excerpt", "2 a wrong argument, or the log is missing, empty or not text", "130"]),
        ("check-diff", ["0 clean, 1 flagged, 2 blocked", "3 the diff cannot be read", "130"]),
    ],
)
def test_help_lists_every_exit_code(tmp_path: Path, command: str, codes: list[str]) -> None:
    result = ci_autofix(command, "--help", cwd=tmp_path, env={"COLUMNS": "1000"})
    assert result.returncode == 0
    epilog = result.stdout.split("exit codes:", 1)[1]
    for code in codes:
        assert code in epilog, code


# ---- fix on a repository that does not configure its formatter ------------------------------------
def an_unconfigured_checkout(tmp_path: Path) -> tuple[Path, Path]:
    """Badly formatted code, no ruff configuration and no workflow: the log alone names the check."""
    repo = tmp_path / "repo"
    init_repo(repo, {"app.py": BROKEN["app.py"]})
    log = tmp_path / "ci.log"
    log.write_bytes(job_log(repo, ["ruff format --check ."]))
    return repo, log


def test_fix_names_the_fixer_that_auto_did_not_pick(tmp_path: Path) -> None:
    repo, log = an_unconfigured_checkout(tmp_path)
    result = ci_autofix("fix", str(log), "--repo", str(repo), cwd=tmp_path)
    assert result.returncode == 3, result.stderr
    assert "halted (agent-disabled)" in result.stderr
    assert "pass `--fixers ruff-format` to run it anyway" in result.stderr
    assert git(repo, "branch", "--list", "ci-autofix/*") == ""
    chosen = ci_autofix("fix", str(log), "--repo", str(repo), "--fixers", "none", cwd=tmp_path)
    assert chosen.returncode == 3 and "--fixers ruff-format" not in chosen.stderr  # a choice is not overruled


def test_fix_says_when_there_was_no_check_to_verify_with(tmp_path: Path) -> None:
    repo, log = an_unconfigured_checkout(tmp_path)
    result = ci_autofix("fix", str(log), "--repo", str(repo), "--fixers", "ruff-format", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "+def f(x):" in result.stdout
    assert (
        "Verification: not run (no workflow step runs the failing command, and no --test-command"
        in result.stdout
    )
