"""A failed step replayed here: wrappers, tox and nox sessions and repository scripts read through to
the tool invocations inside them, from the failing commit's files, and run with real tools."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

from ci_autofix.git import Git
from ci_autofix.sandbox import Sandbox
from ci_autofix.workflow.definition import FailedStep, failed_step_commands, files_at
from ci_autofix.workflow.replay import replay
from tests.testing.git import clone, commit, init_repo

CI = ".github/workflows/lint.yml"
UNFORMATTED = {"pyproject.toml": '[project]\nname = "demo"\nversion = "0"\n', "demo.py": "x = {  'a':1 }\n"}


def _step(run: str, before: str = "") -> str:
    script = "".join(f"          {line}\n" for line in run.splitlines())
    return f"""\
on: push
jobs:
  lint:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
{before}      - name: Lint
        run: |
{script}"""


def _replayed(
    tmp_path: Path, files: dict[str, str], run: str, before: str = ""
) -> tuple[Path, list[str], list[str], list[str]]:
    """The checkout, and the failed step's command lines, setup and notes as the workflow reader gives them."""
    source = tmp_path / "repo"
    init_repo(source, {**UNFORMATTED, **files})
    sha = commit(source, {CI: _step(run, before)}, "CI")
    found = failed_step_commands(Git(source), sha, CI, [FailedStep("lint", "Lint")])
    [command] = found.commands
    return clone(source, tmp_path / "checkout"), command.command.splitlines(), found.setup, found.notes


def _ours(checkout: Path) -> Sandbox:
    """The prepared environment: our tools first on PATH, and no uv, poetry, tox or nox to run."""
    return dataclasses.replace(
        Sandbox(checkout), extra_env={"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin"}
    )


def test_a_uv_run_wrapper_is_peeled_and_the_tool_runs_in_our_environment(tmp_path: Path) -> None:
    checkout, lines, setup, notes = _replayed(
        tmp_path,
        {},
        "uv run --frozen --group lint black --check .\npoetry run ruff check .\npoetry run mypy -p demo",
    )
    assert lines == ["black --check .", "ruff check .", "mypy -p demo"]  # `-p` is mypy's here, not a project
    assert setup == []
    assert notes[0] == (
        "`uv run --frozen --group lint black --check .` runs `black --check .` in the environment uv set up "
        "in CI: here it runs in ci-autofix's prepared environment, with the tools at the versions CI ran."
    )
    ran = _ours(checkout).run_command_line("\n".join(lines))
    assert ran.exit_code == 1 and "1 file would be reformatted" in ran.output  # black's own verdict


def test_a_wrapper_in_another_directory_or_with_shell_syntax_runs_as_written(tmp_path: Path) -> None:
    _, lines, _, notes = _replayed(
        tmp_path,
        {},
        "uv run --directory sub ruff check .\nuv run ruff check $DIRS\nuv run ruff check . && echo ok",
    )
    assert lines == [
        "uv run --directory sub ruff check .",
        "uv run ruff check $DIRS",
        "uv run ruff check . && echo ok",
    ]
    assert notes == [
        "`uv run --directory sub ruff check .` runs in another directory, so it is run as written."
    ]


TOX_INI = """\
[tox]
envlist = py,lint

[testenv:lint]
skip_install = true
commands =
    black --check --diff demo.py
    ruff check {toxinidir}
deps =
    black
    ruff~=0.8  # the linter
"""


def test_a_tox_environment_is_its_commands_and_its_deps_join_the_setup(tmp_path: Path) -> None:
    checkout, lines, setup, notes = _replayed(
        tmp_path, {"tox.ini": TOX_INI}, "tox -e lint", before="      - run: pip install tox\n"
    )
    assert lines == ["black --check --diff demo.py", "ruff check ."]
    assert setup == ["python -m pip install tox", "python -m pip install black 'ruff~=0.8'"]
    assert notes == [
        "`tox -e lint` is replayed as the commands tox.ini gives it, in ci-autofix's prepared environment: "
        "`black --check --diff demo.py`; `ruff check .`; it installs `black ruff~=0.8` first."
    ]
    ran = _ours(checkout).run_command_line("\n".join(lines))
    assert ran.exit_code == 1 and "would reformat demo.py" in ran.output


def test_a_tox_environment_with_a_substitution_runs_as_written(tmp_path: Path) -> None:
    tox = TOX_INI.replace("black --check", "{envpython} -m black --check")
    _, lines, setup, notes = _replayed(tmp_path, {"tox.ini": tox}, "tox run -e lint")
    assert (lines, setup) == (["tox run -e lint"], [])
    assert "`{envpython} -m black --check --diff demo.py`, which is not plain words" in notes[0]


NOXFILE = """\
import nox


@nox.session
def lint(session):
    session.install("black==24.1.1", "ruff")
    session.run("black", "--check", ".")
"""


def test_a_nox_session_is_its_runs_and_its_installs_join_the_setup(tmp_path: Path) -> None:
    checkout, lines, setup, _ = _replayed(tmp_path, {"noxfile.py": NOXFILE}, "nox -s lint")
    assert lines == ["black --check ."]
    assert setup == ["python -m pip install black==24.1.1 ruff"]
    ran = _ours(checkout).run_command_line("\n".join(lines))
    assert ran.exit_code == 1 and "1 file would be reformatted" in ran.output


def test_a_tool_uv_fetches_is_its_command_and_a_nox_session_under_it_is_read_through(tmp_path: Path) -> None:
    checkout, lines, setup, notes = _replayed(
        tmp_path,
        {"noxfile.py": NOXFILE},
        "uvx nox -s lint\nuv tool run black --check .\nuvx --from black==24.1.1 black --check .\nuvx black@24.1.1 --check .",
    )
    assert lines == [
        "black --check .",
        "black --check .",
        "uvx --from black==24.1.1 black --check .",
        "uvx black@24.1.1 --check .",
    ]
    assert setup == ["python -m pip install black==24.1.1 ruff"]  # the nox session's installs
    assert notes[0] == (
        "`uvx nox -s lint` runs `nox -s lint` as a tool uv fetched in CI: here it runs in ci-autofix's "
        "prepared environment, with the tools at the versions CI ran."
    )
    assert notes[-2:] == [
        "`uvx --from black==24.1.1 black --check .` chooses the tool's package or version itself, so it is run as written.",
        "`uvx black@24.1.1 --check .` chooses the tool's package or version itself, so it is run as written.",
    ]
    ran = _ours(checkout).run_command_line("\n".join(lines[:2]))
    assert ran.exit_code == 1 and "1 file would be reformatted" in ran.output


LINT_SH = """\
#!/bin/bash
set -euxo pipefail

poetry run black --check .
poetry run isort --check-only demo.py
"""


def test_a_plain_repository_script_is_read_as_its_commands_in_its_own_subshell(tmp_path: Path) -> None:
    checkout, lines, _, notes = _replayed(tmp_path, {"scripts/lint.sh": LINT_SH}, "./scripts/lint.sh")
    assert lines == [
        "(",
        "set +e",
        "set -euxo pipefail",
        "black --check .",
        "isort --check-only demo.py",
        ")",
    ]
    assert notes[0] == (
        "`./scripts/lint.sh` runs the repository's script `scripts/lint.sh`, read as its commands: "
        "`poetry run black --check .`; `poetry run isort --check-only demo.py`."
    )
    ran = _ours(checkout).run_command_line("\n".join(lines))
    assert ran.exit_code == 1 and "would reformat" in ran.output
    assert "isort" not in ran.output.split("would reformat", 1)[1]  # its own `set -e` stopped it at black
    # as written, the script needs poetry, which is not here
    assert _ours(checkout).run_command_line("bash scripts/lint.sh").exit_code == 127


def test_a_script_that_is_not_plain_commands_runs_as_written_and_says_why(tmp_path: Path) -> None:
    script = LINT_SH + 'for f in src/*.py; do echo "$f"; done\n'
    _, lines, _, notes = _replayed(tmp_path, {"scripts/lint.sh": script}, "bash scripts/lint.sh")
    assert lines == ["bash scripts/lint.sh"]
    assert notes == [
        "`bash scripts/lint.sh` runs the repository's script `scripts/lint.sh`, whose line 6 "
        '(`for f in src/*.py; do echo "$f"; done`) is not a plain command, so the script is run as written.'
    ]


def test_a_pdm_script_is_its_command_and_files_come_from_the_commit(tmp_path: Path) -> None:
    pyproject = UNFORMATTED["pyproject.toml"] + '\n[tool.pdm.scripts]\nlint = "black --check ."\n'
    _, lines, _, _ = _replayed(tmp_path, {"pyproject.toml": pyproject}, "pdm run lint\npdm run ruff check .")
    assert lines == ["black --check .", "ruff check ."]
    # what is read is the commit's, never a path outside the repository
    source = tmp_path / "repo"
    read = files_at(Git(source), Git(source).rev_parse("HEAD"))
    assert read("pyproject.toml") == pyproject and read("../repo/pyproject.toml") is None
    assert replay("bash /etc/profile\nsh ../x.sh", read).script == "bash /etc/profile\nsh ../x.sh"


PRE_COMMIT = """\
repos:
  - repo: https://github.com/psf/black-pre-commit-mirror
    rev: 24.1.1
    hooks:
      - id: black
        args: [--skip-string-normalization]
  - repo: https://github.com/astral-sh/ruff-pre-commit
    rev: v0.8.6
    hooks:
      - id: ruff
        args: [--fix, --exit-non-zero-on-fix]
"""
FLAKE8 = """\
  - repo: https://github.com/PyCQA/flake8
    rev: 7.0.0
    hooks:
      - id: flake8
"""


def test_pre_commit_hooks_of_our_tools_are_replayed_as_their_checks(tmp_path: Path) -> None:
    checkout, lines, _, notes = _replayed(
        tmp_path, {".pre-commit-config.yaml": PRE_COMMIT}, "pre-commit run --all-files --show-diff-on-failure"
    )
    assert lines == ["black --check --skip-string-normalization .", "ruff check --force-exclude ."]
    assert notes == [
        "`pre-commit run --all-files --show-diff-on-failure` is replayed as the checks its hooks run "
        "(`black` at 24.1.1, `ruff` at v0.8.6), over the repository's files: "
        "`black --check --skip-string-normalization .`; `ruff check --force-exclude .`."
    ]
    ran = _ours(checkout).run_command_line("\n".join(lines))
    assert ran.exit_code == 1 and "1 file would be reformatted" in ran.output
    assert (checkout / "demo.py").read_text() == UNFORMATTED["demo.py"]  # a check: the hook's `--fix` is gone


def test_a_named_hook_is_replayed_alone_and_other_hooks_keep_the_step_as_written(tmp_path: Path) -> None:
    files = {".pre-commit-config.yaml": PRE_COMMIT + FLAKE8}
    _, lines, _, _ = _replayed(tmp_path / "one", files, "pre-commit run black --all-files")
    assert lines == ["black --check --skip-string-normalization ."]
    _, lines, _, notes = _replayed(tmp_path / "all", files, "pre-commit run --all-files")
    assert lines == ["pre-commit run --all-files"]
    assert notes == [
        "`pre-commit run --all-files` is run as written: its hooks `flake8` are not a tool ci-autofix runs."
    ]
    _, lines, _, notes = _replayed(tmp_path / "changed", files, "pre-commit run black")
    assert lines == ["pre-commit run black"]
    assert "checks only the files a commit changed" in notes[0]


HATCH = """
[tool.hatch.envs.style]
detached = true
dependencies = ["black", "ruff"]

[tool.hatch.envs.style.scripts]
check = ["black -q --check --diff demo.py", "lint"]
lint = ["ruff check . {args}"]
loop = ["echo {args:$HOME}"]
"""


def test_a_hatch_environment_script_is_its_commands_with_other_scripts_read_through(tmp_path: Path) -> None:
    pyproject = UNFORMATTED["pyproject.toml"] + HATCH
    checkout, lines, _, notes = _replayed(tmp_path, {"pyproject.toml": pyproject}, "hatch run style:check")
    assert lines == ["black -q --check --diff demo.py", "ruff check ."]
    assert notes[0] == (
        "`hatch run style:check` runs the project's script `style:check`: "
        "`black -q --check --diff demo.py`; `ruff check .`."
    )
    ran = _ours(checkout).run_command_line("\n".join(lines))
    assert ran.exit_code == 1 and '+x = {"a": 1}' in ran.output  # black's diff
    _, lines, _, _ = _replayed(
        tmp_path / "other", {"pyproject.toml": pyproject}, "hatch run style:loop\nhatch run style:nope"
    )
    assert lines == ["hatch run style:loop", "hatch run style:nope"]  # an expansion, or no such script


FACTORS_TOX_INI = """\
[testenv]
deps =
    pytest
    linters: -r requirements-linting.txt
    linters,docs: werkzeug<2.3.0
    !linters: coverage
    py312-django: django
    {py3.7,py3.8}-common: requests<2
    {linters,docs}-{a,b}: not-this
    {py3.7,linters}: six
commands =
    pytest tests
[testenv:linters]
commands =
    black --check demo.py
"""


def test_a_tox_environment_takes_only_the_deps_its_factors_select(tmp_path: Path) -> None:
    _, lines, setup, _ = _replayed(tmp_path, {"tox.ini": FACTORS_TOX_INI}, "pip install tox\ntox -e linters")
    assert lines == ["pip install tox", "black --check demo.py"]
    assert setup == ["python -m pip install . pytest -r requirements-linting.txt 'werkzeug<2.3.0' six"]
