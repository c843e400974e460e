"""The environment verification prepares follows what the failed job installed (real pip, a real
package from the index), and a setup that fails says so with pip's own words."""

from __future__ import annotations

import dataclasses
import ensurepip
import os
import subprocess
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from ci_autofix.git import Git
from ci_autofix.ladder.environment import Environment, needs_environment, prepare
from ci_autofix.ladder.verify import reproduce
from ci_autofix.sandbox import Sandbox
from ci_autofix.workflow.definition import FailedStep, failed_step_commands
from ci_autofix.workflow.poetry import follow
from tests.testing.git import DEV, git, init_repo, write_files
from tests.testing.poetry_project import FILES, HASHES, lock


def files_of(root: Path) -> Callable[[str], str | None]:
    def read(path: str) -> str | None:
        return (root / path).read_text() if (root / path).is_file() else None

    return read


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


def _poetry_project(tmp_path: Path, lock_text: str) -> Sandbox:
    root = tmp_path / "repo"
    write_files(root, {**FILES, "poetry.lock": lock_text})
    git(root, "init", "-q")
    git(root, "add", ".")
    git(root, "commit", "-qm", "a poetry project", author=DEV)
    tmp = tmp_path / "sandbox-tmp"
    tmp.mkdir()
    return Sandbox(root, timeout=300, extra_env={"PATH": os.environ["PATH"]}, tmpdir=tmp)


POETRY_CHECK = (
    "python -c \"import dateutil, iniconfig, tiny; print(dateutil.__version__, tiny.__file__.startswith('./'))\""
    " && python -c \"import importlib.metadata as m; print(m.version('tiny'), [e.value for e in m.entry_points(name='tiny')])\""
    " && tiny && python -m pip freeze --exclude-editable"
)


@pytest.mark.slow  # installs packages from the index into a fresh environment
def test_the_jobs_poetry_install_installs_the_locks_groups_and_the_project_as_poetry_does(
    tmp_path: Path,
) -> None:
    sandbox = _poetry_project(tmp_path, lock(old=True))
    poetry = follow(["poetry", "install"], files_of(sandbox.root))
    started: list[str] = []
    [run] = reproduce(
        sandbox,
        [POETRY_CHECK],
        timeout=300,
        environment=Environment(poetry=poetry, env_dir=tmp_path / "env"),
        on_start=started.append,
    )
    assert run.ok, run.tail
    lines = run.tail.splitlines()
    assert lines[0] == "2.8.2 False"  # the lock's version; the project imported from the checkout
    assert lines[1] == "0.1.0 ['tiny.cli:main']"  # its metadata and entry points, as poetry writes them
    assert lines[2] == "tiny 2.8.2"  # its console script
    frozen = {line.split("==")[0].lower(): line.split("==")[1] for line in lines[3:] if "==" in line}
    # the main and dev groups at the lock's versions; not the optional group, the extra, nor Windows'
    assert frozen == {"iniconfig": "2.0.0", "python-dateutil": "2.8.2", "six": "1.16.0", "tiny": "0.1.0"}
    assert (
        started[1] == "poetry install (followed: 4 packages of poetry.lock at its versions, then the project)"
    )
    assert not git(sandbox.root, "status", "--porcelain", "--ignored").strip()  # nothing in the tree
    assert not any((tmp_path / "sandbox-tmp").iterdir())  # the requirements file is gone too


@pytest.mark.slow  # downloads from the index
def test_a_file_whose_hash_is_not_the_locks_fails_the_setup_with_pips_words(tmp_path: Path) -> None:
    hashes = {**HASHES, "iniconfig": "sha256:" + "0" * 64}
    sandbox = _poetry_project(tmp_path, lock(old=False, hashes=hashes))
    poetry = follow(["poetry", "install", "--only", "dev"], files_of(sandbox.root))
    [setup] = reproduce(
        sandbox, [POETRY_CHECK], timeout=300, environment=Environment(poetry=poetry, env_dir=tmp_path / "env")
    )
    assert not setup.ok and setup.command.startswith("poetry install --only dev (followed: ")
    assert "THESE PACKAGES DO NOT MATCH THE HASHES" in setup.tail and "0" * 64 in setup.tail


@pytest.mark.slow  # installs packages from the index into a fresh environment
def test_a_locked_package_that_cannot_be_installed_here_is_left_out_by_name_and_the_rest_installed(
    tmp_path: Path,
) -> None:
    """A lock older than this Python (rich's mypy 0.971 has no wheel for it and no longer builds):
    the package that cannot be had is left out, named in the setup, and the others are installed."""
    text = lock(old=False).replace(
        'name = "iniconfig"\nversion = "2.0.0"', 'name = "iniconfig"\nversion = "99.0.0"'
    )
    sandbox = _poetry_project(tmp_path, text)
    poetry = follow(["poetry", "install"], files_of(sandbox.root))
    environment = Environment(poetry=poetry, env_dir=tmp_path / "env")
    prepared = prepare(sandbox, environment, timeout=300, commands=["python -m pip freeze"])
    assert prepared.setup is not None and prepared.setup.ok, prepared.setup
    assert prepared.setup.command.endswith("; left out, as they cannot be installed here: iniconfig==99.0.0")
    [run] = reproduce(
        sandbox, ["python -m pip freeze --exclude-editable"], timeout=300, environment=environment
    )
    frozen = {line.split("==")[0].lower() for line in run.tail.splitlines() if "==" in line}
    assert {"python-dateutil", "six", "tiny"} <= frozen and "iniconfig" not in frozen


def test_a_poetry_install_that_cannot_be_followed_fails_the_setup_with_its_cause(tmp_path: Path) -> None:
    sandbox = _poetry_project(tmp_path, "[[package]\n")
    poetry = follow(["poetry", "install"], files_of(sandbox.root))
    [setup] = reproduce(
        sandbox, [POETRY_CHECK], timeout=300, environment=Environment(poetry=poetry, env_dir=tmp_path / "env")
    )
    assert not setup.ok and "`poetry.lock` is not valid TOML" in setup.tail
    assert "set `setup-command`" in setup.tail


LINT_WORKFLOW = """\
on: push
jobs:
  lint:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - run: python -m pip install --upgrade pip tox
      - run: tox -e lint
"""
# six's real releases: 1.15.0 on 2020-05-21, 1.16.0 on 2021-05-05, 1.17.0 on 2024-12-04
LINT_TOX = "[testenv:lint]\nskip_install = true\ndeps = six\ncommands = python -m pip show six\n"


@pytest.mark.slow  # installs packages from PyPI into fresh environments
def test_a_sessions_unpinned_deps_install_the_release_ci_got_on_its_day(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # pip as on a runner: PyPI, with its upload times (this machine's pip configuration may add
    # local wheel directories, whose files pip never dates)
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    root = tmp_path / "repo"
    init_repo(root, {"tox.ini": LINT_TOX, ".github/workflows/lint.yml": LINT_WORKFLOW})
    sha = git(root, "rev-parse", "HEAD").strip()
    found = failed_step_commands(
        Git(root), sha, ".github/workflows/lint.yml", [FailedStep("lint", "Run tox -e lint")]
    )
    assert found.setup == ["python -m pip install --upgrade pip tox", "python -m pip install six"]
    sandbox = Sandbox(root, timeout=300, extra_env={"PATH": os.environ["PATH"]})
    started: list[str] = []
    on_its_day = Environment(
        job_setup=found.setup, env_dir=tmp_path / "dated", resolved_at=datetime(2021, 1, 1, tzinfo=UTC)
    )
    [run] = reproduce(sandbox, found.lines, timeout=300, environment=on_its_day, on_start=started.append)
    assert run.ok and "Version: 1.15.0" in run.tail, run.tail  # six's newest on 2021-01-01
    assert started[1] == (
        "python -m pip install pip==26.3 (ci-autofix's, hash-checked) && "
        "python -m pip install --uploaded-prior-to=2021-01-01T00:00:00Z --upgrade pip tox && "
        "python -m pip install --uploaded-prior-to=2021-01-01T00:00:00Z six"
    )
    # the same session without CI's date installs today's six
    today = dataclasses.replace(on_its_day, env_dir=tmp_path / "today", resolved_at=None)
    [run] = reproduce(sandbox, found.lines, timeout=300, environment=today)
    assert run.ok and "Version: 1." in run.tail and "Version: 1.15.0" not in run.tail, run.tail


@pytest.mark.slow  # installs packages from PyPI, and builds two of 2020's sources (one fails)
def test_what_does_not_install_here_as_of_then_gets_its_requirements_as_of_then(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # pyramid's lint session in 2020: black 19.10b0 needs typed-ast, whose 2020 release has no wheel
    # for this Python and whose source no longer builds; black itself is still 2020's, and so is six,
    # which installs as of then with all it needs
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    sandbox = _project(tmp_path, "")
    started: list[str] = []
    environment = Environment(
        job_setup=["python -m pip install black six"],
        env_dir=tmp_path / "env",
        resolved_at=datetime(2020, 6, 22, 17, 58, 51, tzinfo=UTC),
    )
    [run] = reproduce(
        sandbox,
        ["python -m pip show black six"],
        timeout=600,
        environment=environment,
        on_start=started.append,
    )
    assert run.ok and "Version: 19.10b0" in run.tail and "Version: 1.15.0" in run.tail, run.tail
    ours = "python -m pip install pip==26.3 (ci-autofix's, hash-checked)"
    pip = "python -m pip install --uploaded-prior-to=2020-06-22T17:58:51Z"
    assert started[1:3] == [
        f"{ours} && {pip} black six",
        f"{ours} && {pip} black || {{ {pip} --no-deps black && python -m pip install black; }} && "
        f"{pip} six || {{ {pip} --no-deps six && python -m pip install six; }}",
    ]


def test_a_line_with_its_own_index_is_installed_as_written() -> None:
    # an index of the job's own may not say when its files were uploaded: pip would refuse them all
    own = "python -m pip install --index-url https://pypi.example/simple lint-tools"
    environment = Environment(job_setup=[own], resolved_at=datetime(2021, 1, 1, tzinfo=UTC))
    assert environment.job_installs() == ([own], [own])
    both = dataclasses.replace(environment, job_setup=["python -m pip install six", own])
    script, shown = both.job_installs()
    assert shown[1:] == ["python -m pip install --uploaded-prior-to=2021-01-01T00:00:00Z six", own]
    assert script[1:] == shown[1:] and "--require-hashes" in script[0]
