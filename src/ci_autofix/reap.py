"""Reaping: no process that a command started outlives the command.

`shell.run` starts each command in its own session and kills that process group when the
command ends, but a descendant can leave the group first (a double fork with `setsid` or
`setpgid`). After each command, `sweep` finds such leftovers wherever they went and kills them:

- always, on Linux: our process is a child subreaper (`prctl(PR_SET_CHILD_SUBREAPER)`), so every
  orphaned descendant of a command is re-parented to us instead of to init. The kernel attaches
  orphans to our main thread, so after the command, the main thread's children that `shell.run`
  is not running (the registry below), that we did not already have when the command started,
  and that started no earlier than it are leftovers: their whole trees are killed and waited
  for, so no zombie stays behind either. (A child that our main thread itself forks outside
  `shell.run` while another thread's command runs would be taken for a leftover; ci-autofix
  starts no such child, and other threads' children, such as a test server's, are not looked at.)
- when the command ran as a dedicated uid (one that owns nothing else): every process of that uid
  is killed, wherever it is: a short child drops to the uid and calls `kill(-1, SIGKILL)` (which
  signals every process the uid may signal, except itself), then `/proc/*/status` is scanned
  (real, effective and saved uid) and what is left is killed by pid, until none is left.

Both are bounded in time; a process still alive at the end raises `Survivors` (fail closed).
Elsewhere than Linux neither mechanism exists, and only the process-group kill applies.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ci_autofix.errors import UserError

SWEEP_TIMEOUT_S = 10.0
_PR_SET_CHILD_SUBREAPER = 36
_LINUX = sys.platform.startswith("linux")
_PROC = Path("/proc")

_lock = threading.Lock()  # held while a command starts and while leftovers are told apart from it
_running: set[int] = set()  # pids of the commands shell.run has started and not yet waited for
_subreaper: bool | None = None


class Survivors(UserError):
    """Processes a command left behind that we could not kill: the run stops before it goes on."""

    def __init__(self, command: str, pids: list[int], timeout: float) -> None:
        listed = ", ".join(str(pid) for pid in sorted(pids)[:20])
        super().__init__(
            f"`{command}` left {len(pids)} process(es) behind that ci-autofix could not kill within "
            f"{timeout:.0f}s (pid {listed}); it stopped before touching credentials, a remote or the "
            "runner's files, and pushed nothing.",
            "Make the command stop what it starts (servers, watchers, daemons), and run ci-autofix "
            "where it may kill its commands' processes (as root in its container, with CAP_KILL). A "
            "process stuck in the kernel (state D, such as on a hung network mount) cannot be killed "
            "by anyone: fix the mount, then re-run the job.",
        )
        self.pids = pids


@dataclass(frozen=True)
class Started:
    """A command `shell.run` started: its pid, when it started (clock ticks since boot), and the
    children we already had just before (none of them can be the command's)."""

    pid: int
    ticks: int
    existing: frozenset[int] = frozenset()


def become_subreaper() -> bool:
    """Make this process the reaper of its orphaned descendants (once); False where the kernel cannot."""
    global _subreaper
    if _subreaper is None:
        _subreaper = False
        if _LINUX:
            with contextlib.suppress(OSError, AttributeError):
                libc = ctypes.CDLL(None, use_errno=True)
                _subreaper = libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    return _subreaper


class Starting:
    """A command about to start, inside `starting`: `track` registers it once Popen returns."""

    def __init__(self) -> None:
        self.existing = frozenset(_children(os.getpid())) if _LINUX and _subreaper else frozenset()
        self.started: Started | None = None

    def track(self, pid: int) -> Started:
        _running.add(pid)
        ticks = _start_ticks(pid)
        self.started = Started(pid, ticks if ticks is not None else _now_ticks(), self.existing)
        return self.started


@contextlib.contextmanager
def starting() -> Iterator[Starting]:
    """Hold the registry while a command starts, so no concurrent sweep mistakes the new command
    for a leftover (the caller calls `track` with the new pid before leaving the block)."""
    become_subreaper()
    with _lock:
        yield Starting()


def done(started: Started) -> None:
    """The command has been waited for: it is no longer one of ours."""
    with _lock:
        _running.discard(started.pid)


def sweep(
    started: Started,
    command: str,
    *,
    uid: int | None = None,
    gid: int | None = None,
    timeout: float = SWEEP_TIMEOUT_S,
) -> tuple[int, ...]:
    """Kill every process that the command `started` left behind; returns their pids.

    With `uid` (a dedicated uid that owns nothing else), every process of that uid goes too.
    Raises `Survivors` when some are still alive after `timeout` seconds.
    """
    if not _LINUX:
        return ()
    deadline = time.monotonic() + timeout
    killed: set[int] = set()
    while True:
        left = _left(started, uid)
        if not left:
            return tuple(sorted(killed))
        if time.monotonic() > deadline:
            raise Survivors(command, left, timeout)
        orphans = _leftover_children(started) if _subreaper else []
        for pid in orphans:
            for member in _tree(pid):
                _kill(member, killed)
        _wait_for(orphans)
        if uid is not None and (owned := _processes_of(uid)):
            killed.update(owned)
            _kill_as(uid, gid)
            for pid in _processes_of(uid):  # what the uid itself may not signal (its euid only), we may
                _kill(pid, killed)
        time.sleep(0.002)


def _left(started: Started, uid: int | None) -> list[int]:
    """What the command left: our untracked children (with the subreaper), and the uid's processes."""
    orphans = _leftover_children(started) if _subreaper else []
    return [*orphans, *(_processes_of(uid) if uid is not None else [])]


def _leftover_children(started: Started) -> list[int]:
    """Our main thread's children that no running command is, that we did not have before the
    command started, and that started no earlier than it."""
    with _lock:
        return [
            pid
            for pid in _children(os.getpid())
            if pid not in _running
            and pid not in started.existing
            and (ticks := _start_ticks(pid)) is not None
            and ticks >= started.ticks
        ]


def _children(pid: int, *, threads: bool = False) -> list[int]:
    """The children of `pid`'s main thread (or of all its threads), from /proc; a scan of every
    process's parent where the kernel has no `children` files."""
    tasks = [str(pid)]
    if threads:
        with contextlib.suppress(OSError):
            tasks = os.listdir(_PROC / str(pid) / "task")
    found: list[int] = []
    for task in tasks:
        try:
            text = (_PROC / str(pid) / "task" / task / "children").read_text()
        except FileNotFoundError:
            if not (_PROC / str(pid)).exists():
                return found
            return [child for child in _all_pids() if _stat(child)[1:2] == [str(pid)]]
        except OSError:
            continue
        found += [int(child) for child in text.split()]
    return found


def _tree(root: int) -> list[int]:
    """`root` and all its descendants, parents before children."""
    seen: list[int] = []
    queue = [root]
    while queue:
        pid = queue.pop(0)
        if pid in seen:
            continue
        seen.append(pid)
        queue += _children(pid, threads=True)
    return seen


def _kill(pid: int, killed: set[int]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, signal.SIGKILL)
        killed.add(pid)


def _wait_for(children: list[int]) -> None:
    """Collect the exit status of killed children (without blocking), so none stays a zombie."""
    for pid in children:
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)


def _kill_as(uid: int, gid: int | None) -> None:
    """`kill(-1, SIGKILL)` from a short child that runs as `uid`: every process of the uid dies."""
    shell = shutil.which("sh", path="/usr/bin:/bin") or "/bin/sh"
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        subprocess.run(
            [shell, "-c", "kill -9 -1"],  # not `-s KILL -1`: dash reads that -1 as an option
            cwd="/",
            env={"PATH": "/usr/bin:/bin"},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            user=uid,
            group=gid if gid is not None else uid,
            extra_groups=[],
            timeout=5,
            check=False,
        )


def _processes_of(uid: int) -> list[int]:
    """Live processes whose real, effective or saved uid is `uid` (zombies are already dead)."""
    found = []
    wanted = str(uid).encode()
    for pid in _all_pids():
        try:
            with open(_PROC / str(pid) / "status", "rb") as status:
                text = status.read()
        except OSError:
            continue
        state = text.partition(b"\nState:")[2].split(maxsplit=1)[:1]
        uids = text.partition(b"\nUid:")[2].split()[:3]
        if wanted in uids and state not in ([b"Z"], [b"X"]):
            found.append(pid)
    return found


def _all_pids() -> list[int]:
    return [int(name) for name in os.listdir(_PROC) if name.isdigit()]


def _stat(pid: int) -> list[str]:
    """`/proc/<pid>/stat` from its state on (the command name can hold spaces and parentheses)."""
    try:
        text = (_PROC / str(pid) / "stat").read_text()
    except OSError:
        return []
    return text.rsplit(")", 1)[-1].split()


def _now_ticks() -> int:
    """Clock ticks since boot now (the clock /proc's start times count in), rounded down."""
    return int(time.clock_gettime(time.CLOCK_BOOTTIME) * os.sysconf("SC_CLK_TCK"))


def _start_ticks(pid: int) -> int | None:
    """When `pid` started, in clock ticks since boot (field 22 of its stat), or None if it is gone."""
    fields = _stat(pid)
    return int(fields[19]) if len(fields) > 19 else None
