"""Shared by the isolation tests (own git, secret reach, runner files): a repository whose failing
step runs its own code, with an attack committed on the failing branch.

The failing step is `python3 -m unittest -q && ruff format --check .`: the tests pass (their
module imports the branch's `conftest.py`, the attacker's code), then ruff finds a formatting
error that the deterministic fixer repairs, so the whole propose flow runs to the end without a
model. The attack runs each time the command runs (reproducing, then verifying). It is run by
the system's `python3`, which any uid can execute.

Everything lives in a directory made under the system temp dir with modes that let any uid
reach it (pytest's own base temp dir is 0700, so an unprivileged sandbox uid could not reach
`tmp_path`); the attack's records go to `marks/` (world-writable) inside it; the directory is
removed at teardown. The workspace and the runner's files belong to uid 1001 as on GitHub's
runners (or to root, for the self-hosted case), and ci-autofix runs as root.
"""

from __future__ import annotations

import base64
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.testing.emulator import GitHubEmulator, JobSpec, Run, StepSpec
from tests.testing.git import ALICE, clone, commit, git, init_repo
from tests.testing.runner_sim import RunnerSim, RunResult

REPO = "acme/widgets"
BRANCH = "feature"
COMMAND = "python3 -m unittest -q && ruff format --check ."
CI_TOKEN = "ghp_" + "C" * 36
API_KEY = "sk-ant-api03-" + "K" * 40
CLEAN = {
    "ruff.toml": "line-length = 100\n",
    "widgets.py": "def area(width, height):\n    return width * height\n",
    "test_widgets.py": "import unittest\n\nimport conftest  # noqa: F401  (the repository's test helpers)\n"
    "from widgets import area\n\n\nclass AreaTest(unittest.TestCase):\n    def test_area(self):\n"
    "        self.assertEqual(area(2, 3), 6)\n",
    ".github/workflows/ci.yml": "name: CI\non: [push]\njobs:\n  test:\n    runs-on: ubuntu-latest\n"
    f"    steps:\n      - uses: actions/checkout@v4\n      - run: {COMMAND}\n",
}
BROKEN = "def area(width,height):\n    return width*height\n"
FIXED = CLEAN["widgets.py"]

# The payload every planted knob runs: it records who ran it and copies its parent's
# environment (git's, when our own git runs it), then passes its input through (a filter must).
PAYLOAD = """\
#!/bin/sh
marks=$(dirname "$0")
id -u > "$marks/ran-$1" 2>/dev/null
cat "/proc/$PPID/environ" > "$marks/environ-$1" 2>/dev/null
cat /proc/*/environ > "$marks/all-environ-$1" 2>/dev/null
exec cat
"""


@pytest.fixture
def open_dir() -> Iterator[Path]:
    """A directory any uid can traverse (0711), under the system temp dir; removed at teardown."""
    path = Path(tempfile.mkdtemp(prefix="ci-autofix-security-"))
    path.chmod(0o711)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@dataclass
class Attack:
    emu: GitHubEmulator
    sim: RunnerSim
    run: Run
    head_sha: str
    workspace: Path
    marks: Path
    runner_root: Path

    def propose(self, **inputs: str) -> RunResult:
        return self.sim.run(
            event_name="workflow_run",
            event=self.emu.workflow_run_event(self.run),
            inputs={"ci-token": CI_TOKEN, "anthropic-api-key": API_KEY, **inputs},
            workspace=self.workspace,
            extra_env={
                "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin",
                # the agent is never needed here; if it were, it must fail at once
                "ANTHROPIC_BASE_URL": "http://127.0.0.1:9",
            },
        )

    def ran(self) -> list[str]:
        """The knobs whose payload was executed (by anyone)."""
        return sorted(p.name.removeprefix("ran-") for p in self.marks.glob("ran-*"))

    def loot(self) -> bytes:
        """Everything the attack wrote down, to search for secrets."""
        return b"".join(p.read_bytes() for p in sorted(self.marks.rglob("*")) if p.is_file())

    def secrets(self) -> list[str]:
        return [self.emu.token, CI_TOKEN, API_KEY]

    def fix_diff(self) -> str:
        [pull] = self.emu.pulls(REPO)
        fix_sha = self.emu.branch_sha(REPO, pull.head_ref)
        bare = self.emu.bare_path(REPO)
        assert git(bare, "rev-parse", f"{fix_sha}^") == self.head_sha
        return git(bare, "diff", "--no-ext-diff", "--no-textconv", self.head_sha, fix_sha)


def leaked(loot: bytes, secrets: list[str]) -> list[str]:
    """Which secrets appear in `loot`, literally or base64-encoded (alone or as basic auth)."""
    found = []
    for secret in secrets:
        forms = [secret, base64.b64encode(secret.encode()).decode()]
        forms.append(base64.b64encode(f"x-access-token:{secret}".encode()).decode())
        if any(form.encode() in loot for form in forms):
            found.append(secret[:8] + "...")
    return found


def make_attack(
    emu: GitHubEmulator,
    base: Path,
    conftest: str,
    *,
    runner_uid: int | None = 1001,
    checkout_v6: bool = True,
    extra: dict[str, str] | None = None,
    submodules: dict[str, str] | None = None,
) -> Attack:
    """Seed the failing branch (with `conftest` as its conftest.py) and lay out the propose job.

    `conftest` may use the names MARKS, WORKSPACE, RUNNER_ROOT and PAYLOAD (paths, as str);
    `extra` files are committed with it; `submodules` (path -> commit sha) are committed as
    gitlinks with their `.gitmodules` entries, uninitialised (an empty directory), as a checkout
    without `submodules: true` has them.
    With `checkout_v6`, the checkout carries credentials as actions/checkout persists them: an
    `extraheader` in `.git/config` and a credentials file in RUNNER_TEMP included from it.
    """
    marks = base / "marks"
    marks.mkdir()
    marks.chmod(0o777)
    payload = marks / "payload.sh"
    payload.write_text(PAYLOAD)
    payload.chmod(0o755)
    workspace = base / "workspace"
    runner_root = base / "runner"  # RunnerSim's layout: runner/{home,runner_temp,file_commands,...}
    prelude = (
        f"MARKS = {str(marks)!r}\nWORKSPACE = {str(workspace)!r}\n"
        f"RUNNER_ROOT = {str(runner_root)!r}\nPAYLOAD = {str(payload)!r}\n"
    )
    source = base / "source"
    init_repo(source, CLEAN)
    git(source, "checkout", "-q", "-b", BRANCH)
    attack = source / "conftest.py"
    attack.write_text(prelude + textwrap.dedent(conftest))
    subprocess.run([_ruff(), "format", "-q", "conftest.py"], cwd=source, check=True)  # only widgets.py to fix
    modules = ""
    for path, sha in (submodules or {}).items():
        (source / path).mkdir(parents=True)
        git(source, "update-index", "--add", "--cacheinfo", f"160000,{sha},{path}")
        modules += f'[submodule "{path}"]\n\tpath = {path}\n\turl = https://github.com/acme/{path}.git\n'
    if modules:
        extra = {**(extra or {}), ".gitmodules": modules}
    head_sha = commit(
        source, {"widgets.py": BROKEN, "conftest.py": attack.read_text(), **(extra or {})}, "Add the attack"
    )
    emu.create_repo(REPO, source=source)
    emu.add_token(CI_TOKEN, "ci-bot")
    emu.add_user("alice", permission="write", email=ALICE[1])
    run = emu.add_workflow_run(
        REPO,
        ".github/workflows/ci.yml",
        BRANCH,
        head_sha,
        "failure",
        actor="alice",
        jobs=[
            JobSpec(
                "test",
                "failure",
                [StepSpec("Set up job", "success"), StepSpec(f"Run {COMMAND}", "failure")],
                log=_log(source),
            )
        ],
    )
    clone(source, workspace, detach=head_sha)
    # The runner's HOME lets git accept the runner-owned checkout (git run as root refuses a
    # repository another uid owns), as a container job's HOME set up by earlier steps may.
    home = runner_root / "home"
    home.mkdir(parents=True)
    (home / ".gitconfig").write_text("[safe]\n\tdirectory = *\n")
    if checkout_v6:
        _persist_credentials(workspace, runner_root / "runner_temp", emu.token)
    return Attack(
        emu,
        RunnerSim(base, runner_uid=runner_uid).for_emulator(emu, REPO),
        run,
        head_sha,
        workspace,
        marks,
        runner_root,
    )


def _persist_credentials(workspace: Path, runner_temp: Path, token: str) -> None:
    """What actions/checkout leaves: an Authorization header in `.git/config` (v4), and (v6) a
    credentials file in RUNNER_TEMP that `.git/config` includes."""
    basic = base64.b64encode(f"x-access-token:{token}".encode()).decode()
    runner_temp.mkdir(parents=True, exist_ok=True)
    credentials = runner_temp / "git-credentials-0f6c3a52-1111-4222-8333-944455556666.config"
    credentials.write_text(f'[http "https://github.com/"]\n\textraheader = AUTHORIZATION: basic {basic}\n')
    with (workspace / ".git" / "config").open("a") as config:
        config.write(f'[http "https://github.com/"]\n\textraheader = AUTHORIZATION: basic {basic}\n')
        config.write(f'[includeIf "gitdir:{workspace}/.git"]\n\tpath = {credentials}\n')


def _log(source: Path) -> bytes:
    """The failed step's log: pytest's summary (it passed) and ruff's real complaint."""
    ruff = subprocess.run(
        [_ruff(), "format", "--check", "."],
        cwd=source,
        capture_output=True,
        text=True,
        check=False,
    )
    assert ruff.returncode == 1, ruff.stdout + ruff.stderr
    stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f") + "0Z"
    lines = [
        "##[group]Run actions/checkout@v4",
        "##[endgroup]",
        f"##[group]Run {COMMAND}",
        f"\x1b[36;1m{COMMAND}\x1b[0m",
        "shell: /usr/bin/bash -e {0}",
        "##[endgroup]",
        "----------------------------------------------------------------------",
        "Ran 1 test in 0.000s",
        "",
        "OK",
        *(ruff.stdout + ruff.stderr).splitlines(),
        "##[error]Process completed with exit code 1.",
        "Post job cleanup.",
    ]
    return ("\ufeff" + "\n".join(f"{stamp} {line}" for line in lines) + "\n").encode()


def _ruff() -> str:
    return str(Path(sys.executable).parent / "ruff")


def run_as_root_only() -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root: ci-autofix runs as root in the action and lays files out as uid 1001")
