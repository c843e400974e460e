"""`ci-autofix demo`: a small project with a real failing check, its real CI log, and `fix` on it.

The project has a formatting error (which `ruff format --check` reports) and a bug that a
unit test catches. The checks really run; their output is laid out as a GitHub Actions job
log; then `fix` runs on it. Without a model key the deterministic fixer repairs the
formatting and the report says what the agent would need for the test; with
`ANTHROPIC_API_KEY` set the agent fixes the bug too. Verification installs the sample as `fix`
installs any project by default (`pip install -e .`, which fetches setuptools from the package
index); ruff is fetched too when it is not installed beside ci-autofix.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import textwrap
from datetime import UTC, datetime
from pathlib import Path

from ci_autofix.cli.fix import print_report
from ci_autofix.cli.io import load
from ci_autofix.errors import Halt, UserError
from ci_autofix.fixers.install import Installer, Unavailable
from ci_autofix.flows.ended import ended_locally, local_words
from ci_autofix.flows.local import fix
from ci_autofix.git import BOT_EMAIL, BOT_NAME, Git
from ci_autofix.runner import Runner
from ci_autofix.settings import Local

FILES = {
    "pyproject.toml": """\
        [build-system]
        requires = ["setuptools>=61"]
        build-backend = "setuptools.build_meta"

        [project]
        name = "statskit"
        version = "0.1.0"

        [tool.setuptools]
        py-modules = ["statskit"]

        [tool.ruff]
        line-length = 100
        """,
    "statskit.py": """\
        def total(values):
            return sum( values )


        def mean(values):
            \"\"\"The arithmetic mean of a non-empty list of numbers.\"\"\"
            return total(values) // len(values)
        """,
    "test_statskit.py": """\
        import unittest

        from statskit import mean, total


        class StatsTest(unittest.TestCase):
            def test_total(self):
                self.assertEqual(total([1, 2, 3]), 6)

            def test_mean(self):
                self.assertEqual(mean([1, 2, 3, 4]), 2.5)


        if __name__ == "__main__":
            unittest.main()
        """,
}
CHECKS = ("ruff format --check .", "python -m unittest -v")
# The project's CI runs the checks: the commands `fix` re-runs come from this workflow, not the log.
WORKFLOW = (
    ".github/workflows/ci.yml",
    "".join(
        [
            "name: CI\non: [push, pull_request]\njobs:\n  check:\n    runs-on: ubuntu-latest\n    steps:\n",
            "      - uses: actions/checkout@v4\n",
            *(f"      - run: {command}\n" for command in CHECKS),
        ]
    ),
)
EPILOG = (
    "exit codes: 0 the sample's fix is committed on its side branch and verified (with a model key); "
    "1 a partial fix is committed: the formatting is fixed and the test still fails (without a model key, "
    "the expected ending); 2 a wrong argument (the message says what to do); 3 halted without a fix (the "
    "reason is printed); 130 interrupted."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--dir",
        type=Path,
        default=None,
        metavar="DIR",
        help="Where to create the sample project and its log (default: a new temporary directory, kept).",
    )


def run(args: argparse.Namespace) -> int:
    runner = Runner(in_actions=False, stream=sys.stderr, words=local_words)
    _tools_on_path()
    workdir = args.dir or Path(tempfile.mkdtemp(prefix="ci-autofix-demo-"))
    make_directory(workdir)
    root = workdir / "statskit"
    # The sample is set up as `fix` sets up any project by default (`pip install -e .`): the report
    # shows that command, and `fix` run by hand on the sample verifies the same way.
    settings = load(Local("demo"))
    runner.mask(settings.secrets())
    runner.stage(f"creating the sample project in {root}")
    create_project(root)
    runner.info(f"  its setup, as `fix` sets up any Python project by default: {_setup(root)}")
    runner.stage("running its checks to produce a CI log")
    _ruff_on_path(workdir / "tools")
    log = job_log(root, CHECKS)
    (workdir / "ci.log").write_bytes(log)
    runner.info(f"  the log is in {workdir / 'ci.log'}")
    try:
        proposal, branch = fix(root, log, settings, runner, branch="ci-autofix/demo")
    except Halt as halt:
        return ended_locally(halt, runner)
    code = print_report(proposal, branch, runner, root)
    if settings.anthropic_api_key is None:
        print(
            "\nThe formatting was fixed without a model, so the fix is partial. The failing test (`mean` uses "
            "integer division) needs the agent: set ANTHROPIC_API_KEY and run `ci-autofix demo` again to see it "
            "fixed too."
        )
    return code


def _setup(root: Path) -> str:
    """The command that installs the sample before its checks are re-run: the default setup."""
    from ci_autofix.ladder.environment import default_setup, shown_setup

    argv = default_setup(root, Path("python"))
    return shown_setup(argv) if argv else "none (nothing to install)"


def _tools_on_path() -> None:
    """The tools installed beside ci-autofix (ruff) are found even when the venv is not activated."""
    bindir = str(Path(sys.executable).parent)
    if bindir not in os.environ.get("PATH", "").split(os.pathsep):
        os.environ["PATH"] = bindir + os.pathsep + os.environ.get("PATH", "")


def _ruff_on_path(tools_dir: Path) -> None:
    """The sample's check runs ruff: ours when installed (the dev extra), else its default version
    installed now (hashes checked), last on PATH."""
    ruff = Installer(tools_dir, timeout=300).tool("ruff", None)
    if isinstance(ruff, Unavailable):
        raise UserError(
            f"The sample's check runs ruff, which is not here: {ruff.reason}.",
            "Install ci-autofix with its dev extra (`pip install -e '.[dev]'`) or install ruff, or run the "
            "demo where pip can reach a package index.",
        )
    os.environ["PATH"] = os.environ.get("PATH", "") + os.pathsep + str(ruff.executable.parent)


def make_directory(workdir: Path) -> None:
    """Create `workdir` (and its parents) for the sample and its log, or say why it cannot be done:
    a directory that holds anything is refused, so nothing of yours is ever overwritten."""
    remedy = "Pass a new or empty directory you can write to with --dir, or leave --dir out to use a temporary one."
    for parent in (workdir, *workdir.parents):
        if parent.exists() and not parent.is_dir():
            raise UserError(f"{parent} is a file, not a directory.", remedy)
    try:
        workdir.mkdir(parents=True, exist_ok=True)
        if any(workdir.iterdir()):
            raise UserError(
                f"{workdir} is not empty: the demo writes its sample and log only into an empty one.", remedy
            )
        (workdir / "statskit").mkdir()
    except OSError as exc:
        raise UserError(
            f"Cannot create the sample project in {workdir / 'statskit'}: {exc.strerror or exc}.", remedy
        ) from None


def create_project(root: Path) -> None:
    root.mkdir(parents=True, exist_ok=True)
    if any(root.iterdir()):
        raise UserError(f"{root} is not empty.", "Pass an empty or new directory with --dir.")
    for name, text in FILES.items():
        (root / name).write_text(textwrap.dedent(text), encoding="utf-8")
    (root / WORKFLOW[0]).parent.mkdir(parents=True)
    (root / WORKFLOW[0]).write_text(WORKFLOW[1], encoding="utf-8")
    git = Git(root)
    git.run("init", "--quiet", "--initial-branch=main")
    git.run("add", "--all")
    identity = {
        "GIT_AUTHOR_NAME": BOT_NAME,
        "GIT_AUTHOR_EMAIL": BOT_EMAIL,
        "GIT_COMMITTER_NAME": BOT_NAME,
        "GIT_COMMITTER_EMAIL": BOT_EMAIL,
    }
    git.run("commit", "--quiet", "--no-verify", "-m", "Add statskit", env=identity)


def job_log(root: Path, commands: tuple[str, ...] | list[str]) -> bytes:
    """Run each command in `root` and lay its real output out as a GitHub Actions job log."""
    lines: list[str] = []

    def emit(text: str) -> None:
        stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f") + "0Z"
        lines.append(f"{stamp} {text}")

    emit("##[group]Run actions/checkout@v4")
    emit("##[endgroup]")
    for command in commands:
        argv = command.split()
        beside = Path(sys.executable).parent / argv[0]
        argv[0] = sys.executable if argv[0] == "python" else str(beside) if beside.is_file() else argv[0]
        result = subprocess.run(argv, cwd=root, capture_output=True, text=True, timeout=120, check=False)
        emit(f"##[group]Run {command}")
        emit(f"\x1b[36;1m{command}\x1b[0m")
        emit("shell: /usr/bin/bash -e {0}")
        emit("##[endgroup]")
        for line in (result.stdout + result.stderr).splitlines():
            emit(line)
        if result.returncode != 0:
            emit(f"##[error]Process completed with exit code {result.returncode}.")
    emit("Post job cleanup.")
    return ("\ufeff" + "\n".join(lines) + "\n").encode()
