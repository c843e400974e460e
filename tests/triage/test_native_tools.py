"""The generic `file:line:col: error`, make and shell parsers on real gcc, make and bash output."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from ci_autofix.triage import Category, diagnose
from tests.testing.logformat import github_log, write

needs_gcc_and_make = pytest.mark.skipif(
    shutil.which("gcc") is None or shutil.which("make") is None, reason="gcc and make are not installed"
)


def _run(argv: list[str], cwd: Path) -> str:
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LC_ALL": "C"}
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=60, check=False, env=env)
    assert done.returncode != 0
    return done.stdout + done.stderr


@needs_gcc_and_make
def test_gcc_error_through_make(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "src/calc.c": "int add(int a, int b) {\n    return a + b\n}\n",
            "Makefile": "calc.o: src/calc.c\n\tgcc -c src/calc.c -o calc.o\n",
        },
    )
    out = _run(["make", "--no-print-directory"], tmp_path)
    d = diagnose(github_log("make", out, exit_code=2))
    assert d.category is Category.BUILD
    gcc = [f for f in d.failures if f.tool == "compiler"]
    assert gcc and (gcc[0].file, gcc[0].line) == ("src/calc.c", 2)
    assert "expected ';'" in gcc[0].message
    assert any(f.tool == "make" for f in d.failures)
    assert "    2 |     return a + b" in d.excerpt.splitlines()


def test_bash_command_not_found(tmp_path: Path) -> None:
    out = _run(["bash", "-c", "echo building; definitely-not-a-command-xyz --flag"], tmp_path)
    d = diagnose(github_log("./build.sh", out, exit_code=127))
    [f] = [f for f in d.failures if f.tool == "shell"]
    assert f.test_id == "definitely-not-a-command-xyz"
    assert "definitely-not-a-command-xyz: command not found" in d.excerpt
    assert d.log_commands == ["./build.sh"]
