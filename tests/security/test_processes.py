"""Issue 10, class 3 (the process half): no process started for the repository outlives the command.

Repository code (the CI script committed on the failing branch, run as the failing CI command
while ci-autofix reproduces the failure) double-forks a child that calls `setsid`: it leaves the
command's process group and session, so a kill of the group misses it. The child sleeps, then
reads the checkout's `.git/config` (where actions/checkout's credentials are put back once the
command is over) and writes what it read to a marker file. ci-autofix runs as the runner runs it
(workspace and runner files owned by uid 1001, ci-autofix as root). After it exits we wait past
the child's sleep: the marker was never written and no process of the run is left.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from ci_autofix.cli.demo import job_log
from tests.testing.emulator import GitHubEmulator
from tests.testing.git import git
from tests.testing.runner_sim import RunnerSim
from tests.testing.world import alice_repository

REPO = "acme/calc"
BRANCH = "fix-rounding"
CHECK = "./ci/check.sh"
WORKFLOW = (
    "name: CI\non: [push]\njobs:\n  test:\n    runs-on: ubuntu-latest\n"
    f"    steps:\n      - uses: actions/checkout@v4\n      - run: {CHECK}\n"
)
SLEEP_S = 6
PERSISTED = "eC1hY2Nlc3MtdG9rZW46Z2hzX3BlcnNpc3RlZA=="  # x-access-token:ghs_persisted
HONEST_CHECK = "#!/bin/bash\necho 'check failed: widgets.cfg is out of date'\nexit 1\n"

# The repository's CI script (repository code, run as the failing command). It leaves a process
# behind in a session of its own (fork, then setsid in the forked child, whose parent exits at
# once), and waits until it has escaped before it fails; that process carries the attack's token in its argv, waits until the command is over,
# then reads the checkout's `.git/config` and writes what it read to a marker file. Bash, not
# Python: the sandbox uid can run only what every user can run.
LINGER = 'touch "$1/started-$$"; sleep SLEEP; cat .git/config >"$1/marker-$$" 2>&1'.replace(
    "SLEEP", str(SLEEP_S)
)
ATTACK_CHECK = """#!/bin/bash
( setsid bash -c '{linger}' {token} {marker_dir} </dev/null >/dev/null 2>&1 & )
for _ in $(seq 100); do ls {marker_dir}/started-* >/dev/null 2>&1 && break; sleep 0.05; done
echo 'check failed: widgets.cfg is out of date'
exit 1
"""


@dataclass
class Attack:
    marker_dir: Path
    token: str

    def pids(self) -> list[int]:
        """Processes whose command line carries this attack's token."""
        found = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            with contextlib.suppress(OSError):
                if self.token.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
        return found

    def started(self) -> list[Path]:
        return sorted(self.marker_dir.glob("started-*"))

    def markers(self) -> list[Path]:
        return sorted(self.marker_dir.glob("marker-*"))


@pytest.fixture
def attack() -> Iterator[Attack]:
    """A marker directory the sandbox uid can write (pytest's base temp dir is 0700), removed after;
    any leftover of the attack is killed by pid, whatever the test's outcome."""
    marker_dir = Path(tempfile.mkdtemp(prefix="ci-autofix-reap-"))
    marker_dir.chmod(0o777)
    found = Attack(marker_dir, f"ci-autofix-leftover-{uuid.uuid4().hex}")
    try:
        yield found
    finally:
        for pid in found.pids():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        shutil.rmtree(marker_dir, ignore_errors=True)


def _cmdline(pid: int) -> str:
    with contextlib.suppress(OSError):
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    return "(gone)"


def _script(source: Path, text: str) -> dict[str, str]:
    """Write the executable CI script; `commit` then records it (files to write: none left)."""
    script = source / CHECK
    script.parent.mkdir(parents=True, exist_ok=True)
    script.write_text(text, encoding="utf-8")
    script.chmod(0o755)
    return {}


def test_a_setsid_grandchild_of_the_failing_command_does_not_outlive_it(
    github_emulator: GitHubEmulator, attack: Attack, tmp_path: Path
) -> None:
    emu = github_emulator
    source = tmp_path / "source"
    main = {"README.md": "widgets\n", ".github/workflows/ci.yml": WORKFLOW}
    honest = {CHECK.removeprefix("./"): HONEST_CHECK}
    repository = alice_repository(emu, source, REPO, main, BRANCH, honest, "Add the CI check")
    _script(source, HONEST_CHECK)  # executable: the payload's commit records the mode
    log = job_log(source, [CHECK])  # the real failure, before the payload is in the tree
    assert b"check failed" in log
    payload = ATTACK_CHECK.format(linger=LINGER, token=attack.token, marker_dir=attack.marker_dir)
    repository.commit(_script(source, payload), "Check the configuration")
    run = repository.failed_run(CHECK, log)
    workspace = repository.checkout(tmp_path / "workspace")

    # what actions/checkout persists, and our quarantine puts back once the command is over
    git(workspace, "config", "http.https://github.com/.extraheader", f"AUTHORIZATION: basic {PERSISTED}")
    # the image trusts /github/workspace in its system config; here the runner's HOME does it
    home = tmp_path / "runner" / "home"
    home.mkdir(parents=True)
    (home / ".gitconfig").write_text(f"[safe]\n\tdirectory = {workspace}\n")
    result = (
        RunnerSim(tmp_path, runner_uid=1001)
        .for_emulator(emu, REPO)
        .run(
            event_name="workflow_run",
            event=emu.workflow_run_event(run),
            workspace=workspace,
            extra_env={"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin"},
        )
    )
    assert result.outputs.get("status") in {"halted", "proposed", "error"}, result.stdout + result.stderr
    # the payload really ran during the run (else this test proves nothing) ...
    started = attack.started()
    assert started, "the repository's CI script never ran:\n" + result.stdout + result.stderr
    # ... nothing of it is left once ci-autofix has exited, and nothing acts later
    left = {pid: _cmdline(pid) for pid in attack.pids()}
    time.sleep(max(0.0, max(p.stat().st_mtime for p in started) + SLEEP_S + 2 - time.time()))
    acted = {p.name: p.read_text(errors="replace") for p in attack.markers()}
    assert (left, acted) == ({}, {}), "processes of the run outlived it, and acted later"
    assert result.outputs["status"] == "halted", result.summary
