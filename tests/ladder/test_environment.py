"""The environment verification prepares follows what the failed job installed (real pip, a real
package from the index), and a setup that fails says so with pip's own words."""

from __future__ import annotations

import dataclasses
import ensurepip
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ci_autofix.ladder.environment import Environment, needs_environment, prepare
from ci_autofix.ladder.verify import reproduce
from ci_autofix.sandbox import Sandbox
from tests.testing.git import DEV, git

CHECK = 'python -c "import six; print(six.__version__)"'


def _project(tmp_path: Path, requirement: str) -> Sandbox:
    root = tmp_path / "repo"
    (root / "requirements").mkdir(parents=True)
    (root / "requirements" / "ci.txt").write_text(requirement)  # a name the default setup does not guess
    git(root, "init", "-q")
    git(root, "add", ".")
    git(root, "commit", "-qm", "ci requirements", author=DEV)
    return Sandbox(root, timeout=300, extra_env={"PATH": os.environ["PATH"]})


@pytest.mark.slow  # installs packages into a fresh environment
def test_the_environment_installs_what_the_job_installed(tmp_path: Path) -> None:
    sandbox = _project(tmp_path, "six==1.16.0\n")
    [guessed] = reproduce(sandbox, [CHECK], timeout=300, environment=Environment(env_dir=tmp_path / "plain"))
    assert guessed.tail != "1.16.0"  # without the job's setup: whatever this machine has, or nothing
    started: list[str] = []
    job_setup = ["python -m pip install -r requirements/ci.txt"]
    [run] = reproduce(
        sandbox,
        [CHECK],
        timeout=300,
        environment=Environment(job_setup=job_setup, env_dir=tmp_path / "env"),
        on_start=started.append,
    )
    assert run.ok and run.tail == "1.16.0", run.tail  # the version CI's requirements installed
    assert started == ["python -m venv env", "python -m pip install -r requirements/ci.txt", CHECK]


@pytest.mark.slow  # installs packages into a fresh environment
def test_a_job_setup_that_fails_here_is_the_evidence_with_pips_words(tmp_path: Path) -> None:
    sandbox = _project(tmp_path, "six==0.0.0.1\n")
    [setup] = reproduce(
        sandbox,
        [CHECK],
        timeout=300,
        environment=Environment(
            job_setup=["python -m pip install -r requirements/ci.txt"], env_dir=tmp_path / "env"
        ),
    )
    assert not setup.ok and setup.command == "python -m pip install -r requirements/ci.txt"
    assert "six==0.0.0.1" in setup.tail  # pip says which requirement it could not satisfy


def test_the_environment_gets_the_interpreters_own_pip_without_compiling_it(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "pyproject.toml").write_text("[tool.ruff]\nline-length = 100\n")  # Python, nothing to install
    started: list[str] = []
    prepared = prepare(
        Sandbox(root, timeout=120, extra_env={"PATH": os.environ["PATH"]}),
        Environment(env_dir=tmp_path / "env"),
        timeout=120,
        commands=["pytest"],
        on_start=started.append,
    )
    assert prepared.setup is None and started == ["python -m venv env"]
    site = [p for p in (tmp_path / "env" / "lib").glob("python3*/site-packages/pip") if p.is_dir()]
    assert site, sorted(str(p) for p in (tmp_path / "env").rglob("site-packages"))
    # seeded from the wheel, not byte-compiled (what made `python -m venv` slow): nothing compiled yet
    assert not list(site[0].rglob("*.pyc"))
    pip = subprocess.run(
        [str(tmp_path / "env" / "bin" / "python"), "-m", "pip", "--version"], capture_output=True, text=True
    )
    # the pip `python -m venv` would have installed: the one bundled with this interpreter, in the environment
    assert pip.returncode == 0, pip.stderr
    assert pip.stdout.startswith(f"pip {ensurepip.version()} from {site[0]}"), pip.stdout


def test_every_line_of_a_replayed_session_counts_in_whether_it_needs_the_environment(tmp_path: Path) -> None:
    # `tox -e lint` replayed: a standalone linter first, then a command that needs what the session installs
    project = _project(tmp_path, "six==1.16.0\n")
    ruff = Path(sys.executable).parent  # last on PATH: its python is not the one the check must find
    sandbox = dataclasses.replace(project, extra_env={"PATH": f"{os.environ['PATH']}:{ruff}"})
    session = f"ruff --version\n{CHECK}"
    [run] = reproduce(
        sandbox,
        [session],
        timeout=300,
        environment=Environment(
            job_setup=["python -m pip install -r requirements/ci.txt"], env_dir=tmp_path / "env"
        ),
    )
    assert run.ok and run.tail.splitlines()[-1] == "1.16.0", run.tail


def test_the_lines_that_set_up_the_shell_are_not_programs_that_need_the_environment() -> None:
    assert not needs_environment(["cd -- src\nexport LINT=1\nset +o pipefail\n(\nset -eux\nruff check .\n)"])
    assert needs_environment(["cd -- src\nruff check .\ncheck-manifest"])
