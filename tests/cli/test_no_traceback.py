"""Property: whatever bytes a user passes as the log (or diff) and whatever arguments they type, every
command ends in a documented exit code and never in a traceback.

`triage` and `check-diff` only read, so they run in process through `cli.main` with the standard
streams swapped for buffers (many examples, fast). `fix` and `demo` write (a branch, a sample
project), so they run as the installed entrypoint in a subprocess whose cwd, HOME and TMPDIR are a
temporary directory, with fewer examples. A full demo run is left to tests/flows/local/test_cli.py.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

from ci_autofix import cli
from tests.testing.git import init_repo

TRACEBACK = "Traceback (most recent call last)"
BIN = Path(sys.executable).parent
# The exit codes each command's --help documents (argparse's usage errors are 2, --help is 0).
EXIT_CODES = {"fix": {0, 1, 2, 3}, "demo": {0, 1, 2, 3}, "triage": {0, 2}, "check-diff": {0, 1, 2, 3}}

LOG_LINES = [
    "2024-01-01T00:00:00.0000000Z ##[group]Run python -m pytest -q",
    "##[error]Process completed with exit code 1.",
    "E       assert 3 == 4",
    "FAILED tests/test_calc.py::test_add - assert 3 == 4",
    "Would reformat: app.py",
    "app.py:1:1: F401 [*] `os` imported but unused",
    "diff --git a/x.py b/x.py",
    "--- a/x.py",
    "+++ b/x.py",
    "@@ -1 +1 @@",
    "-old",
    "+new",
    "\x1b[31mred\x1b[0m",
]
# Bytes a user could pass: anything at all, text, or lines of real logs and diffs in any order.
LOGS = st.one_of(
    st.binary(max_size=2048),
    st.text(max_size=512).map(str.encode),
    st.lists(st.sampled_from(LOG_LINES) | st.text(max_size=40), max_size=20).map(
        lambda lines: "\n".join(lines).encode()
    ),
)
# What a shell can put in argv: any text but NUL (it ends a C string) and lone surrogates.
WORDS = st.text(st.characters(blacklist_categories=["Cs"], blacklist_characters="\x00"), max_size=16)


def arguments(vocabulary: list[str]) -> st.SearchStrategy[list[str]]:
    """Argument lists of up to six words: the command's own flags and values, or any text."""
    return st.lists(st.sampled_from(vocabulary) | WORDS, max_size=6)


@contextlib.contextmanager
def standard_streams(stdin: bytes) -> Iterator[tuple[io.StringIO, io.StringIO]]:
    """The process's standard streams, swapped for buffers (the edge of `main`, not our code)."""
    saved = sys.stdin, sys.stdout, sys.stderr
    out, err = io.StringIO(), io.StringIO()
    sys.stdin, sys.stdout, sys.stderr = io.TextIOWrapper(io.BytesIO(stdin)), out, err
    try:
        yield out, err
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved


def in_process(argv: list[str], stdin: bytes) -> tuple[int, str]:
    with standard_streams(stdin) as (_, err):
        try:
            code = cli.main(argv)
        except SystemExit as exit_:  # argparse: --help, --version, a usage error
            code = exit_.code if isinstance(exit_.code, int) else 2
    return code, err.getvalue()


def entrypoint(argv: list[str], stdin: bytes, cwd: Path) -> tuple[int, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "INPUT_", "GITHUB_"))}
    env.update(
        {"PATH": f"{BIN}{os.pathsep}{env.get('PATH', '')}", "HOME": str(cwd), "TMPDIR": str(cwd / "tmp")}
    )
    done = subprocess.run(
        [str(BIN / "ci-autofix"), *argv], cwd=cwd, input=stdin, capture_output=True, env=env, timeout=120
    )
    return done.returncode, done.stderr.decode(errors="replace")


def assert_documented(command: str, code: int, stderr: str) -> None:
    assert TRACEBACK not in stderr, stderr
    assert code in EXIT_CODES[command], (code, stderr)


# ---- in process: the commands that only read ----------------------------------------------------


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory, and the file each example writes its bytes to, for the read-only commands."""
    root = tmp_path_factory.mktemp("read")
    (root / "dir").mkdir()
    (root / "log").write_bytes(b"")
    return root


READ_VOCABULARY = [
    "-",
    "--",
    "-h",
    "--help",
    "--format",
    "text",
    "json",
    "markdown",
    "--max-tokens",
    "--protected",
    "--max-changed-lines",
    "--max-files",
    "0",
    "-1",
    "40",
    "many",
    "FILES/log",
    "FILES/dir",
    "FILES/missing",
]
FAST = settings(
    max_examples=120,
    database=None,  # nothing written beside the project
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


def _placed(args: list[str], files: Path) -> list[str]:
    return [str(files / a.removeprefix("FILES/")) if a.startswith("FILES/") else a for a in args]


@FAST
@given(log=LOGS, args=arguments(READ_VOCABULARY))
def test_triage_never_tracebacks(files: Path, log: bytes, args: list[str]) -> None:
    (files / "log").write_bytes(log)
    code, err = in_process(["triage", *_placed(args, files)], stdin=log)
    event(f"exit {code}")
    assert_documented("triage", code, err)


@FAST
@given(diff=LOGS, args=arguments(READ_VOCABULARY))
def test_check_diff_never_tracebacks(files: Path, diff: bytes, args: list[str]) -> None:
    (files / "log").write_bytes(diff)
    code, err = in_process(["check-diff", *_placed(args, files)], stdin=diff)
    event(f"exit {code}")
    assert_documented("check-diff", code, err)


# ---- the real entrypoint: the commands that write -----------------------------------------------
SLOW = settings(
    max_examples=15,
    database=None,
    deadline=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.function_scoped_fixture,
        HealthCheck.filter_too_much,
    ],
)


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The cwd, HOME and TMPDIR of `fix` and `demo`: a clean checkout, a file, a non-empty sample dir."""
    root = tmp_path_factory.mktemp("write")
    (root / "tmp").mkdir()
    init_repo(root / "repo", {"README.md": "A project with nothing to fix.\n"})
    (root / "a-file").write_text("not a directory\n")
    (root / "full" / "statskit").mkdir(parents=True)
    (root / "full" / "statskit" / "mine.txt").write_text("keep me\n")
    return root


FIX_VOCABULARY = [
    "-",
    "--",
    "-h",
    "--help",
    "LOG",
    "--repo",
    "repo",
    "a-file",
    "missing",
    ".",
    "--branch",
    "a..b",
    "main",
    "-x",
    "--fixers",
    "ruff-format",
    "nonesuch",
    "--max-turns",
    "--max-changed-lines",
    "0",
    "-1",
    "many",
    "--provider",
    "bedrock",
    "--require-verified",
    "--no-require-verified",
]
BAD_DIRS = ["a-file", "a-file/below", "full", "/proc/ci-autofix-nope"]
DEMO_VOCABULARY = ["--dir", *BAD_DIRS, "--", "-h", "--help", "-x"]
# Arbitrary words, or a --dir that cannot hold a new sample followed by arbitrary words.
DEMO_ARGUMENTS = arguments(DEMO_VOCABULARY) | st.tuples(
    st.sampled_from(BAD_DIRS), arguments(DEMO_VOCABULARY)
).map(lambda picked: ["--dir", picked[0], *picked[1]])


@SLOW
@given(log=LOGS, args=arguments(FIX_VOCABULARY))
def test_fix_never_tracebacks(workspace: Path, log: bytes, args: list[str]) -> None:
    (workspace / "LOG").write_bytes(log)
    code, err = entrypoint(["fix", "--repo", "repo", *args], stdin=log, cwd=workspace)
    event(f"exit {code}")
    assert_documented("fix", code, err)


@SLOW
@given(args=DEMO_ARGUMENTS)
def test_demo_never_tracebacks(workspace: Path, args: list[str]) -> None:
    assume(not _would_run_the_whole_demo(args))
    code, err = entrypoint(["demo", *args], stdin=b"", cwd=workspace)
    event(f"exit {code}")
    assert_documented("demo", code, err)
    assert (workspace / "full" / "statskit" / "mine.txt").read_text() == "keep me\n"


def _would_run_the_whole_demo(args: list[str]) -> bool:
    """True when the real parser accepts `args` and the sample could be created: minutes, not a mistake."""
    parser = cli.build_parser("demo")
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            ns: argparse.Namespace = parser.parse_args(["demo", *args])
    except SystemExit:
        return False
    return ns.dir is None or str(ns.dir) not in BAD_DIRS
