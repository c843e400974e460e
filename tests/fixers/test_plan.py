from __future__ import annotations

from pathlib import Path

import pytest

from ci_autofix.errors import UserError
from ci_autofix.fixers import FIXER_NAMES, parse_requested, plan_fixers, run_fixers
from ci_autofix.sandbox import Sandbox
from ci_autofix.triage.model import Category, Diagnosis, Failure
from tests.testing.fixer_projects import Project

UNFORMATTED = 'x = {  "a":1 }\n'
UNSORTED = "import sys\nimport os\n\nprint(os, sys)\n"


def _names(plan: list) -> list[str]:  # type: ignore[type-arg]
    return [spec.name for spec in plan]


def test_ruff_format_check_failure_plans_ruff_format(project: Project) -> None:
    project.write("pyproject.toml", '[project]\nname = "demo"\n\n[tool.ruff]\nline-length = 100\n')
    project.write("src/demo/core.py", UNFORMATTED)
    diagnosis = project.diagnose("ruff format --check .")
    [spec] = plan_fixers(project.root, diagnosis, ["auto"], diagnosis.log_commands)
    assert (spec.name, spec.args, spec.scope, spec.requirement) == ("ruff-format", (".",), (".",), None)
    assert "pyproject.toml [tool.ruff]" in spec.reason


def test_not_planned_when_the_repository_does_not_configure_the_tool(project: Project) -> None:
    project.write("pyproject.toml", '[project]\nname = "demo"\n')
    project.write("src/demo/core.py", UNFORMATTED)
    diagnosis = project.diagnose("ruff format --check .")
    assert diagnosis.failures  # the log does show ruff format failing
    assert plan_fixers(project.root, diagnosis, ["auto"], diagnosis.log_commands) == []
    # asked for by name, it runs all the same
    assert _names(plan_fixers(project.root, diagnosis, ["ruff-format"], diagnosis.log_commands)) == [
        "ruff-format"
    ]


def test_not_planned_for_a_test_failure(project: Project) -> None:
    project.write("ruff.toml", "line-length = 100\n")
    project.write("test_demo.py", "def test_sum():\n    assert 1 + 1 == 3\n")
    diagnosis = project.diagnose("ruff check .\nruff format --check .\npython -m pytest -q")
    assert {f.tool for f in diagnosis.failures} == {"pytest"}
    assert plan_fixers(project.root, diagnosis, ["auto"], diagnosis.log_commands) == []


def test_black_keeps_the_options_and_paths_of_the_failing_command(project: Project) -> None:
    project.write("pyproject.toml", "[tool.black]\ntarget-version = ['py311']\n")
    project.write("src/app.py", "def f(a,b):\n    return a+b\n")
    project.write("scripts/tool.py", "x=1\n")
    diagnosis = project.diagnose("black --check --diff -l 100 src")
    [spec] = plan_fixers(project.root, diagnosis, ["auto"], diagnosis.log_commands)
    assert (spec.name, spec.args, spec.scope) == ("black", ("-l", "100", "src"), ("src",))


def test_isort_from_isort_cfg(project: Project) -> None:
    project.write(".isort.cfg", "[settings]\nprofile = black\n")
    project.write("pkg/mod.py", UNSORTED)
    diagnosis = project.diagnose("isort --check-only --diff pkg")
    [spec] = plan_fixers(project.root, diagnosis, ["auto"], diagnosis.log_commands)
    assert (spec.name, spec.args, spec.scope) == ("isort", ("pkg",), ("pkg",))


def test_ruff_check_failure_with_a_pinned_ruff(project: Project) -> None:
    project.write("requirements-dev.txt", "pytest\nruff==0.8.6\n")
    project.write("ruff.toml", '[lint]\nselect = ["F"]\n')
    project.write("app.py", UNSORTED.replace("print(os, sys)", "print(sys)"))
    diagnosis = project.diagnose("ruff check --output-format=github .")
    [spec] = plan_fixers(project.root, diagnosis, ["auto"], diagnosis.log_commands)
    assert (spec.name, spec.args, spec.scope) == ("ruff-check", (".",), (".",))
    assert spec.requirement is not None and spec.requirement.exact == "0.8.6"
    assert spec.pin_source == "requirements-dev.txt"


def test_paths_outside_the_repository_fall_back_to_the_repository(project: Project) -> None:
    project.write("pyproject.toml", "[tool.black]\n")
    project.write("app.py", "x=1\n")
    diagnosis = Diagnosis(
        [Failure("black", "format", "would reformat", file="app.py")],
        ["black --check ../elsewhere /home/runner/work/demo/demo $GITHUB_WORKSPACE"],
        Category.FORMAT,
        "",
        0,
        6000,
    )
    [spec] = plan_fixers(project.root, diagnosis, ["auto"], diagnosis.log_commands)
    assert (spec.args, spec.scope) == ((".",), (".",))


def test_pre_commit_failure_plans_the_failed_hooks_with_their_pins(project: Project) -> None:
    project.write(
        ".pre-commit-config.yaml",
        """\
repos:
  - repo: https://github.com/astral-sh/ruff-pre-commit
    rev: v0.8.6
    hooks:
      - id: ruff
        args: [--fix]
      - id: ruff-format
  - repo: https://github.com/pycqa/isort
    rev: 5.13.2
    hooks:
      - id: isort
        args: ["--profile", "black"]
""",
    )
    project.write("requirements-dev.txt", "ruff==0.9.0\n")
    excerpt = (
        "ruff.....................................................................Passed\n"
        "ruff-format..............................................................Failed\n"
        "- hook id: ruff-format\n- files were modified by this hook\n\n1 file reformatted\n"
        "isort (python)...........................................................Failed\n"
        "- hook id: isort\n- files were modified by this hook\n"
    )
    diagnosis = Diagnosis(
        [Failure("generic", "error", "Process completed with exit code 1.")],
        ["pre-commit run --all-files --show-diff-on-failure"],
        Category.UNKNOWN,
        excerpt,
        0,
        6000,
    )
    plan = plan_fixers(project.root, diagnosis, ["auto"], diagnosis.log_commands)
    assert [(s.name, s.args, s.requirement.spec if s.requirement else None) for s in plan] == [
        ("isort", ("--profile", "black", "."), "==5.13.2"),
        ("ruff-format", (".",), "==0.8.6"),  # pre-commit's rev, not requirements-dev.txt: pre-commit failed
    ]
    assert plan[1].reason.startswith("the pre-commit hook `ruff-format` failed")


def test_generic_failure_falls_back_to_the_commands(project: Project) -> None:
    project.write("pyproject.toml", "[tool.ruff]\n")
    diagnosis = Diagnosis([], ["ruff check src && ruff format --check src"], Category.UNKNOWN, "", 0, 6000)
    project.write("src/a.py", "")
    assert _names(plan_fixers(project.root, diagnosis, ["auto"], diagnosis.log_commands)) == [
        "ruff-check",
        "ruff-format",
    ]


def test_requested_names_run_in_the_fixed_order() -> None:
    assert parse_requested(["black", "isort", "ruff-format", "ruff-check"]) == [
        "isort",
        "ruff-check",
        "black",
        "ruff-format",
    ]
    assert parse_requested(["auto"]) is None
    assert parse_requested([]) is None
    assert parse_requested(["none"]) == []
    assert parse_requested([" Black "]) == ["black"]


@pytest.mark.parametrize("requested", [["biome"], ["none", "black"], ["auto", "black"]])
def test_unknown_fixer_names_the_input_and_the_accepted_values(requested: list[str]) -> None:
    with pytest.raises(UserError) as caught:
        parse_requested(requested)
    assert "`fixers`" in caught.value.cause
    assert all(name in caught.value.remedy for name in ("auto", "none", *FIXER_NAMES))


def test_an_infrastructure_failure_plans_nothing(project: Project) -> None:
    project.write("pyproject.toml", "[tool.ruff]\n")
    diagnosis = Diagnosis(
        [],
        ["ruff format --check ."],
        Category.RUNNER_LOST,
        "",
        0,
        6000,
        infra_reason="The runner has received a shutdown signal.",
    )
    assert plan_fixers(project.root, diagnosis, ["auto"], diagnosis.log_commands) == []
    assert _names(plan_fixers(project.root, diagnosis, ["ruff-format"], diagnosis.log_commands)) == [
        "ruff-format"
    ]


def test_a_tool_listed_only_in_setup_py_extras_is_configured_when_the_failing_step_runs_it(
    project: Project,
) -> None:
    project.write(
        "setup.py",
        "from setuptools import setup\n\nsetup(name='demo', extras_require={'dev': ['black', 'pytest']})\n",
    )
    project.write("demo.py", UNFORMATTED)
    diagnosis = project.diagnose("black --check .")
    [spec] = plan_fixers(project.root, diagnosis, ["auto"], ["black --check ."])
    assert (spec.name, spec.args) == ("black", (".",))
    assert spec.reason.endswith("the repository configures black (setup.py)")
    # a tool the repository lists nowhere is still not its tool
    (project.root / "setup.py").write_text("from setuptools import setup\n\nsetup(name='demo')\n")
    assert plan_fixers(project.root, diagnosis, ["auto"], ["black --check ."]) == []


def test_a_step_that_prints_the_version_first_is_read_by_command(project: Project, tools_dir: Path) -> None:
    project.write("pyproject.toml", '[project]\nname = "demo"\n\n[tool.black]\n')
    project.write("src/demo.py", UNFORMATTED)
    project.write("outside.py", UNFORMATTED)  # not what the step checks: left alone
    project.commit()
    step = "black --version\nblack --check src"
    diagnosis = project.diagnose(step)
    [spec] = plan_fixers(project.root, diagnosis, ["auto"], [step])
    assert (spec.args, spec.scope) == (("src",), ("src",))
    [run] = run_fixers(Sandbox(project.root), [spec], tools_dir=tools_dir, timeout=120)
    assert run.argv[1:] == ["src"]  # never `black --version src`
    assert (run.exit_code, run.changed_files) == (0, ["src/demo.py"])
    assert project.read("outside.py") == UNFORMATTED


MAKEFILE = """\
VENV ?= .venv
BLACK = $(VENV)/bin/black  # as the workflow's virtualenv has it

.PHONY: check format-check
check: format-check
format-check:
\t@echo checking
\t@$(BLACK) --check src
"""
TOX = "[tox]\nenv_list = lint\n\n[testenv:lint]\ndeps = black\ncommands =\n    black --check {posargs} src\n"
NOX = (
    "import nox\n\n\n@nox.session\ndef lint(session):\n"
    "    session.install('black')\n    session.run('black', '--check', 'src')\n"
)


@pytest.mark.parametrize(
    ("files", "step"),
    [
        ({"Makefile": MAKEFILE}, "make check"),
        ({"Makefile": MAKEFILE}, "uv run make -C . format-check"),
        ({"tox.ini": TOX}, "tox run -e lint"),
        ({"tox.ini": TOX}, "tox -e lint"),
        ({"noxfile.py": NOX}, "nox -s lint"),
    ],
)
def test_a_task_runner_step_is_read_through_to_the_tool_it_runs(
    project: Project, tools_dir: Path, files: dict[str, str], step: str
) -> None:
    project.write("pyproject.toml", '[project]\nname = "demo"\n\n[tool.black]\n')
    project.write("src/demo.py", UNFORMATTED)
    project.write("outside.py", UNFORMATTED)
    for name, text in files.items():
        project.write(name, text)
    project.commit()
    diagnosis = project.diagnose("black --check src")  # what the recipe printed when CI ran it
    [spec] = plan_fixers(project.root, diagnosis, ["auto"], [step])
    assert (spec.name, spec.args, spec.scope) == ("black", ("src",), ("src",))
    [run] = run_fixers(Sandbox(project.root), [spec], tools_dir=tools_dir, timeout=120)
    assert (run.exit_code, run.changed_files) == (0, ["src/demo.py"])
    assert project.read("outside.py") == UNFORMATTED


def test_a_target_that_is_not_there_plans_from_the_log_alone(project: Project) -> None:
    project.write("pyproject.toml", '[project]\nname = "demo"\n\n[tool.black]\n')
    project.write("Makefile", MAKEFILE)
    project.write("src/demo.py", UNFORMATTED)
    diagnosis = project.diagnose("black --check src")
    [spec] = plan_fixers(project.root, diagnosis, ["auto"], ["make lint"])
    assert (spec.name, spec.scope) == ("black", (".",))  # the whole repository: nothing narrower is known


# ---- Go, Rust and Node: the same rules (the step ran the tool in check mode; the repository configures it)
def _generic(command: str) -> Diagnosis:
    return Diagnosis([], [command], Category.UNKNOWN, "", 0, 6000)


@pytest.mark.parametrize(
    ("files", "command", "planned"),
    [
        ({"go.mod": "module x\n"}, 'test -z "$(gofmt -l .)"', ("gofmt", (".",), (".",))),
        ({"go.mod": "module x\n"}, "gofmt -s -d pkg", ("gofmt", ("-s", "pkg"), ("pkg",))),
        ({"Cargo.toml": "[package]\n"}, "cargo fmt --all -- --check", ("cargo-fmt", ("--all",), (".",))),
        (
            {"package.json": '{"devDependencies": {"prettier": "3.3.3"}}'},
            "npx prettier --check src",
            ("prettier", ("src",), ("src",)),
        ),
        (
            {"eslint.config.js": "export default [];\n"},
            "npm exec -- eslint --max-warnings 0 .",
            ("eslint", (".",), (".",)),
        ),
        ({"go.mod": "module x\n"}, 'test -z "$(goimports -l -local example.com .)"',
         ("goimports", ("-local", "example.com", "."), (".",))),
        ({"biome.json": "{}\n"}, "npx biome ci .", ("biome-check", (".",), (".",))),
        ({"biome.jsonc": "{}\n"}, "npx @biomejs/biome check --reporter=github src",
         ("biome-check", ("src",), ("src",))),
        ({"package.json": '{"devDependencies": {"@biomejs/biome": "1.9.4"}}'},
         "npx biome format --line-width 100 src", ("biome-format", ("--line-width", "100", "src"), ("src",))),
        ({"biome.json": "{}\n"}, "pnpm exec biome lint --max-diagnostics 50 .", ("biome-lint", (".",), (".",))),
    ],
)  # fmt: skip
def test_go_rust_and_node_checks_plan_their_fixers(
    project: Project, files: dict[str, str], command: str, planned: tuple[object, ...]
) -> None:
    for rel, text in {**files, "pkg/a.go": "", "src/a.js": ""}.items():
        project.write(rel, text)
    [spec] = plan_fixers(project.root, _generic(command), ["auto"], [command])
    assert (spec.name, spec.args, spec.scope) == planned
    assert (spec.requirement, spec.pin_source) == (
        None,
        None,
    )  # the runtime's or the lockfile's, never PyPI's
    assert "the repository configures" in spec.reason


NODE_SCRIPTS = """{
  "devDependencies": {"prettier": "3.4.2"},
  "scripts": {
    "pretest": "npm run -s lint",
    "test": "jest",
    "lint": "prettier --check '{src,test}/**/*.ts' README.md",
    "fmtcheck": "prettier --check \\"src/**/*.ts\\" \\"__tests__/**/*.ts\\"",
    "lint:format:check": "prettier --check ."
  }
}"""


@pytest.mark.parametrize(
    ("command", "args", "scope"),
    [
        ("npm run fmtcheck", ("src/**/*.ts", "__tests__/**/*.ts"), ("src", "__tests__")),
        ("npm test", ("README.md", "{src,test}/**/*.ts"), ("README.md", ".")),
        ("yarn lint:check\nyarn lint:format:check", (".",), (".",)),
        ("yarn prettier --check src", ("src",), ("src",)),  # a binary, not a script
    ],
)
def test_a_prettier_behind_a_package_json_script_is_planned_with_the_scripts_patterns(
    project: Project, command: str, args: tuple[str, ...], scope: tuple[str, ...]
) -> None:
    """The step runs a script (`npm run fmtcheck`, `npm test` through `pretest`); the script runs
    prettier on quoted globs, which prettier expands itself: the fixer writes the same patterns,
    kept to the directories they start in, never the whole repository (a `dist/` bundle)."""
    for rel, text in {
        "package.json": NODE_SCRIPTS,
        "src/a.ts": "",
        "__tests__/a.ts": "",
        "README.md": "",
    }.items():
        project.write(rel, text)
    [spec] = plan_fixers(project.root, _generic(command), ["auto"], [command])
    assert (spec.name, spec.args, spec.scope) == ("prettier", args, scope)
    assert "the failing step ran `prettier --check" in spec.reason


GOFMT_SCRIPT = """#!/bin/bash

if [ -n "$(gofmt -l .)" ]; then
  echo "Go code is not formatted:"
  gofmt -d .
  exit 1
fi
"""


@pytest.mark.parametrize("command", ["./.ci.gofmt.sh", "bash .ci.gofmt.sh", "FOO=1 sh ./.ci.gofmt.sh"])
def test_a_script_the_step_runs_is_read_through_to_its_commands(project: Project, command: str) -> None:
    """stretchr/testify's `./.ci.gofmt.sh`: the script is read as words (never run), `$(...)` included."""
    project.write("go.mod", "module x\n")
    project.write(".ci.gofmt.sh", GOFMT_SCRIPT)
    [spec] = plan_fixers(project.root, _generic(command), ["auto"], [command])
    assert (spec.name, spec.args, spec.scope) == ("gofmt", (".",), (".",))


def test_a_program_run_by_its_path_is_not_read_as_a_script(project: Project) -> None:
    project.write("package.json", '{"devDependencies": {"prettier": "3.4.2"}}')
    project.write("node_modules/.bin/prettier", "#!/usr/bin/env node\nrequire('../prettier/bin')\n")
    project.write("src/a.js", "")
    command = "./node_modules/.bin/prettier --check src"
    [spec] = plan_fixers(project.root, _generic(command), ["auto"], [command])
    assert (spec.name, spec.args) == ("prettier", ("src",))
    assert plan_fixers(project.root, _generic("./missing.sh"), ["auto"], ["./missing.sh"]) == []


def test_a_glob_leaving_the_repository_is_not_passed_on(project: Project) -> None:
    project.write("package.json", '{"devDependencies": {"prettier": "3.4.2"}}')
    project.write("src/a.ts", "")
    command = "npx prettier --check '../**/*.ts' '/etc/*' 'src/**/../../../*.ts' 'src/**/*.ts'"
    [spec] = plan_fixers(project.root, _generic(command), ["auto"], [command])
    assert (spec.args, spec.scope) == (("src/**/*.ts",), ("src",))


@pytest.mark.parametrize(
    "command",
    [
        'test -z "$(gofmt -l .)"',
        "cargo fmt --check",
        "npx prettier --check .",
        "eslint .",
        "goimports -l .",
        "npx biome ci .",
    ],
)
def test_a_tool_the_repository_does_not_configure_is_not_planned(project: Project, command: str) -> None:
    project.write("README.md", "hi\n")
    assert plan_fixers(project.root, _generic(command), ["auto"], [command]) == []
    # a formatter that only ran (not in check mode) is not a failing check either
    assert plan_fixers(project.root, _generic("gofmt -w ."), ["auto"], ["gofmt -w ."]) == []
