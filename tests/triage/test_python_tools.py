"""Each Python tool's parser on the real output of the real tool, wrapped in a GitHub job log."""

from __future__ import annotations

from pathlib import Path

import pytest

from ci_autofix.triage import Category, diagnose, estimate_tokens
from tests.testing.logformat import github_log, run_tool, write

BROKEN_CALC = {
    "calc.py": "def add(a, b):\n    return a - b\n",
    "tests/test_calc.py": (
        "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n\n\ndef test_ok():\n    assert True\n"
    ),
}


def test_pytest_assertion(tmp_path: Path) -> None:
    write(tmp_path, BROKEN_CALC)
    (tmp_path / "tests" / "__init__.py").write_text("")
    out = run_tool(["pytest", "-q", "-p", "no:cacheprovider", "--rootdir", str(tmp_path)], tmp_path)
    d = diagnose(github_log("python -m pytest -q", out))
    assert d.category is Category.TEST
    assert d.log_commands == ["python -m pytest -q"]
    tests = {f.test_id for f in d.failures if f.tool == "pytest"}
    assert "test_add" in tests
    assert "tests/test_calc.py::test_add" in tests
    block = next(f for f in d.failures if f.test_id == "test_add")
    assert block.file == "tests/test_calc.py" and block.line == 5
    assert "assert -1 == 3" in block.message
    assert "E       assert -1 == 3" in d.excerpt
    assert "##[error]Process completed with exit code 1." in d.excerpt
    assert "2026-08-14T" not in d.excerpt  # timestamps are stripped


def test_pytest_collection_error(tmp_path: Path) -> None:
    write(tmp_path, {"tests/test_broken.py": "import not_a_module_anywhere\n\ndef test_x():\n    pass\n"})
    out = run_tool(["pytest", "-q", "-p", "no:cacheprovider", "--rootdir", str(tmp_path)], tmp_path)
    d = diagnose(github_log("pytest", out, exit_code=2))
    collecting = [f for f in d.failures if f.rule == "collection-error"]
    assert collecting and collecting[0].file == "tests/test_broken.py"
    assert "ModuleNotFoundError: No module named 'not_a_module_anywhere'" in d.excerpt
    assert d.category is Category.TEST


def test_unittest(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "test_things.py": (
                "import unittest\n\n\nclass Things(unittest.TestCase):\n"
                "    def test_upper(self):\n        self.assertEqual('a'.upper(), 'B')\n"
            )
        },
    )
    out = run_tool(["unittest", "-v"], tmp_path)
    d = diagnose(github_log("python -m unittest -v", out))
    failure = next(f for f in d.failures if f.tool == "unittest")
    assert failure.test_id == "test_things.Things.test_upper"
    assert failure.rule == "FAIL"
    assert "AssertionError: 'A' != 'B'" in failure.message
    assert failure.file is not None and failure.file.endswith("test_things.py") and failure.line == 6
    assert d.category is Category.TEST


LINTABLE = {"pkg/mod.py": "import os\nimport sys\n\n\ndef f(x):\n    return x\n\n\nprint(sys.argv)\n"}


def test_ruff_check_full_output(tmp_path: Path) -> None:
    write(tmp_path, LINTABLE)
    out = run_tool(["ruff", "check", "--no-cache", "--select", "F", "pkg"], tmp_path)
    d = diagnose(github_log("ruff check .", out))
    assert d.category is Category.LINT
    [f] = [f for f in d.failures if f.tool == "ruff"]
    assert (f.rule, f.file, f.line, f.column) == ("F401", "pkg/mod.py", 1, 8)
    assert "`os` imported but unused" in f.message
    assert "F401 [*] `os` imported but unused" in d.excerpt and "--> pkg/mod.py:1:8" in d.excerpt


def test_ruff_check_concise_output(tmp_path: Path) -> None:
    write(tmp_path, LINTABLE)
    out = run_tool(
        ["ruff", "check", "--no-cache", "--select", "F", "--output-format", "concise", "pkg"], tmp_path
    )
    d = diagnose(github_log("ruff check --output-format concise .", out))
    [f] = [f for f in d.failures if f.tool == "ruff"]
    assert (f.rule, f.file, f.line, f.column) == ("F401", "pkg/mod.py", 1, 8)
    assert d.category is Category.LINT


def test_flake8(tmp_path: Path) -> None:
    write(tmp_path, LINTABLE)
    out = run_tool(["flake8", "--select", "F", "pkg"], tmp_path)
    d = diagnose(github_log("flake8 pkg", out))
    [f] = d.failures
    assert (f.tool, f.rule, f.file, f.line, f.column) == ("flake8", "F401", "pkg/mod.py", 1, 1)
    assert "'os' imported but unused" in f.message
    assert d.category is Category.LINT


def test_pylint(tmp_path: Path) -> None:
    write(tmp_path, LINTABLE)
    out = run_tool(["pylint", "--disable=all", "--enable=unused-import", "--persistent=n", "pkg"], tmp_path)
    d = diagnose(github_log("pylint pkg", out, exit_code=4))
    [f] = d.failures
    assert (f.tool, f.rule, f.file, f.line) == ("pylint", "W0611", "pkg/mod.py", 1)
    assert f.message.startswith("Unused import os")
    assert d.category is Category.LINT


def test_mypy(tmp_path: Path) -> None:
    write(tmp_path, {"app.py": 'def double(x: int) -> int:\n    return x * 2\n\n\ndouble("a")\n'})
    out = run_tool(["mypy", "--no-incremental", "--cache-dir", str(tmp_path / ".mypy"), "app.py"], tmp_path)
    d = diagnose(github_log("mypy app.py", out))
    [f] = d.failures
    assert (f.tool, f.file, f.line, f.rule) == ("mypy", "app.py", 5, "arg-type")
    assert 'incompatible type "str"' in f.message
    assert d.category is Category.TYPE


UGLY = {"src/ugly.py": "import sys,os\nx = { 'a':1 }\n"}


def test_black(tmp_path: Path) -> None:
    write(tmp_path, UGLY)
    out = run_tool(["black", "--check", "src"], tmp_path)
    d = diagnose(github_log("black --check src", out))
    [f] = d.failures
    assert (f.tool, f.kind) == ("black", "format") and f.file is not None and f.file.endswith("src/ugly.py")
    assert d.category is Category.FORMAT


def test_ruff_format(tmp_path: Path) -> None:
    write(tmp_path, UGLY)
    out = run_tool(["ruff", "format", "--check", "--no-cache", "src"], tmp_path)
    d = diagnose(github_log("ruff format --check src", out))
    [f] = d.failures
    assert (f.tool, f.kind, f.file) == ("ruff-format", "format", "src/ugly.py")
    assert d.category is Category.FORMAT


def test_isort(tmp_path: Path) -> None:
    write(tmp_path, UGLY)
    out = run_tool(["isort", "--check-only", "src"], tmp_path)
    d = diagnose(github_log("isort --check-only src", out))
    [f] = d.failures
    assert (f.tool, f.kind) == ("isort", "format") and f.file is not None and f.file.endswith("src/ugly.py")
    assert d.category is Category.FORMAT


def test_python_traceback(tmp_path: Path) -> None:
    write(tmp_path, {"boom.py": "def inner():\n    raise ValueError('bad value 42')\n\n\ninner()\n"})
    out = run_tool(["boom"], tmp_path)
    d = diagnose(github_log("python -m boom", out))
    [f] = d.failures
    assert f.tool == "python" and f.message == "ValueError: bad value 42" and f.line == 2
    assert "Traceback (most recent call last):" in d.excerpt and "ValueError: bad value 42" in d.excerpt


@pytest.mark.parametrize("budget", [50, 200, 1000])
def test_real_output_respects_small_budgets(tmp_path: Path, budget: int) -> None:
    write(tmp_path, BROKEN_CALC)
    out = run_tool(["pytest", "-q", "-p", "no:cacheprovider", "--rootdir", str(tmp_path)], tmp_path)
    d = diagnose(github_log("python -m pytest -q", out), max_tokens=budget)
    assert estimate_tokens(d.excerpt) <= budget
    assert d.excerpt_tokens == estimate_tokens(d.excerpt) and d.budget_tokens == budget
