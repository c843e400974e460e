"""The version a fixer (and verification) runs at, decided in one place (`plan.pinned`) in this
order: the failing command's own pin, the version the failed job printed, lock files and the
like, exact pins of the project's metadata, then the newest release at the failing commit's date."""

from __future__ import annotations

import os
import re
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest

from ci_autofix.fixers import plan_fixers, run_fixers
from ci_autofix.git import Git
from ci_autofix.ladder.tools import wanted_tools
from ci_autofix.sandbox import Sandbox
from ci_autofix.tooling.ci_versions import CIRun, commit_date
from ci_autofix.tooling.versions import Requirement
from ci_autofix.triage import diagnose
from tests.fixers.test_install import FIXED_BY_OLD, SOURCE
from tests.testing.fixer_projects import Project
from tests.testing.index import ruff_index

STEP = "ruff format --check ."
STAMP = "2025-01-08T18:00:00.0000000Z "


def _log(project: Project, *installed: str) -> str:
    """The failed job's log: its install step's report, then the failing step (run for real)."""
    setup = "".join(f"{STAMP}{line}\n" for line in installed)
    return setup + project.run_step(STEP)


def _project(project: Project, requirements: str = "ruff\n", **files: str) -> None:
    project.write("pyproject.toml", files.pop("pyproject", '[project]\nname = "demo"\n\n[tool.ruff]\n'))
    project.write("requirements-dev.txt", requirements)
    project.write("demo.py", SOURCE)
    for name, text in files.items():
        project.write(name.replace("__", "."), text)
    project.commit()


def _decided(project: Project, log: str, ci: CIRun) -> tuple[str | None, str | None]:
    [spec] = plan_fixers(project.root, diagnose(log), ["auto"], [STEP], ci)
    return (spec.requirement.spec if spec.requirement else None), spec.pin_source


@pytest.mark.slow
def test_the_version_the_failed_job_installed_is_the_one_fixed_and_verified_with(
    project: Project, tools_dir: Path
) -> None:
    _project(project, "ruff\n")  # no pin: today the image's ruff would run, and make another diff
    log = _log(project, "Successfully installed ruff-0.8.6")
    ci = CIRun.read([log.encode()], None, "")
    plan = plan_fixers(project.root, diagnose(log), ["auto"], [STEP], ci)
    [run] = run_fixers(Sandbox(project.root), plan, tools_dir=tools_dir, timeout=300)
    assert (run.version, run.changed_files) == ("0.8.6", ["demo.py"])
    assert run.pin_source == "the failed job's log: Successfully installed ruff-0.8.6"
    assert project.read("demo.py") == FIXED_BY_OLD
    # verification's tools are decided by the same rule, even when no fixer is planned
    assert wanted_tools(project.root, [STEP], [], ci)["ruff"] == Requirement("==0.8.6")
    assert ci.described() == [("ruff", "0.8.6", "the failed job's log: Successfully installed ruff-0.8.6")]


def test_the_log_comes_before_a_lock_file(project: Project) -> None:
    lock = '[[package]]\nname = "ruff"\nversion = "0.8.5"\n'
    _project(project, "ruff\n", uv__lock=lock)
    log = _log(project, " + ruff==0.8.6")
    assert _decided(project, log, CIRun.read([log], None, "")) == (
        "==0.8.6",
        "the failed job's log: + ruff==0.8.6",
    )
    assert _decided(project, log, CIRun()) == ("==0.8.5", "uv.lock")


def test_a_lock_file_comes_before_an_exact_pin_of_the_metadata(project: Project) -> None:
    pyproject = '[project]\nname = "demo"\n\n[dependency-groups]\nlint = ["ruff==0.9.0"]\n\n[tool.ruff]\n'
    pipfile = '{"_meta": {}, "default": {}, "develop": {"ruff": {"version": "==0.8.4"}}}'
    _project(project, "", pyproject=pyproject, Pipfile__lock=pipfile)
    log = _log(project)
    assert _decided(project, log, CIRun()) == ("==0.8.4", "Pipfile.lock [develop]")
    (project.root / "Pipfile.lock").unlink()
    assert _decided(project, log, CIRun()) == ("==0.9.0", "pyproject.toml [dependency-groups] lint")


def test_a_constraints_file_pins_like_a_requirements_file(project: Project) -> None:
    _project(project, "ruff\n", constraints__txt="ruff==0.8.4\n")
    assert _decided(project, _log(project), CIRun()) == ("==0.8.4", "constraints.txt")


def test_setup_py_and_setup_cfg_are_read_without_running_them(project: Project, tmp_path: Path) -> None:
    canary = tmp_path / "ran"
    setup_py = (
        "from setuptools import setup\n"
        f"open({str(canary)!r}, 'w').write('ran')\n"
        "LINT = ['ruff==0.8.4', 'black']\n"
        "setup(name='demo', extras_require={'lint': LINT, 'test': ['pytest']})\n"
    )
    _project(project, "", pyproject="[tool.ruff]\n", setup__py=setup_py)
    assert _decided(project, _log(project), CIRun()) == ("==0.8.4", "setup.py")
    assert not canary.exists()
    (project.root / "setup.py").unlink()
    project.write(
        "setup.cfg", "[metadata]\nname = demo\n\n[options.extras_require]\nlint =\n    ruff==0.8.5\n"
    )
    assert _decided(project, _log(project), CIRun()) == ("==0.8.5", "setup.cfg [options.extras_require] lint")


def test_a_range_is_the_newest_release_at_the_commits_date_or_a_note_says_why_not(project: Project) -> None:
    _project(project, "ruff>=0.8,<0.9\n")
    log = _log(project)
    unknown = CIRun(date=datetime(2025, 1, 8, 18, tzinfo=UTC), index="")
    requirement, source = _decided(project, log, unknown)
    assert requirement == ">=0.8,<0.9"
    assert source == (
        ">=0.8,<0.9 (requirements-dev.txt); the newest release as of the failing commit's date is not known: "
        "the package index is not asked (its URL is empty)"
    )


@pytest.mark.slow
def test_an_unpinned_tool_runs_at_the_newest_release_of_the_commits_day(
    project: Project, tools_dir: Path
) -> None:
    _project(project, "ruff>=0.8\n")
    env = {**os.environ, "GIT_COMMITTER_DATE": "2025-01-08T18:00:00+00:00"}
    subprocess.run(["git", "commit", "-q", "--amend", "--no-edit"], cwd=project.root, env=env, check=True)
    head = project.git("rev-parse", "HEAD").strip()
    date = commit_date(Git(project.root), head)
    assert date == datetime(2025, 1, 8, 18, tzinfo=UTC)
    log = re.sub(r"(?m)^\S+Z ", "", _log(project))  # a log without the runner's timestamps
    with ruff_index() as (index, _asked):
        ci = CIRun.read([log], date, index)
        plan = plan_fixers(project.root, diagnose(log), ["auto"], [STEP], ci)
    [run] = run_fixers(Sandbox(project.root), plan, tools_dir=tools_dir, timeout=300)
    assert (run.version, project.read("demo.py")) == ("0.8.6", FIXED_BY_OLD)
    assert (
        run.pin_source
        == "the newest release on 2025-01-08 (the failing commit's date) for >=0.8 (requirements-dev.txt)"
    )
    # the log's own timestamps: CI ran the day after, when 0.9.0 was out
    with ruff_index() as (index, _asked):
        ci = CIRun.read([re.sub(r"(?m)^", "2025-01-09T18:00:00.0000000Z ", log)], date, index)
        plan = plan_fixers(project.root, diagnose(log), ["auto"], [STEP], ci)
    assert [(s.requirement, s.pin_source) for s in plan] == [
        (
            Requirement("==0.9.0"),
            "the newest release on 2025-01-09 (when the failed job ran) for >=0.8 (requirements-dev.txt)",
        )
    ]


def test_an_exact_pin_is_not_asked_of_the_index(project: Project) -> None:
    _project(project, "ruff==0.8.4\n")
    with ruff_index() as (index, asked):
        ci = CIRun(date=datetime(2025, 3, 1, tzinfo=UTC), index=index)
        assert _decided(project, _log(project), ci) == ("==0.8.4", "requirements-dev.txt")
        _project(project, "ruff~=0.8.0\n")
        assert _decided(project, _log(project), ci)[0] == "==0.8.6"  # the range's newest on that day
    assert asked == ["/pypi/ruff/json"]  # only for the range


PRE_COMMIT_AT_084 = """\
repos:
  - repo: https://github.com/astral-sh/ruff-pre-commit
    rev: v0.8.4
    hooks:
      - id: ruff-format
"""


@pytest.mark.slow
def test_a_pre_commit_rev_pins_the_tool_only_for_a_step_that_runs_pre_commit(
    project: Project, tools_dir: Path
) -> None:
    # sentry-python: the hook is at an older ruff, but CI's step runs tox, whose deps install ruff
    # unpinned; CI ran the newest ruff of its day, not the hook's
    tox = "[testenv:lint]\ndeps = ruff\ncommands = ruff format --check .\n"
    _project(project, "", tox__ini=tox, **{"__pre-commit-config.yaml": PRE_COMMIT_AT_084})
    log = _log(project)
    day = datetime(2025, 1, 8, 18, tzinfo=UTC)
    with ruff_index() as (index, _asked):
        [spec] = plan_fixers(
            project.root, diagnose(log), ["auto"], ["tox -e lint"], CIRun(date=day, index=index)
        )
    assert (spec.requirement, spec.pin_source) == (
        Requirement("==0.8.6"),
        "the newest release on 2025-01-08 (the failing commit's date) for no pin",
    )
    [run] = run_fixers(Sandbox(project.root), [spec], tools_dir=tools_dir, timeout=300)
    assert (run.version, project.read("demo.py")) == ("0.8.6", FIXED_BY_OLD)
    # a step that runs pre-commit runs the hook at its `rev:`
    with ruff_index() as (index, asked):
        ci = CIRun(date=day, index=index)
        [spec] = plan_fixers(project.root, diagnose(log), ["auto"], ["pre-commit run --all-files"], ci)
    assert (spec.requirement, spec.pin_source) == (
        Requirement("==0.8.4"),
        ".pre-commit-config.yaml (astral-sh/ruff-pre-commit rev v0.8.4)",
    )
    assert asked == []
