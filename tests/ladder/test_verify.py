"""Verification on real repositories in temp dirs, with real pytest and ruff, in the scrubbed sandbox."""

from __future__ import annotations

import os
import shutil
import sys
import time
from pathlib import Path

import pytest

from ci_autofix.fixers import plan_fixers
from ci_autofix.ladder.environment import Environment, default_setup, needs_environment, uses_ruff
from ci_autofix.ladder.evidence import Evidence
from ci_autofix.ladder.tools import tool_dir, wanted_tools
from ci_autofix.ladder.verify import absent_programs, reproduce, stopped_at, verify
from ci_autofix.sandbox import Sandbox
from ci_autofix.tooling.versions import Requirement
from ci_autofix.triage import diagnose
from tests.testing.git import DEV, git

TOOLS = Path(sys.executable).parent  # the project venv's bin: pytest and ruff live there
BUGGY = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"
FIXED = BUGGY.replace("a - b", "a + b")
FAILING = "pytest -q -p no:cacheprovider test_calc.py"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A small repository whose `test_calc.py` fails (no pyproject: nothing to install)."""
    root = tmp_path / "repo"
    root.mkdir()
    (root / "calc.py").write_text(BUGGY)
    (root / "test_calc.py").write_text(
        "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
    )
    (root / "test_other.py").write_text(
        "from calc import mul\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n"
    )
    git(root, "init", "-q")
    git(root, "add", ".")
    git(root, "commit", "-qm", "buggy", author=DEV)
    return root


def sandbox_for(root: Path) -> Sandbox:
    # Only pytest's own plugins: the project venv's third-party plugins add seconds to every run.
    path = f"{TOOLS}{os.pathsep}{os.environ['PATH']}"
    return Sandbox(root, timeout=60, extra_env={"PATH": path, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"})


def test_a_fix_that_makes_the_failing_test_pass_is_verified(project: Path) -> None:
    sandbox = sandbox_for(project)
    before = reproduce(sandbox, [FAILING], timeout=60)
    assert [(e.command, e.exit_code) for e in before] == [(FAILING, 1)]
    assert "assert -1 == 5" in before[0].tail

    (project / "calc.py").write_text(FIXED)
    result = verify(
        sandbox,
        [FAILING],
        before=before,
        changed_files=["calc.py"],
        timeout=60,
        test_command="pytest -q -p no:cacheprovider",
    )
    assert result.outcome == "verified", result.reason
    assert [
        (p.role, p.before.exit_code if p.before else None, p.after.exit_code) for p in result.evidence
    ] == [("failing", 1, 0), ("test", None, 0)]
    assert "1 passed" in result.evidence[0].after.tail
    text = result.to_markdown()
    assert "### Verification: verified" in text
    assert f"| `{FAILING}` | exit 1; tests: 1 ran (0 passed, 1 failed) | exit 0; tests: 1 ran |" in text


def test_a_fix_that_breaks_another_test_fails(project: Path) -> None:
    sandbox = sandbox_for(project)
    before = reproduce(sandbox, [FAILING], timeout=60)
    (project / "calc.py").write_text(FIXED.replace("a * b", "a ** b"))
    result = verify(
        sandbox, [FAILING], before=before, timeout=60, test_command="pytest -q -p no:cacheprovider"
    )
    assert result.outcome == "failed"
    assert "test-command" in result.reason and "exit 1" in result.reason
    suite = result.evidence[-1].after
    assert "test_mul" in suite.tail and "assert 8 == 6" in suite.tail
    assert "assert 8 == 6" in result.to_markdown()  # the new output goes back to the agent


def test_a_fix_that_does_not_fix_still_fails_with_the_new_output(project: Path) -> None:
    sandbox = sandbox_for(project)
    before = reproduce(sandbox, [FAILING], timeout=60)
    (project / "calc.py").write_text(BUGGY.replace("a - b", "a - b + 1"))
    result = verify(sandbox, [FAILING], before=before, timeout=60)
    assert result.outcome == "failed"
    assert result.reason == f"`{FAILING}` still fails after the fix (exit 1)."
    assert "assert 0 == 5" in result.evidence[0].after.tail


@pytest.mark.parametrize("command", ["ci-autofix-absent-toolchain test", "mvnw-not-here test && echo done"])
def test_a_missing_toolchain_is_unverified(project: Path, command: str) -> None:
    sandbox = sandbox_for(project)
    before = reproduce(sandbox, [command], timeout=60)
    assert before[0].missing_tool
    result = verify(sandbox, [command], before=before, timeout=60)
    assert result.outcome == "unverified"
    assert "not installed in this environment" in result.reason
    assert ("`ci-autofix-absent-toolchain` is" in result.reason) is command.startswith("ci-autofix-absent")


@pytest.mark.skipif(shutil.which("gofmt") is None, reason="gofmt is not installed")
def test_a_step_that_passes_without_the_tool_it_names_is_verified_only_with_that_tool(
    tmp_path: Path, project: Path
) -> None:
    """`test -z "$(gofmt -l .)"` passes when gofmt is missing (the substitution is empty): a pass
    proves nothing then. With gofmt on the PATH the same run is verified."""
    command = 'test -z "$(gofmt -l .)"'
    (project / "main.go").write_text("package main\n\nfunc main() {}\n")
    before = [Evidence(command, 1, False, "main.go")]  # as it failed in CI, before the fix
    bare = tmp_path / "bin"
    bare.mkdir()
    (bare / "bash").symlink_to(shutil.which("bash") or "/bin/bash")
    without = Sandbox(project, timeout=60, extra_env={"PATH": str(bare)})
    result = verify(without, [command], before=before, timeout=60)
    assert result.evidence[0].after.ok  # the step itself passed...
    assert result.outcome == "unverified"  # ...and is not believed
    assert "names `gofmt`, which is not installed in this environment" in result.reason
    with_gofmt = Sandbox(
        project, timeout=60, extra_env={"PATH": f"{bare}:{Path(shutil.which('gofmt') or '').parent}"}
    )
    assert verify(with_gofmt, [command], before=before, timeout=60).outcome == "verified"


@pytest.mark.parametrize(
    ("command", "absent"),
    [
        ('test -z "$(gofmt -l .)"', ["gofmt"]),
        ("gofmt -l . | tee out && cargo fmt --check", ["gofmt", "tee", "cargo"]),
        ("FOO=1 npm ci; if [ -n x ]; then prettier --check .; fi", ["npm", "prettier"]),
        ('echo "Done; see (logs)" && bash -c true', []),  # quoted text names no program
        ("echo 'a; b' # gofmt in a comment", []),
        ('cd -- pkg\nexport A="x y"\nbash run.sh', []),
    ],
)
def test_the_programs_a_step_names_and_which_are_absent(
    tmp_path: Path, command: str, absent: list[str]
) -> None:
    (tmp_path / "bash").symlink_to(shutil.which("bash") or "/bin/bash")
    assert absent_programs(command, str(tmp_path)) == absent


def test_a_hanging_command_times_out_and_its_process_group_is_gone(project: Path) -> None:
    (project / "hang.py").write_text(
        "import pathlib, subprocess, sys, time\n"
        "child = subprocess.Popen(['sleep', '600'])\n"
        "pathlib.Path(sys.argv[1]).write_text(str(child.pid))\n"
        "time.sleep(600)\n"
    )
    pid_file = project.parent / "child.pid"
    command = f"python hang.py {pid_file}"
    result = verify(sandbox_for(project), [command], timeout=3)
    assert result.outcome == "unverified"
    assert "did not finish within 3s" in result.reason
    assert result.evidence[0].after.timed_out
    child = int(pid_file.read_text())
    assert not _alive(child)


def _alive(pid: int) -> bool:
    """Running (a zombie waiting for a reaper counts as gone)."""
    for _ in range(50):
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return False
        if state == "Z":
            return False
        time.sleep(0.1)
    return True


def test_commands_run_with_the_scrubbed_environment(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_SERVICE_TOKEN", "plain-secret-1")
    monkeypatch.setenv("INPUT_ANTHROPIC-API-KEY", "plain-secret-2")
    monkeypatch.setenv("GITHUB_TOKEN", "plain-secret-3")
    monkeypatch.setenv("CI_AUTOFIX_PROBE", "visible")
    (project / "show_env.py").write_text(
        "import os\n"
        "print('SECRETS_SEEN:', sorted(k for k, v in os.environ.items() if 'plain-secret' in v))\n"
        "print('PROBE:', os.environ.get('CI_AUTOFIX_PROBE'))\n"
        "raise SystemExit(1)\n"
    )
    before = reproduce(sandbox_for(project), ["python show_env.py"], timeout=60)
    assert before[0].tail.splitlines() == ["SECRETS_SEEN: []", "PROBE: visible"]


def test_a_command_that_needs_a_service_is_unverified(project: Path) -> None:
    (project / "db_check.py").write_text(
        "import socket, sys\n"
        "s = socket.socket()\n"
        "try:\n    s.connect(('127.0.0.1', 9))\n"
        "except OSError as exc:\n    print('psycopg.OperationalError: connection failed:', exc)\n    sys.exit(2)\n"
    )
    result = verify(sandbox_for(project), ["python db_check.py"], timeout=60)
    assert result.outcome == "unverified"
    assert "needs a service or network access that is not available here" in result.reason


def test_a_command_that_cannot_fetch_from_the_network_is_unverified(project: Path) -> None:
    # as pre-commit cloning a hook's repository where no name resolves: git's own message, exit 3
    (project / "fetch_hook.py").write_text(
        "import subprocess, sys\n"
        "done = subprocess.run(['git', 'ls-remote', 'https://hooks.example.invalid/asottile/pyupgrade'])\n"
        "print('An unexpected error has occurred: CalledProcessError')\n"
        "sys.exit(3 if done.returncode else 0)\n"
    )
    result = verify(sandbox_for(project), ["python fetch_hook.py"], timeout=60)
    assert result.evidence[0].after.exit_code == 3
    assert result.outcome == "unverified", result.reason
    assert (
        "needs a service or network access that is not available here (Could not resolve host)"
        in result.reason
    )


def test_a_failure_that_does_not_reproduce_here_is_unverified(project: Path) -> None:
    sandbox = sandbox_for(project)
    passing = "pytest -q -p no:cacheprovider test_other.py"
    before = reproduce(sandbox, [passing], timeout=60)
    result = verify(sandbox, [passing], before=before, timeout=60)
    assert result.outcome == "unverified"
    assert "passed here before the fix too" in result.reason


def test_a_failing_setup_command_is_unverified_and_nothing_else_runs(project: Path) -> None:
    result = verify(
        sandbox_for(project), [FAILING], environment=Environment("make deps-not-there"), timeout=60
    )
    assert result.outcome == "unverified"
    assert result.reason.startswith("The environment could not be prepared: the setup `make deps-not-there`")
    assert result.evidence == [] and result.setup is not None


# ---- ruff on the changed files ---------------------------------------------------------------------


def test_ruff_reports_only_new_problems_in_changed_files(project: Path) -> None:
    (project / "ruff.toml").write_text("line-length = 100\n")
    (project / "legacy.py").write_text("import os\nx=1\n")  # lint debt already there before the fix
    git(project, "add", ".")
    git(project, "commit", "-qm", "ruff", author=DEV)
    sandbox = sandbox_for(project)
    before = reproduce(sandbox, [FAILING], timeout=60)
    (project / "calc.py").write_text(FIXED)
    (project / "legacy.py").write_text("import os\nx=2\n")
    clean = verify(sandbox, [FAILING], before=before, changed_files=["calc.py", "legacy.py"], timeout=60)
    assert clean.outcome == "verified", clean.reason
    lint = {
        p.command: (p.before.ok if p.before else None, p.after.ok) for p in clean.evidence if p.role == "lint"
    }
    assert lint == {
        "ruff check --no-fix calc.py": (True, True),
        "ruff check --no-fix legacy.py": (False, False),
        "ruff format --check calc.py": (True, True),
        "ruff format --check legacy.py": (False, False),
    }

    (project / "calc.py").write_text(FIXED.replace("return a + b", "import sys\n    return a+b"))
    dirty = verify(sandbox, [FAILING], before=before, changed_files=["calc.py"], timeout=60)
    assert dirty.outcome == "failed"
    assert "`ruff check --no-fix calc.py` reports new problems" in dirty.reason
    assert "`ruff format --check calc.py` reports new problems" in dirty.reason


def test_ruffs_formatter_does_not_judge_a_repository_that_formats_with_black(project: Path) -> None:
    """A repository that lints with ruff and formats with black (textual's setup, in the real-history
    benchmark): black's output is not ruff format's, so ruff format must not call the fix's formatting
    a new problem; ruff's linter still judges it."""
    (project / "pyproject.toml").write_text(
        "[tool.ruff]\nline-length = 100\n\n[tool.black]\nline-length = 100\n"
    )
    git(project, "add", ".")
    git(project, "commit", "-qm", "ruff lints, black formats", author=DEV)
    sandbox = sandbox_for(project)
    before = reproduce(sandbox, [FAILING], timeout=60)
    (project / "calc.py").write_text(FIXED)
    result = verify(sandbox, [FAILING], before=before, changed_files=["calc.py"], timeout=60)
    assert result.outcome == "verified", result.reason
    assert [p.command for p in result.evidence if p.role == "lint"] == ["ruff check --no-fix calc.py"]


def test_ruff_comes_from_the_fixers_tools_when_the_repository_environment_has_none(
    project: Path, tmp_path: Path
) -> None:
    (project / "ruff.toml").write_text("line-length = 100\n")
    git(project, "add", ".")
    git(project, "commit", "-qm", "ruff", author=DEV)
    tools = tool_dir(project, [FAILING], [], tmp_path / "tools", timeout=60)  # read before any code runs
    assert tools is not None and sorted(p.name for p in tools.iterdir()) == ["ruff"]
    bin_dir = tmp_path / "bin"  # the commands' own PATH: pytest, and no ruff
    bin_dir.mkdir()
    (bin_dir / "pytest").symlink_to(TOOLS / "pytest")

    def sandbox_with(*extra: Path) -> Sandbox:
        path = os.pathsep.join([str(bin_dir), "/usr/bin", "/bin", *map(str, extra)])
        return Sandbox(project, timeout=60, extra_env={"PATH": path, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"})

    before = reproduce(sandbox_with(tools), [FAILING], timeout=60)
    (project / "calc.py").write_text(FIXED.replace("return a + b", "import sys\n    return a+b"))
    dirty = verify(sandbox_with(tools), [FAILING], before=before, changed_files=["calc.py"], timeout=60)
    assert dirty.outcome == "failed", dirty.reason
    assert "`ruff check --no-fix calc.py` reports new problems" in dirty.reason
    assert "`ruff format --check calc.py` reports new problems" in dirty.reason
    # without the fixers' tools the check could not run at all (and so would not count)
    blind = verify(sandbox_with(), [FAILING], before=before, changed_files=["calc.py"], timeout=60)
    assert blind.outcome == "verified"


def test_the_tools_the_commands_run_or_the_plan_names_are_linked_and_nothing_else(
    project: Path, tmp_path: Path
) -> None:
    assert tool_dir(project, [FAILING], [], tmp_path / "tools", timeout=60) is None  # pytest only, no ruff
    tools = tool_dir(project, ["black --check . && isort --check-only ."], [], tmp_path / "tools", timeout=60)
    assert tools is not None
    assert {p.name: p.resolve() for p in tools.iterdir()} == {
        "black": (TOOLS / "black").resolve(),
        "isort": (TOOLS / "isort").resolve(),
    }
    # `make lint` names no tool: the fixer the plan chose for it is linked all the same
    (project / "pyproject.toml").write_text("[tool.black]\n")
    plan = plan_fixers(project, diagnose("would reformat calc.py\n"), ["black"], ["make lint"])
    assert [spec.package for spec in plan] == ["black"]
    tools = tool_dir(project, ["make lint"], plan, tmp_path / "tools", timeout=60)
    assert tools is not None and sorted(p.name for p in tools.iterdir()) == ["black"]


def test_a_version_named_on_the_command_line_wins_as_in_the_plan(project: Path) -> None:
    (project / "ruff.toml").write_text("line-length = 100\n")
    (project / "requirements-dev.txt").write_text("ruff==0.9.1\nblack>=24\n")
    commands = ["ruff format --check .", "uvx ruff@0.8.6 check .", "black --check ."]
    assert wanted_tools(project, commands, []) == {
        "ruff": Requirement("==0.8.6"),
        "black": Requirement(">=24"),
    }
    assert wanted_tools(project, ["ruff format --check ."], []) == {"ruff": Requirement("==0.9.1")}
    # only for the check of the changed files: the environment's ruff (its pin) first, else any
    assert wanted_tools(project, [FAILING], []) == {"ruff": None}
    # the plan's own choice stands
    plan = plan_fixers(project, diagnose("Would reformat: calc.py\n"), ["ruff-format"], commands)
    assert wanted_tools(project, commands, plan)["ruff"] == plan[0].requirement


def test_uses_ruff(tmp_path: Path) -> None:
    assert not uses_ruff(tmp_path)
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\n[project.optional-dependencies]\ndev = ["ruff==0.6.0"]\n'
    )
    assert uses_ruff(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[tool.ruff.lint]\nselect = ["E"]\n')
    assert uses_ruff(tmp_path)
    (tmp_path / "pyproject.toml").write_text("[tool.black]\nline-length = 100\n")
    assert not uses_ruff(tmp_path)


# ---- the default setup of a Python repository -----------------------------------------------------------


def test_default_setup_installs_the_project_with_test_extras_groups_and_requirements(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\nversion = "1"\n'
        '[project.optional-dependencies]\ntest = ["pytest"]\ndocs = ["sphinx"]\ndev = ["ruff"]\n'
        '[dependency-groups]\ntests = ["hypothesis>=6", {include-group = "lint"}]\nlint = ["ruff"]\n'
    )
    (tmp_path / "requirements-dev.txt").write_text("mypy\n")
    (tmp_path / "requirements-docs.txt").write_text("sphinx\n")
    python = tmp_path / "env" / "bin" / "python"
    assert default_setup(tmp_path, python) == [
        str(python),
        "-m",
        "pip",
        "install",
        "--disable-pip-version-check",
        "--no-input",
        "--quiet",
        "-e",
        ".[test,dev]",
        "hypothesis>=6",
        "-r",
        "requirements-dev.txt",
    ]


def test_default_setup_of_a_plain_pyproject_without_extras(tmp_path: Path) -> None:
    (tmp_path / "setup.py").write_text("from setuptools import setup\nsetup()\n")
    python = tmp_path / "py"
    assert default_setup(tmp_path, python)[-2:] == ["-e", "."]  # type: ignore[index]


@pytest.mark.slow
def test_default_setup_creates_a_venv_outside_the_workspace_once(project: Path, tmp_path: Path) -> None:
    (project / "requirements.txt").write_text("# nothing to install\n")
    env_dir = tmp_path / "env"
    sandbox = Sandbox(project, timeout=120)  # no tools on PATH: the venv's bin comes first
    where = "python -c \"import os, sys; print(sys.prefix); print(os.environ['VIRTUAL_ENV'])\""
    before = reproduce(sandbox, [where], timeout=120, environment=Environment(env_dir=env_dir))
    assert before[0].ok, before[0].tail
    assert before[0].tail.splitlines() == [str(env_dir), str(env_dir)]
    assert not (project / "env").exists()
    result = verify(sandbox, [where], before=before, timeout=120, environment=Environment(env_dir=env_dir))
    assert result.setup is None  # reused: the dependency files did not change
    (project / "requirements.txt").write_text("# still nothing, but changed\n")
    again = verify(sandbox, [where], before=before, timeout=120, environment=Environment(env_dir=env_dir))
    assert again.setup is not None and again.setup.ok
    assert again.setup.command == "pip install -r requirements.txt"


def test_evidence_tail_is_redacted() -> None:
    from ci_autofix.shell import Completed

    token = "ghp_" + "a" * 36
    evidence = Evidence.of("x", Completed(("x",), 1, f"line\nAuthorization: token {token}\n", 0.1))
    assert token not in evidence.tail


def test_standalone_linters_need_no_environment() -> None:
    assert not needs_environment(["ruff format --check .", "black --check src", "python -m isort --check ."])
    assert not needs_environment(["/opt/venv/bin/ruff check", ""])
    assert needs_environment(["ruff check .", "pytest -q"])
    assert needs_environment(["python -m mypy src"])
    assert needs_environment(["make lint"])


GRADLEW = """#!/bin/sh
# the repository's Gradle wrapper, replaying a real Gradle 4.4 run (tests/ladder/outputs) of its state
mkdir -p build/test-results/test
cp "state/TEST-example.CalcTest.xml" build/test-results/test/
cat state/output.txt
grep -q 'BUILD SUCCESSFUL' state/output.txt
"""


def test_a_gradle_fix_that_drops_a_test_is_caught_from_its_reports(tmp_path: Path) -> None:
    # Gradle prints its test count only when a test fails: after the fix, only its reports count
    outputs = Path(__file__).parent / "outputs"
    root = tmp_path / "repo"
    (root / "state").mkdir(parents=True)
    (root / "gradlew").write_text(GRADLEW)
    (root / "gradlew").chmod(0o755)

    def replay(state: str) -> None:
        (root / "state" / "output.txt").write_bytes((outputs / f"gradle_{state}.txt").read_bytes())
        report = (outputs / f"gradle_{state}_TEST-example.CalcTest.xml").read_bytes()
        (root / "state" / "TEST-example.CalcTest.xml").write_bytes(report)

    sandbox = Sandbox(root, timeout=60, extra_env={"PATH": os.environ["PATH"]})
    replay("before")
    before = reproduce(sandbox, ["./gradlew test"], timeout=60)
    assert before[0].exit_code == 1 and before[0].tests is not None and before[0].tests.ran == 2
    replay("after")
    honest = verify(sandbox, ["./gradlew test"], before=before, changed_files=["gradlew"], timeout=60)
    assert honest.outcome == "verified" and honest.tests_dropped == [], honest.reason
    replay("after_removed")
    result = verify(sandbox, ["./gradlew test"], before=before, changed_files=["gradlew"], timeout=60)
    assert len(result.tests_dropped) == 1
    assert "1 fewer ran (2 before the fix, 1 after)" in result.tests_dropped[0]
    assert "`example.CalcTest::addsZero`" in result.tests_dropped[0]


# A repository script replayed as its commands (`workflow.replay`), as isort's `scripts/lint.sh`:
# its first command needs the network (`cruft check`), so here the step stops there, fix or not.
STEP = "(\nset +e\nset -euxo pipefail\npython check_template.py\n" + FAILING + "\n)"


def test_a_step_of_several_commands_says_which_one_it_stopped_at_and_where_before_the_fix(
    project: Path,
) -> None:
    (project / "check_template.py").write_text(  # as cruft, into a new temporary directory each time
        "import sys, tempfile\nprint('Unable to reach the template repository, cloning into', tempfile.mkdtemp())\n"
        "sys.exit(1)\n"
    )
    sandbox = sandbox_for(project)
    [before] = reproduce(sandbox, [STEP], timeout=60)
    (project / "calc.py").write_text(FIXED)
    result = verify(sandbox, [STEP], before=[before], timeout=60)
    assert result.outcome == "failed"  # never verified: the whole step must pass
    assert result.reason.endswith(
        "still fails after the fix (exit 1): it stops at `python check_template.py`, where it stopped the "
        "same way before the fix (exit 1, the same output): the fix did not change that command's result, "
        "and the commands after it did not run here."
    )
    assert "Unable to reach the template repository" in result.to_markdown()  # its output, fenced

    (project / "check_template.py").write_text("print('template up to date')\n")  # the step gets further
    git(project, "commit", "-qam", "template reachable", author=DEV)
    (project / "calc.py").write_text(BUGGY)
    [before] = reproduce(sandbox, [STEP], timeout=60)
    (project / "calc.py").write_text(BUGGY.replace("a - b", "a - b + 1"))  # a fix that does not fix
    result = verify(sandbox, [STEP], before=[before], timeout=60)
    assert result.reason.endswith(f"it stops at `{FAILING}`, where it stopped before the fix too (exit 1).")


def test_where_a_step_stopped_is_read_only_from_its_own_lines() -> None:
    output = "+ python check_template.py\ntemplate up to date\n+ black --check src\nwould reformat src/a.py\n"
    assert (
        stopped_at("(\nset -ex\npython check_template.py\nblack --check src\n)", output)
        == "black --check src"
    )
    globbed = "(\nset -x\nisort --check example_*/\nflake8 .\n)"
    assert stopped_at(globbed, "+ isort --check example_a/ example_b/\nERROR\n") == "isort --check example_*/"
    assert stopped_at(globbed, "+ rm -rf /\n") is None  # a traced line that is not the step's
    assert stopped_at("black --check src", "+ black --check src\n") is None  # one command: nothing to say


def test_a_step_that_stops_where_the_network_is_missing_is_unverified_and_says_where(project: Path) -> None:
    """cruft's `check` clones its template with git; without the network git says it cannot
    resolve the host: this machine's limit, not the fix's, and never "verified"."""
    (project / "check_template.py").write_text(
        "import sys\n"
        "print(\"fatal: unable to access 'https://github.com/o/template/': Could not resolve host: github.com\")\n"
        "sys.exit(1)\n"
    )
    sandbox = sandbox_for(project)
    [before] = reproduce(sandbox, [STEP], timeout=60)
    (project / "calc.py").write_text(FIXED)
    result = verify(sandbox, [STEP], before=[before], timeout=60)
    assert result.outcome == "unverified"
    assert (
        "needs a service or network access that is not available here (Could not resolve host)"
        in result.reason
    )
    assert (
        "it stops at `python check_template.py`, where it stopped the same way before the fix"
        in result.reason
    )
