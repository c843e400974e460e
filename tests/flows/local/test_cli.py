"""`ci-autofix fix` and `ci-autofix demo`, run as a user runs them: a subprocess on a real checkout."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

from ci_autofix.cli.demo import job_log
from ci_autofix.git import BOT_EMAIL, BOT_NAME
from tests.testing.calc_scenario import messages_process
from tests.testing.fakes.messages import reply, tool_use
from tests.testing.git import git, init_repo
from tests.testing.logformat import github_log, run_tool

BIN = Path(sys.executable).parent
BOT = f"{BOT_NAME} <{BOT_EMAIL}>"
BROKEN = {"pyproject.toml": "[tool.ruff]\nline-length = 100\n", "app.py": "def f( x ):\n    return x*2\n"}


def cli(
    *args: str,
    cwd: Path,
    home: Path,
    stdin: bytes | None = None,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """`ci-autofix ARGS` with `home` as HOME: the git it runs as you reads no configuration of this
    machine (no system config; a global one only where a test writes `home/.gitconfig`)."""
    home.mkdir(parents=True, exist_ok=True)
    base = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("ANTHROPIC_", "INPUT_", "GITHUB_", "GIT_", "XDG_CONFIG_HOME"))
    }
    base["PATH"] = f"{BIN}{os.pathsep}{base.get('PATH', '')}"
    base.update({"HOME": str(home), "GIT_CONFIG_NOSYSTEM": "1"})
    return subprocess.run(
        [str(BIN / "ci-autofix"), *args],
        cwd=cwd,
        input=stdin.decode() if stdin else None,
        capture_output=True,
        text=True,
        env={**base, **(env or {})},
        timeout=300,
    )


def test_fix_commits_on_a_side_branch_and_leaves_the_working_tree_alone(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    head = init_repo(repo, BROKEN)
    (repo / "notes.txt").write_text("my uncommitted work\n")
    log = job_log(repo, ["ruff format --check ."])
    (tmp_path / "ci.log").write_bytes(log)

    result = cli(
        "fix",
        str(tmp_path / "ci.log"),
        "--repo",
        str(repo),
        "--branch",
        "autofix/try",
        cwd=tmp_path,
        home=tmp_path / "home",
    )
    assert result.returncode == 0, result.stderr
    assert "triage" in result.stderr and "deterministic fixers" in result.stderr  # progress, stage by stage
    assert "+def f(x):" in result.stdout and "autofix/try" in result.stdout

    # the working tree, the index and HEAD are as they were; the fix is one commit on the new branch
    assert git(repo, "rev-parse", "HEAD") == head
    assert (repo / "app.py").read_text() == BROKEN["app.py"]
    assert git(repo, "status", "--porcelain") == "?? notes.txt"
    assert git(repo, "rev-parse", "autofix/try^") == head
    assert git(repo, "show", "autofix/try:app.py") == "def f(x):\n    return x * 2"
    assert git(repo, "worktree", "list").count("\n") == 0  # the temporary worktree is gone


def test_fix_reads_the_log_from_stdin(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    init_repo(repo, BROKEN)
    result = cli("fix", "-", cwd=repo, home=tmp_path / "home", stdin=job_log(repo, ["ruff format --check ."]))
    assert result.returncode == 0, result.stderr
    branches = git(repo, "branch", "--list", "ci-autofix/*")
    assert "ci-autofix/main/local-" in branches


def test_a_step_of_several_lines_is_named_whole(tmp_path: Path) -> None:
    """A two-line step (`ruff --version`, then the check) is named by both lines, not by the
    first, which is not what failed."""
    repo = tmp_path / "repo"
    init_repo(repo, BROKEN)
    output = run_tool(["ruff", "format", "--check", "."], repo)
    log = github_log("ruff --version\nruff format --check .", output)
    result = cli("fix", "-", cwd=repo, home=tmp_path / "home", stdin=log.encode())
    assert result.returncode == 0, result.stderr
    assert "the log names as failing: ruff --version; ruff format --check .\n" in result.stderr


def test_fix_halts_when_nothing_applies(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    init_repo(repo, {"test_x.py": "def test_x():\n    assert 1 == 2\n"})
    result = cli(
        "fix",
        "-",
        cwd=repo,
        home=tmp_path / "home",
        stdin=job_log(repo, ["python -m pytest -q -p no:cacheprovider"]),
    )
    assert result.returncode == 3
    assert "halted (agent-disabled)" in result.stderr
    assert "set the ANTHROPIC_API_KEY environment variable" in result.stderr  # not the Action's input
    assert "anthropic-api-key" not in result.stderr
    assert git(repo, "branch", "--list", "ci-autofix/*") == ""


def test_bad_input_is_a_clear_error(tmp_path: Path) -> None:
    result = cli(
        "fix", str(tmp_path / "missing.log"), "--repo", str(tmp_path), cwd=tmp_path, home=tmp_path / "home"
    )
    assert result.returncode == 2
    assert "Cannot read the log" in result.stderr and "What to do" in result.stderr
    result = cli("fix", "-", "--max-turns", "many", cwd=tmp_path, home=tmp_path / "home")
    assert result.returncode == 2 and "max-turns" in result.stderr


def test_demo_fixes_the_formatting_without_a_key(tmp_path: Path) -> None:
    result = cli("demo", "--dir", str(tmp_path / "d"), cwd=tmp_path, home=tmp_path / "home")
    assert result.returncode == 1, result.stderr  # partial: the test still fails
    project = tmp_path / "d" / "statskit"
    assert git(project, "show", "ci-autofix/demo:statskit.py").startswith(
        "def total(values):\n    return sum(values)"
    )
    assert "set ANTHROPIC_API_KEY" in result.stdout
    assert (
        "note: The fixers fixed part of the failure; the rest needs the agent: no Anthropic API key is "
        in result.stdout
    )
    assert "set the ANTHROPIC_API_KEY environment variable" in result.stdout  # as the last line names it
    assert "anthropic-api-key" not in result.stdout
    # "Verification: failed" says which check the fix settles and which one still fails
    assert "Verification: failed" in result.stdout
    assert "  ruff format --check .: passes now (exit 1 before the fix, exit 0 after)" in result.stdout
    assert "  python -m unittest -v: still fails (exit 1" in result.stdout
    assert (
        "  ruff check --no-fix statskit.py (lint): passes (exit 0 before the fix, exit 0 after)"
        in result.stdout
    )
    assert (tmp_path / "d" / "ci.log").read_bytes().count(
        b"##[error]Process completed with exit code 1."
    ) == 2
    # titled by what it fixes, not by the test failure it leaves; by the bot: git names no one here
    assert (
        git(project, "log", "-1", "--format=%s", "ci-autofix/demo") == "Fix the format failure (ruff-format)"
    )
    assert git(project, "log", "-1", "--format=%an <%ae>|%cn <%ce>", "ci-autofix/demo") == f"{BOT}|{BOT}"
    # reproduction says what it runs as it starts, before the results
    reproducing = result.stderr[result.stderr.index("reproducing the failure") :]
    started = [
        "  running python -m venv ",
        "  running pip install -e .",
        "  running ruff format --check .\n",
        "  running python -m unittest -v\n",
        "  ruff format --check .: exit 1",
    ]
    at = [reproducing.find(line) for line in started]
    assert -1 not in at and at == sorted(at), reproducing


def test_the_fix_commit_is_by_the_identity_git_names_in_the_checkout(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    init_repo(repo, BROKEN)
    git(repo, "config", "user.name", "Robin Local")
    git(repo, "config", "user.email", "robin@example.invalid")
    log = job_log(repo, ["ruff format --check ."])
    result = cli("fix", "-", "--branch", "autofix/mine", cwd=repo, home=tmp_path / "home", stdin=log)
    assert result.returncode == 0, result.stderr
    by = git(repo, "log", "-1", "--format=%an <%ae>|%cn <%ce>", "autofix/mine")
    assert by == "Robin Local <robin@example.invalid>|Robin Local <robin@example.invalid>"
    assert git(repo, "log", "-1", "--format=%s", "autofix/mine") == "Fix the format failure (ruff-format)"


def test_the_demo_commit_is_by_your_global_identity(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / ".gitconfig").write_text("[user]\n\tname = Sam Demo\n\temail = sam@example.invalid\n")
    result = cli("demo", "--dir", str(tmp_path / "d"), cwd=tmp_path, home=home)
    assert result.returncode == 1, result.stderr  # partial without a key
    project = tmp_path / "d" / "statskit"
    by = git(project, "log", "-2", "--format=%an <%ae>", "ci-autofix/demo").splitlines()
    assert by == ["Sam Demo <sam@example.invalid>", BOT]  # the fix is yours; the sample's commit the bot's


def test_demo_with_a_key_runs_the_agent_too(tmp_path: Path) -> None:
    editor = "str_replace_based_edit_tool"
    turns = [
        reply(
            tool_use(
                editor,
                {
                    "command": "str_replace",
                    "path": "statskit.py",
                    "old_str": "total(values) // len(values)",
                    "new_str": "total(values) / len(values)",
                },
            )
        ),
        reply(tool_use("run", {"command": "python -m unittest -v"})),
        reply(
            tool_use(
                "finish",
                {
                    "summary": "mean() used integer division.",
                    "root_cause": "statskit.py:7 //",
                    "confidence": "high",
                    "notes_left_as_is": [],
                },
            )
        ),
    ]
    env = {"ANTHROPIC_API_KEY": "sk-ant-api03-" + "d" * 40}
    with messages_process(turns, tmp_path) as (url, _):
        result = cli(
            "demo",
            "--dir",
            str(tmp_path / "d"),
            cwd=tmp_path,
            home=tmp_path / "home",
            env={**env, "ANTHROPIC_BASE_URL": url},
        )
    assert result.returncode == 0, result.stderr
    assert "fix agent" in result.stderr
    assert "turn 1: str_replace_based_edit_tool ($" in result.stderr  # turns and cost as it goes
    assert "Verification: verified" in result.stdout
    assert "mean() used integer division." in result.stdout
    fixed = git(tmp_path / "d" / "statskit", "show", "ci-autofix/demo:statskit.py")
    assert "return sum(values)" in fixed and "total(values) / len(values)" in fixed
    title = git(tmp_path / "d" / "statskit", "log", "-1", "--format=%s", "ci-autofix/demo")
    assert title == "Fix the format and test failures (ruff-format, the agent)"


def test_a_demo_whose_model_is_unreachable_keeps_what_the_fixers_did(tmp_path: Path) -> None:
    """The agent step fails (nothing listens at the API's address): the formatting fix the fixers
    made is kept on the demo's branch, and the message says where."""
    with socket.socket() as closed:  # a port nothing listens on
        closed.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{closed.getsockname()[1]}"
    env = {"ANTHROPIC_API_KEY": "sk-ant-api03-" + "u" * 40, "ANTHROPIC_BASE_URL": url}
    result = cli("demo", "--dir", str(tmp_path / "d"), cwd=tmp_path, home=tmp_path / "home", env=env)
    assert result.returncode == 3, result.stderr
    assert "halted (model-unavailable)" in result.stderr
    assert "kept on the local branch ci-autofix/demo" in result.stderr
    project = tmp_path / "d" / "statskit"
    kept = git(project, "show", "ci-autofix/demo:statskit.py")
    assert kept.startswith("def total(values):\n    return sum(values)")  # ruff format's work
    assert git(project, "rev-parse", "ci-autofix/demo^") == git(project, "rev-parse", "main")


def test_fix_gives_the_agent_the_logs_tool_over_its_log_file(tmp_path: Path) -> None:
    from tests.testing.calc_scenario import CALC_BROKEN, CALC_OK, CALC_TEST, PYTEST

    repo = tmp_path / "repo"
    ci = f"on: [push]\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - run: {PYTEST}\n"
    init_repo(repo, {"calc.py": CALC_BROKEN, "tests/test_calc.py": CALC_TEST, ".github/workflows/ci.yml": ci})
    log = job_log(repo, [PYTEST])
    (tmp_path / "ci.log").write_bytes(log)
    turns = [
        reply(tool_use("logs", {"action": "search", "pattern": "^E +assert"})),
        reply(
            tool_use(
                "str_replace_based_edit_tool",
                {"command": "str_replace", "path": "calc.py", "old_str": "a - b", "new_str": "a + b"},
            )
        ),
        reply(
            tool_use(
                "finish",
                {"summary": "add() subtracted.", "root_cause": "calc.py:3", "confidence": "high"},
            )
        ),
    ]
    env = {"ANTHROPIC_API_KEY": "sk-ant-api03-" + "l" * 40}
    with messages_process(turns, tmp_path) as (url, record):
        result = cli(
            "fix",
            str(tmp_path / "ci.log"),
            "--repo",
            str(repo),
            "--branch",
            "autofix/logs",
            cwd=tmp_path,
            home=tmp_path / "home",
            env={**env, "ANTHROPIC_BASE_URL": url},
        )
        sent = [json.loads(line)["body"] for line in record.read_text().splitlines()]
    assert result.returncode == 0, result.stderr
    assert git(repo, "show", "autofix/logs:calc.py") == CALC_OK.rstrip("\n")
    [searched] = [
        block["content"] for block in sent[1]["messages"][-1]["content"] if block.get("type") == "tool_result"
    ]
    number = next(
        n
        for n, line in enumerate(log.decode("utf-8-sig").splitlines(), 1)
        if "E       assert -1 == 5" in line
    )
    assert f"log:{number}: E       assert -1 == 5" in searched, searched  # the one job: the file given
