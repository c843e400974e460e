"""The workflow reader: the failed step's command from the workflow file at the failing commit."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import pytest

from ci_autofix.git import Git
from ci_autofix.sandbox import Sandbox
from ci_autofix.workflow.definition import _ACTIVATION_RE, FailedStep, claimed_commands, failed_step_commands
from tests.testing.git import clone, commit, git, init_repo
from tests.testing.poetry_project import FILES, lock

CI = ".github/workflows/ci.yml"
WORKFLOW = """\
name: CI
on: [push]
env:
  FROM_WORKFLOW: top
defaults:
  run:
    shell: bash
jobs:
  test:
    name: tests
    runs-on: ubuntu-latest
    strategy:
      matrix:
        python: ["3.11", "3.12"]
        os: [ubuntu-latest]
        include:
          - python: "3.13"
            os: ubuntu-latest
            experimental: true
    env:
      FROM_JOB: job
    steps:
      - uses: actions/checkout@v4
      - name: Run the tests
        working-directory: pkg
        env:
          PY: ${{ matrix.python }}
          COUNT: 3
        run: |
          echo "$PY $FROM_JOB $FROM_WORKFLOW $COUNT" > seen.txt
          python -m pytest -q
      - name: Upload with ${{ secrets.TOKEN }}
        run: ./upload.sh ${{ secrets.TOKEN }}
      - run: make docs
        shell: pwsh
      - run: cd ..
        working-directory: ../outside
"""
LINT = ".github/workflows/lint.yml"
LINT_WORKFLOW = """\
on: pull_request
jobs:
  lint:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - run: ruff format --check .
      - uses: pre-commit/action@v3.0.1
  plain:
    runs-on: ubuntu-latest
    steps:
      - run: false | true
      - run: false | true
        shell: bash
      - run: echo "$0" > shell.txt
        shell: sh
"""


@pytest.fixture
def repo(tmp_path: Path) -> tuple[Git, str]:
    source = tmp_path / "repo"
    init_repo(source, {"README.md": "hi\n", "pkg/keep.txt": "x\n"})
    sha = commit(source, {CI: WORKFLOW, LINT: LINT_WORKFLOW}, "CI")
    return Git(source), sha


def test_an_unnamed_run_step_is_matched_by_its_first_line(repo: tuple[Git, str]) -> None:
    git_, sha = repo
    found = failed_step_commands(git_, sha, LINT, [FailedStep("lint", "Run ruff format --check .")])
    [command] = found.commands
    assert command.script == "ruff format --check ."
    assert command.command == "ruff format --check ."  # `shell: bash` is how command lines run here
    assert found.notes == []


def test_a_matrix_job_gets_its_values_from_the_displayed_name(repo: tuple[Git, str]) -> None:
    git_, sha = repo
    found = failed_step_commands(git_, sha, CI, [FailedStep("tests (3.12, ubuntu-latest)", "Run the tests")])
    [command] = found.commands
    assert command.script.startswith('echo "$PY')
    assert command.command.splitlines() == [
        "cd -- pkg",
        "export FROM_WORKFLOW=top",
        "export FROM_JOB=job",
        "export PY=3.12",
        "export COUNT=3",
        'echo "$PY $FROM_JOB $FROM_WORKFLOW $COUNT" > seen.txt',
        "python -m pytest -q",
    ]
    included = failed_step_commands(
        git_, sha, CI, [FailedStep("tests (3.13, ubuntu-latest, true)", "Run the tests")]
    )
    assert "export PY=3.13" in included.commands[0].command.splitlines()


def test_the_failed_jobs_mapping_and_matrix_are_kept_for_its_runtimes(repo: tuple[Git, str]) -> None:
    """The ladder provisions what the failed job's setup steps declare, with that combination's values."""
    git_, sha = repo
    found = failed_step_commands(git_, sha, CI, [FailedStep("tests (3.12, ubuntu-latest)", "Run the tests")])
    assert found.job["env"] == {"FROM_JOB": "job"} and found.job["steps"][0] == {
        "uses": "actions/checkout@v4"
    }
    assert found.matrix == {"python": "3.12", "os": "ubuntu-latest"}
    assert failed_step_commands(git_, sha, CI, []).job == {}


def test_the_command_runs_in_its_directory_with_its_variables(repo: tuple[Git, str], tmp_path: Path) -> None:
    git_, sha = repo
    found = failed_step_commands(git_, sha, CI, [FailedStep("tests (3.11, ubuntu-latest)", "Run the tests")])
    checkout = tmp_path / "checkout"
    clone(git_.repo, checkout)
    script = found.commands[0].command.replace("python -m pytest -q", "true")
    assert Sandbox(checkout).run_command_line(script).ok
    assert (checkout / "pkg" / "seen.txt").read_text() == "3.11 job top 3\n"


def test_the_default_shell_has_no_pipefail_and_bash_and_sh_are_as_the_runner_runs_them(
    repo: tuple[Git, str], tmp_path: Path
) -> None:
    git_, sha = repo
    failed = [FailedStep("plain", "Run false | true", 0), FailedStep("plain", "Run false | true", 1)]
    found = failed_step_commands(git_, sha, LINT, [*failed, FailedStep("plain", 'Run echo "$0" > shell.txt')])
    default, explicit, sh = (c.command for c in found.commands)
    assert default == "set +o pipefail\nfalse | true"
    assert explicit == "false | true"
    checkout = tmp_path / "checkout"
    clone(git_.repo, checkout)
    box = Sandbox(checkout)
    assert box.run_command_line(default).ok
    assert not box.run_command_line(explicit).ok
    assert box.run_command_line(sh).ok and (checkout / "shell.txt").read_text() == "sh\n"


def test_actions_unknown_expressions_other_shells_and_outside_directories_are_not_run(
    repo: tuple[Git, str],
) -> None:
    git_, sha = repo
    steps = [
        FailedStep("tests (3.11, ubuntu-latest)", "Upload with ***"),
        FailedStep("tests (3.11, ubuntu-latest)", "Run make docs"),
        FailedStep("tests (3.11, ubuntu-latest)", "Run cd .."),
    ]
    found = failed_step_commands(git_, sha, CI, steps)
    assert found.commands == []
    upload, pwsh, outside = found.notes
    actions = failed_step_commands(git_, sha, LINT, [FailedStep("lint", "Run pre-commit/action@v3.0.1")])
    assert actions.commands == [] and actions.actions == ["pre-commit/action@v3.0.1"]
    assert "runs the action `pre-commit/action@v3.0.1`" in actions.notes[0]
    assert "`${{ secrets.TOKEN }}`" in upload and "`./upload.sh ${{ secrets.TOKEN }}`" in upload
    assert "test-command" in upload
    assert "`shell: pwsh`" in pwsh
    assert "`../outside` is not inside the repository" in outside


def test_a_step_or_job_that_does_not_match_and_a_missing_workflow_say_so(repo: tuple[Git, str]) -> None:
    git_, sha = repo
    found = failed_step_commands(
        git_, sha, LINT, [FailedStep("lint", "Run something else"), FailedStep("deploy", "Run x")]
    )
    assert found.commands == []
    assert "no step of job `lint`" in found.notes[0] and "`Run something else`" in found.notes[0]
    assert "no job in `.github/workflows/lint.yml` is displayed as `deploy`" in found.notes[1]
    missing = failed_step_commands(git_, sha, ".github/workflows/nope.yml", [FailedStep("lint", "Run x")])
    assert missing.commands == []
    assert "`.github/workflows/nope.yml` does not exist at" in missing.notes[0]


def test_the_workflow_is_read_at_the_commit_not_from_the_working_tree(repo: tuple[Git, str]) -> None:
    git_, sha = repo
    (git_.repo / LINT).write_text(LINT_WORKFLOW.replace("ruff format --check .", "touch pwned"))
    git(git_.repo, "add", LINT)  # even staged, it is not the commit's
    found = failed_step_commands(git_, sha, LINT, [FailedStep("lint", "Run touch pwned")])
    assert found.commands == []
    found = failed_step_commands(git_, sha, LINT, [FailedStep("lint", "Run ruff format --check .")])
    assert [c.command for c in found.commands] == ["ruff format --check ."]


def test_a_claimed_command_counts_locally_only_when_a_workflow_runs_it(repo: tuple[Git, str]) -> None:
    git_, sha = repo
    found = claimed_commands(git_, sha, ["ruff format --check .", "touch pwned", "pre-commit/action@v3.0.1"])
    assert [c.command for c in found.commands] == ["ruff format --check ."]
    assert found.actions == ["pre-commit/action@v3.0.1"]
    [note] = found.notes
    assert "`touch pwned`" in note and "--test-command" in note
    # the runner logs the composite action's own command under its `Run` header: that is the action
    inner = claimed_commands(git_, sha, ["pre-commit run --show-diff-on-failure --color=always --all-files"])
    assert inner.actions == ["pre-commit/action@v3.0.1"] and not inner.commands and not inner.notes


FORMAT_WORKFLOW = """\
on: push
jobs:
  format:
    runs-on: ubuntu-latest
    steps:
      - uses: syphar/restore-virtualenv@v1
      - name: Check the format
        run: |
          source $VENV/bin/activate
          black --version
          black --check .
"""


def test_an_activation_line_gives_way_to_our_environment_and_the_step_runs(tmp_path: Path) -> None:
    source = tmp_path / "repo"
    init_repo(source, {"pyproject.toml": "[tool.black]\n", "demo.py": "x = {  'a':1 }\n"})
    sha = commit(source, {CI: FORMAT_WORKFLOW}, "CI")
    found = failed_step_commands(Git(source), sha, CI, [FailedStep("format", "Check the format")])
    [command] = found.commands
    assert command.command.splitlines() == [
        "# activated by ci-autofix instead: source $VENV/bin/activate",
        "black --version",
        "black --check .",
    ]
    assert found.notes == [
        "The failed step `Check the format` activates an environment an earlier step set up "
        "(`source $VENV/bin/activate`): its commands run in ci-autofix's own prepared environment instead."
    ]
    checkout = tmp_path / "checkout"
    clone(source, checkout)
    ours = dataclasses.replace(
        Sandbox(checkout), extra_env={"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin"}
    )
    ran = ours.run_command_line(command.command)
    assert ran.exit_code == 1 and "1 file would be reformatted" in ran.output  # black's own verdict
    as_written = ours.run_command_line(command.script.replace("# activated by ci-autofix instead: ", ""))
    assert as_written.exit_code == 1 and "black" not in as_written.output  # died on the activation


SETUP_WORKFLOW = """\
on: push
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/setup-python@v5
      - run: |
          python -m pip install --upgrade pip
          pip install --user -r requirements/ci.txt \\
            -c constraints.txt
          pip install "$EXTRA"
          pip install six && echo installed
          echo pip install not-this
      - run: uv pip install --system ".[lint]"
      - run: pip install elsewhere
        working-directory: docs
      - name: Tests
        run: python -c "import six"
      - run: pip install after-the-failed-step
"""


def test_the_jobs_installs_before_the_failed_step_are_its_setup(tmp_path: Path) -> None:
    source = tmp_path / "repo"
    init_repo(source, {"README.md": "hi\n"})
    sha = commit(source, {CI: SETUP_WORKFLOW}, "CI")
    found = failed_step_commands(Git(source), sha, CI, [FailedStep("test", "Tests")])
    assert found.setup == [
        "python -m pip install --upgrade pip",
        "python -m pip install -r requirements/ci.txt -c constraints.txt",  # `--user` has no place in a venv
        "python -m pip install '.[lint]'",
    ]


POETRY_WORKFLOW = """\
on: push
jobs:
  lint:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/setup-python@v5
      - run: |
          python -m pip install --upgrade pip
          pip install --constraint=.github/workflows/poetry-constraints.txt poetry
      - name: Install dependencies
        run: poetry install --with docs --no-root
      - name: Lint
        run: ./scripts/lint.sh
"""


def test_the_jobs_poetry_install_is_followed_from_the_lock_and_poetry_itself_is_not_installed(
    tmp_path: Path,
) -> None:
    """isort's lint job: `pip install poetry`, `poetry install`, then a script of `poetry run`
    lines. The environment gets the lock's packages of the groups the options choose; poetry
    itself (CI's tool to make the project's environment, never in it) is not installed."""
    source = tmp_path / "repo"
    init_repo(source, {**FILES, "poetry.lock": lock(old=True), "scripts/lint.sh": "poetry run mypy src\n"})
    sha = commit(source, {CI: POETRY_WORKFLOW}, "CI")
    for found in (
        failed_step_commands(Git(source), sha, CI, [FailedStep("lint", "Lint")]),
        claimed_commands(Git(source), sha, ["./scripts/lint.sh"]),  # `ci-autofix fix` on a log
    ):
        assert found.poetry is not None and not found.poetry.error
        assert found.poetry.line == "poetry install --with docs --no-root"
        assert {p.name for p in found.poetry.packages} == {
            "python-dateutil",
            "six",
            "iniconfig",
            "pywin32-ctypes",
            "toml",
        }
        assert found.poetry.root is None
        assert all("poetry" not in line for line in found.setup)
        assert (
            "The job's `poetry install --with docs --no-root` is installed as poetry.lock says, without "
            "running poetry: 5 packages at the lock's versions, checked against its hashes." in found.notes
        )
    failed = failed_step_commands(Git(source), sha, CI, [FailedStep("lint", "Lint")])
    assert failed.setup == ["python -m pip install --upgrade pip"]


def test_a_lock_that_cannot_be_followed_is_a_note_with_the_remedy(tmp_path: Path) -> None:
    source = tmp_path / "repo"
    init_repo(source, {**FILES, "scripts/lint.sh": "poetry run mypy src\n"})  # no poetry.lock
    sha = commit(source, {CI: POETRY_WORKFLOW}, "CI")
    found = failed_step_commands(Git(source), sha, CI, [FailedStep("lint", "Lint")])
    assert found.poetry is not None and "`poetry.lock` is missing" in found.poetry.error
    assert found.poetry.error in found.notes and "`setup-command`" in found.poetry.error


@pytest.mark.parametrize(
    ("line", "activation"),
    [
        ("source $VENV/bin/activate", True),
        (". .venv/bin/activate", True),
        ('source "$HOME/venv/bin/activate"', True),
        ("source $VENV", True),  # the activation script's path, in a variable an earlier step set
        ('. "${VENV}"', True),
        ("source scripts/env.sh", False),
        ("source $VENV && make lint", False),
        ("make lint", False),
    ],
)
def test_what_counts_as_an_activation_line(line: str, activation: bool) -> None:
    assert bool(_ACTIVATION_RE.match(line)) is activation


def test_a_claimed_command_is_run_in_our_environment_too(tmp_path: Path) -> None:
    """`ci-autofix fix` on a log (the local path) reads the step the log claims as the Action reads
    the failed step: an activation line gives way to the prepared environment (rich's workflow:
    `source $VENV`, then `make format-check`)."""
    workflow = (
        "on: push\njobs:\n  lint:\n    runs-on: ubuntu-latest\n    steps:\n"
        "      - name: Format check\n        run: |\n          source $VENV\n          make format-check\n"
    )
    source = tmp_path / "repo"
    init_repo(source, {"Makefile": "format-check:\n\tblack --check .\n"})
    sha = commit(source, {CI: workflow}, "CI")
    found = claimed_commands(Git(source), sha, ["source $VENV\nmake format-check"])
    [command] = found.commands
    assert command.command.splitlines() == [
        "# activated by ci-autofix instead: source $VENV",
        "make format-check",
    ]
    assert "activates an environment an earlier step set up (`source $VENV`)" in found.notes[0]
