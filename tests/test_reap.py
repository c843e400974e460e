"""Reaping (`reap`): no process that a command started outlives the command, whether it left the
process group (double fork, setsid, a new name) or runs as the command's dedicated uid; what
cannot be killed is a typed error. Real processes, through `shell.run` and `reap`'s own API."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from ci_autofix import reap, shell

PY = sys.executable


def _pids(path: Path) -> list[int]:
    return [int(line) for line in path.read_text().split()] if path.exists() else []


def _kill_all(pids: list[int]) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def _no_trace(pid: int) -> bool:
    """Gone for good: neither running nor a zombie (our reaper collected it)."""
    return not Path(f"/proc/{pid}").exists()


ESCAPE = """
import os, sys, time
def escape(then):
    if os.fork():
        os.wait()
        return
    os.setsid()
    if os.fork():
        os._exit(0)
    with open(sys.argv[1], "a") as out:
        out.write(f"{os.getpid()}\\n")
    then()
    os._exit(0)
"""


@pytest.mark.parametrize(
    "then",
    [
        "lambda: time.sleep(60)",  # double fork + setsid
        "lambda: (signal.signal(signal.SIGTERM, signal.SIG_IGN), time.sleep(60))",  # ignores SIGTERM
        # renames itself and becomes something else
        "lambda: os.execvp('bash', ['kworker/0:1', '-c', 'exec -a systemd-journald sleep 60'])",
    ],
    ids=["setsid", "ignores-sigterm", "renamed"],
)
def test_a_process_that_left_the_group_is_killed_and_reaped(tmp_path: Path, then: str) -> None:
    pids = tmp_path / "pids"
    script = f"import signal\n{ESCAPE}\nescape({then})\ntime.sleep(0.3)\n"
    try:
        result = shell.run([PY, "-c", script, str(pids)], cwd=tmp_path, env=shell.scrubbed_env(), timeout=30)
        [left] = _pids(pids)
        assert result.ok, result.output
        assert _no_trace(left), Path(f"/proc/{left}/cmdline").read_bytes()
        assert left in result.reaped
    finally:
        _kill_all(_pids(pids))


def test_a_process_forking_in_a_loop_is_killed_with_all_it_forked(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    # for 3 s at most, fork a new session every few ms; each child does the same, and sleeps
    loop = "lambda: [escape(lambda: time.sleep(60)) for _ in iter(lambda: time.monotonic() < end, False)]"
    script = f"{ESCAPE}\nend = time.monotonic() + 3\nescape({loop})\ntime.sleep(0.3)\n"
    stop = time.monotonic() + 4  # the loop has ended by then, whatever happened
    try:
        result = shell.run([PY, "-c", script, str(pids)], cwd=tmp_path, env=shell.scrubbed_env(), timeout=30)
        assert result.ok, result.output
        forked = _pids(pids)
        assert len(forked) > 1
        assert [pid for pid in forked if not _no_trace(pid)] == []
    finally:
        while any(not _no_trace(pid) for pid in _pids(pids)) and time.monotonic() < stop:
            _kill_all(_pids(pids))
            time.sleep(0.1)
        _kill_all(_pids(pids))


def test_our_other_children_are_left_alone(tmp_path: Path) -> None:
    """Processes this process started otherwise (before the command, or from another thread while
    it ran, as the emulator's `git http-backend`) and commands still running are not leftovers."""
    before = subprocess.Popen(["sleep", "30"])
    during: list[subprocess.Popen[bytes]] = []
    longer: list[shell.Completed] = []
    # another thread's command starts first and ends first, while ours (started after it) still runs
    other = threading.Thread(
        target=lambda: (
            during.append(subprocess.Popen(["sleep", "30"])),
            longer.append(shell.run(["sleep", "0.5"], cwd=tmp_path, env=shell.scrubbed_env(), timeout=30)),
        )
    )
    try:
        other.start()
        time.sleep(0.2)
        ours = shell.run(["sleep", "1"], cwd=tmp_path, env=shell.scrubbed_env(), timeout=30)
        other.join()
        assert ours.ok and longer[0].ok
        assert ours.reaped == () and longer[0].reaped == ()
        assert before.poll() is None and during[0].poll() is None
    finally:
        for proc in [before, *during]:
            proc.kill()
            proc.wait()


ROOT = pytest.mark.skipif(os.geteuid() != 0, reason="running commands as another uid needs root")


def _free_uid() -> int:
    """A uid no process uses: stands for the sandbox's dedicated uid."""
    taken = {
        int(line.split()[1])
        for status in Path("/proc").glob("[0-9]*/status")
        for line in _lines(status)
        if line.startswith("Uid:")
    }
    return next(uid for uid in range(3_700_000 + os.getpid() % 10_000, 4_000_000) if uid not in taken)


def _lines(path: Path) -> list[str]:
    try:
        return path.read_text().splitlines()
    except OSError:
        return []


@ROOT
def test_with_a_dedicated_uid_every_process_of_that_uid_is_killed(tmp_path: Path) -> None:
    """Even one that is not our descendant (here: started before the command, by someone else)."""
    uid = _free_uid()
    elsewhere = subprocess.Popen(
        ["sleep", "30"], user=uid, group=uid, extra_groups=[], start_new_session=True
    )
    try:
        plain = shell.run(["true"], cwd=tmp_path, env=shell.scrubbed_env(), timeout=30, user=uid, group=uid)
        assert plain.ok and elsewhere.poll() is None  # a uid that is not dedicated: its processes stay
        result = shell.run(
            ["true"],
            cwd=tmp_path,
            env=shell.scrubbed_env(),
            timeout=30,
            user=uid,
            group=uid,
            dedicated_user=True,
        )
        assert result.ok
        assert elsewhere.wait(timeout=5) == -signal.SIGKILL, "the uid's other process survived"
        assert elsewhere.pid in result.reaped
    finally:
        elsewhere.kill()
        elsewhere.wait()


def test_dedicated_user_refuses_root_and_ourselves(tmp_path: Path) -> None:
    for user in (None, 0, os.getuid()):
        with pytest.raises(ValueError, match="dedicated_user"):
            shell.run(
                ["true"], cwd=tmp_path, env=shell.scrubbed_env(), timeout=5, user=user, dedicated_user=True
            )


SWEEP_WITHOUT_CAP_KILL = """
import json, os, sys
from ci_autofix import reap
try:
    reap.sweep(reap.Started(os.getpid(), 0), "make serve", uid=int(sys.argv[1]), gid=int(sys.argv[1]), timeout=1)
except reap.Survivors as exc:
    print(json.dumps({"pids": exc.pids, "message": str(exc)}))
"""


@ROOT
@pytest.mark.skipif(shutil.which("setpriv") is None, reason="needs util-linux's setpriv")
def test_a_process_that_cannot_be_killed_is_a_typed_error(tmp_path: Path) -> None:
    """Fail closed: a process of the uid that neither the uid nor we may signal (its real and saved
    uid are another's; the sweep runs without CAP_KILL) is reported, with cause and remedy."""
    uid, other = _free_uid(), _free_uid() + 1
    stuck = subprocess.Popen(
        [
            PY,
            "-c",
            f"import os, time; os.setresgid({other}, {uid}, {other}); os.setresuid({other}, {uid}, {other}); "
            "time.sleep(30)",
        ],
        start_new_session=True,
    )
    try:
        for _ in range(200):  # until it has changed its uids
            if any(
                line.split()[1:3] == [str(other), str(uid)]
                for line in _lines(Path(f"/proc/{stuck.pid}/status"))
                if line.startswith("Uid:")
            ):
                break
            time.sleep(0.01)
        done = subprocess.run(
            [
                "setpriv",
                "--bounding-set",
                "-kill",
                "--inh-caps",
                "-kill",
                PY,
                "-c",
                SWEEP_WITHOUT_CAP_KILL,
                str(uid),
            ],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        report = json.loads(done.stdout)
        assert report["pids"] == [stuck.pid]
        assert f"pid {stuck.pid}" in report["message"] and "What to do:" in report["message"]
        assert stuck.poll() is None
    finally:
        stuck.kill()
        stuck.wait()


def test_sweep_kills_what_a_command_left_behind_and_names_it(tmp_path: Path) -> None:
    """`reap`'s own API, as `shell.run` uses it: a command started inside `starting`, waited for,
    then swept. Its double-forked grandchild (a session of its own) is killed and named; a second
    sweep finds nothing left."""
    pids = tmp_path / "pids"
    script = f"import time\n{ESCAPE}\nescape(lambda: time.sleep(60))\n"
    try:
        with reap.starting() as start:
            command = subprocess.Popen([PY, "-c", script, str(pids)], start_new_session=True)
            started = start.track(command.pid)
        assert command.wait(timeout=30) == 0
        reap.done(started)
        [left] = _pids(pids)
        assert not _no_trace(left)  # alive until swept: the sweep is what kills it
        assert reap.sweep(started, "python escape.py") == (left,)
        assert _no_trace(left)
        assert reap.sweep(started, "python escape.py") == ()
    finally:
        _kill_all(_pids(pids))


def test_a_command_still_running_is_not_a_leftover(tmp_path: Path) -> None:
    """A command `shell.run` started and has not waited for yet (tracked, not `done`) is never swept."""
    with reap.starting() as start:
        first = subprocess.Popen(["sleep", "0.1"], start_new_session=True)
        started = start.track(first.pid)
    with reap.starting() as start:
        running = subprocess.Popen(["sleep", "30"], start_new_session=True)
        other = start.track(running.pid)
    try:
        first.wait(timeout=30)
        reap.done(started)
        assert reap.sweep(started, "sleep 0.1") == ()
        assert running.poll() is None
    finally:
        running.kill()
        running.wait()
        reap.done(other)
