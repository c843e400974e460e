"""Test infrastructure: collection hooks, runner configuration, test commands, files that run code implicitly."""

from __future__ import annotations

from collections.abc import Callable
from textwrap import dedent

import pytest

from ci_autofix.policy import Verdict
from tests.testing.policy_kinds import Case, check_case, edit, params

CONF = "tests/conftest.py"
CONF_BASE = dedent("""\
    import pytest


    @pytest.fixture
    def numbers():
        return [1, 2, 3]
""")
PYPROJECT = dedent("""\
    [project]
    name = "calc"
    version = "1.0"

    [tool.pytest.ini_options]
    testpaths = ["tests"]
    addopts = "-q"

    [tool.ruff]
    line-length = 100
""")
SETUP_CFG = "[metadata]\nname = calc\n\n[tool:pytest]\naddopts = -q\n"
PYTEST_INI = "[pytest]\naddopts = -q\n"
TOX = "[tox]\nenv_list = py311\n\n[testenv]\ndeps = pytest\ncommands = pytest {posargs}\n"
NOX = 'import nox\n\n\n@nox.session\ndef tests(session):\n    session.install("pytest")\n    session.run("pytest")\n'
MAKE = "test:\n\tpytest -q\n\nlint:\n\truff check .\n"
PKG = '{\n  "name": "calc",\n  "scripts": {\n    "test": "jest",\n    "lint": "eslint ."\n  }\n}\n'
JEST = 'module.exports = {\n  testEnvironment: "node",\n};\n'


def conf(extra: str) -> dict[str, str | None]:
    return {CONF: CONF_BASE + extra}


def py(old: str, new: str) -> dict[str, str | None]:
    return {"pyproject.toml": edit(PYPROJECT, old, new)}


CASES = [
    # ---- conftest hooks ------------------------------------------------------------------------------
    Case(
        "collect-ignore",
        {CONF: CONF_BASE},
        conf('\n\ncollect_ignore = ["test_calc.py"]\n'),
        "blocked",
        "collection-hook-added",
    ),
    Case(
        "modifyitems-deselect",
        {CONF: CONF_BASE},
        conf(
            "\n\ndef pytest_collection_modifyitems(config, items):\n    items[:] = [i for i in items if 'div' not in i.name]\n"
        ),
        "blocked",
        "collection-hook-added",
    ),
    Case(
        "report-rewrite",
        {CONF: CONF_BASE},
        conf(
            "\n\n@pytest.hookimpl(hookwrapper=True)\ndef pytest_runtest_makereport(item, call):\n"
            "    outcome = yield\n    report = outcome.get_result()\n    report.outcome = 'passed'\n"
        ),
        "blocked",
        "collection-hook-added",
    ),
    Case(
        "new-root-conftest-ignore-glob",
        {"tests/test_a.py": "def test_a():\n    assert 1 == 1\n"},
        {"conftest.py": 'collect_ignore_glob = ["tests/*"]\n'},
        "blocked",
        "collection-hook-added",
    ),
    # look-alike: a new fixture is test infrastructure, flagged for a look, not blocked
    Case(
        "conftest-fixture",
        {CONF: CONF_BASE},
        conf("\n\n@pytest.fixture\ndef zero():\n    return 0\n"),
        "flagged",
        "test-infra-changed",
    ),
    # ---- runner configuration ------------------------------------------------------------------------
    Case(
        "addopts-k",
        {"pyproject.toml": PYPROJECT},
        py('addopts = "-q"', "addopts = \"-q -k 'not div'\""),
        "blocked",
        "test-selection-narrowed",
    ),
    Case(
        "addopts-deselect",
        {"pyproject.toml": PYPROJECT},
        py('addopts = "-q"', 'addopts = "-q --deselect tests/test_calc.py::test_div"'),
        "blocked",
        "test-selection-narrowed",
    ),
    Case(
        "addopts-ignore",
        {"pyproject.toml": PYPROJECT},
        py('addopts = "-q"', 'addopts = "-q --ignore=tests/test_calc.py"'),
        "blocked",
        "test-selection-narrowed",
    ),
    Case(
        "testpaths",
        {"pyproject.toml": PYPROJECT},
        py('testpaths = ["tests"]', 'testpaths = ["tests/unit"]'),
        "blocked",
        "test-selection-narrowed",
    ),
    Case(
        "python-files",
        {"pyproject.toml": PYPROJECT},
        py('addopts = "-q"', 'addopts = "-q"\npython_files = ["check_*.py"]'),
        "blocked",
        "test-selection-narrowed",
    ),
    Case(
        "setup-cfg-deselect",
        {"setup.cfg": SETUP_CFG},
        {"setup.cfg": SETUP_CFG.replace("-q", "-q --deselect t.py::x")},
        "blocked",
        "test-selection-narrowed",
    ),
    Case(
        "pytest-ini-k",
        {"pytest.ini": PYTEST_INI},
        {"pytest.ini": PYTEST_INI.replace("-q", "-q -k 'not slow'")},
        "blocked",
        "test-selection-narrowed",
    ),
    Case(
        "jest-ignore",
        {"jest.config.js": JEST},
        {
            "jest.config.js": edit(
                JEST,
                '  testEnvironment: "node",\n',
                '  testEnvironment: "node",\n  testPathIgnorePatterns: ["calc"],\n',
            )
        },
        "blocked",
        "test-selection-narrowed",
    ),
    Case(
        "package-json-jest-ignore",
        {"package.json": PKG},
        {
            "package.json": edit(
                PKG, '  "scripts"', '  "jest": { "testPathIgnorePatterns": ["/calc/"] },\n  "scripts"'
            )
        },
        "blocked",
        "test-selection-narrowed",
    ),
    Case(
        "test-script-or-true",
        {"package.json": PKG},
        {"package.json": edit(PKG, '"test": "jest"', '"test": "jest || true"')},
        "blocked",
        "test-command-neutered",
    ),
    Case(
        "make-test-ignored",
        {"Makefile": MAKE},
        {"Makefile": edit(MAKE, "\tpytest -q\n", "\t-pytest -q\n")},
        "blocked",
        "test-command-neutered",
    ),
    Case(
        "make-test-true",
        {"Makefile": MAKE},
        {"Makefile": edit(MAKE, "\tpytest -q\n", "\tpytest -q || true\n")},
        "blocked",
        "test-command-neutered",
    ),
    Case(
        "nox-success-codes",
        {"noxfile.py": NOX},
        {"noxfile.py": edit(NOX, 'session.run("pytest")', 'session.run("pytest", success_codes=[0, 1])')},
        "blocked",
        "test-command-neutered",
    ),
    Case(
        "tox-ignore-outcome",
        {"tox.ini": TOX},
        {"tox.ini": edit(TOX, "commands = pytest", "ignore_outcome = true\ncommands = pytest")},
        "blocked",
        "test-command-neutered",
    ),
    Case(
        "tox-dash",
        {"tox.ini": TOX},
        {"tox.ini": edit(TOX, "commands = pytest", "commands = - pytest")},
        "blocked",
        "test-command-neutered",
    ),
    Case(
        "test-script-echo",
        {"package.json": PKG},
        {"package.json": edit(PKG, '"test": "jest"', '"test": "echo no tests yet"')},
        "blocked",
        "test-command-neutered",
    ),
    Case(
        "make-test-echo",
        {"Makefile": MAKE},
        {"Makefile": edit(MAKE, "\tpytest -q\n", "\t@echo skipping the tests on CI\n")},
        "blocked",
        "test-command-neutered",
    ),
    Case(
        "make-test-runner-spelt-differently",
        {"Makefile": MAKE},
        {"Makefile": edit(MAKE, "\tpytest -q\n", "\tpython -m pytest -q\n")},
        "flagged",
        "test-infra-changed",
    ),
    # look-alikes
    Case(
        "addopts-verbose",
        {"pyproject.toml": PYPROJECT},
        py('addopts = "-q"', 'addopts = "-q -ra"'),
        "flagged",
        "test-infra-changed",
    ),
    Case(
        "ruff-setting", {"pyproject.toml": PYPROJECT}, py("line-length = 100", "line-length = 110"), "clean"
    ),
    Case(
        "lint-script",
        {"package.json": PKG},
        {"package.json": edit(PKG, '"lint": "eslint ."', '"lint": "eslint . --fix"')},
        "clean",
    ),
    Case(
        "test-script-ci",
        {"package.json": PKG},
        {"package.json": edit(PKG, '"test": "jest"', '"test": "jest --ci"')},
        "flagged",
        "test-infra-changed",
    ),
    Case(
        "make-lint",
        {"Makefile": MAKE},
        {"Makefile": edit(MAKE, "\truff check .\n", "\t-ruff check .\n")},
        "clean",
    ),
    # ---- files that run code on import or on git calls -----------------------------------------------
    Case(
        "sitecustomize",
        {"src/app.py": "X = 1\n"},
        {"sitecustomize.py": "import os\n"},
        "blocked",
        "import-hook-file",
    ),
    Case(
        "usercustomize",
        {"src/app.py": "X = 1\n"},
        {"src/usercustomize.py": "print(1)\n"},
        "blocked",
        "import-hook-file",
    ),
    Case(
        "pth-file",
        {"src/app.py": "X = 1\n"},
        {"src/calc.pth": "import os; os.environ['X'] = '1'\n"},
        "blocked",
        "import-hook-file",
    ),
    Case(
        "gitattributes-filter",
        {".gitattributes": "*.png binary\n"},
        {".gitattributes": "*.png binary\n* filter=fix\n"},
        "blocked",
        "git-filter-attribute",
    ),
    Case(
        "gitattributes-textconv-diff",
        {".gitattributes": "*.png binary\n"},
        {".gitattributes": "*.png binary\n*.py diff=run\n"},
        "blocked",
        "git-filter-attribute",
    ),
    # look-alikes
    Case(
        "gitattributes-eol",
        {".gitattributes": "*.png binary\n"},
        {".gitattributes": "*.png binary\n*.sh text eol=lf\n"},
        "clean",
    ),
    Case("customize-module", {"src/app.py": "X = 1\n"}, {"src/customize.py": "X = 2\n"}, "clean"),
    Case("pth-in-a-name", {"src/app.py": "X = 1\n"}, {"docs/site.pth.md": "notes\n"}, "clean"),
]


@pytest.mark.parametrize(("case", "mode"), params(CASES))
def test_config_kinds(check_in: Callable[..., Verdict], case: Case, mode: str) -> None:
    check_case(check_in, case, mode)
