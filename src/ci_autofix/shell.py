"""Every subprocess we start: argv lists, explicit cwd and env, a timeout, capped output.

Commands run in their own process group (session), so a timeout kills the command and
everything it forked; then `reap.sweep` kills what left the group (a double-forked `setsid`
child) wherever it went, or raises `reap.Survivors`: when `run` returns, nothing the command
started is running. Output is read as it comes and kept within a cap (head and tail), so a
command that prints 100 MB costs a bounded amount of memory.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from ci_autofix import reap
from ci_autofix.redact import find_secrets

DEFAULT_MAX_OUTPUT = 256 * 1024
_CHUNK = 64 * 1024

# Variable names that must never reach a process we run for the repository's code.
_SECRET_NAME = re.compile(
    r"(TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|PRIVATE|API_?KEY|ACCESS_?KEY|_KEY$|^KEY$)", re.I
)
_DROPPED_PREFIXES = ("INPUT_", "ACTIONS_", "ANTHROPIC_", "AWS_", "GOOGLE_", "CLOUD_ML_", "GH_", "GIT_")
_DROPPED_NAMES = frozenset(
    {
        "GITHUB_TOKEN",
        "GITHUB_OUTPUT",
        "GITHUB_STEP_SUMMARY",
        "GITHUB_ENV",
        "GITHUB_PATH",
        "GITHUB_STATE",
        "SSH_AUTH_SOCK",
        "NETRC",
        "CURL_HOME",
        "DOCKER_CONFIG",
        "KUBECONFIG",
        "PIP_INDEX_URL",
        "PIP_EXTRA_INDEX_URL",
    }
)


@dataclass(frozen=True)
class Completed:
    argv: tuple[str, ...]
    exit_code: int | None  # None when the command could not be started or was killed
    output: str  # stdout and stderr interleaved, capped
    duration_s: float
    timed_out: bool = False
    truncated: bool = False
    not_found: bool = False
    reaped: tuple[int, ...] = ()  # pids of processes it left behind, killed after it ended

    @property
    def ok(self) -> bool:
        return self.exit_code == 0

    def tail(self, lines: int = 30) -> str:
        return "\n".join(self.output.rstrip("\n").splitlines()[-lines:])

    def describe(self) -> str:
        if self.not_found:
            return f"`{self.argv[0]}` is not installed here"
        if self.timed_out:
            return f"timed out after {self.duration_s:.0f}s and was killed"
        return f"exit code {self.exit_code}"


def scrubbed_env(
    base: Mapping[str, str] | None = None, extra: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The environment for code we do not trust: no tokens, no inputs, no runner internals.

    A variable goes when its name says it is secret or belongs to the runner, and also when
    its value looks like a credential whatever its name (`DEPLOY=ghp_...`).
    """
    source = os.environ if base is None else base
    env = {
        name: value
        for name, value in source.items()
        if name not in _DROPPED_NAMES
        and not name.startswith(_DROPPED_PREFIXES)
        and not _SECRET_NAME.search(name)
        and not find_secrets(value)
    }
    env["GIT_TERMINAL_PROMPT"] = "0"
    env.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    if extra:
        env.update(extra)
    return env


class _CappedBuffer:
    """Keeps the first and last bytes of a stream; drops the middle once over the cap."""

    def __init__(self, cap: int) -> None:
        self.head_cap = cap // 4
        self.tail_cap = cap - self.head_cap
        self.head = bytearray()
        self.tail = bytearray()
        self.dropped = 0

    def add(self, chunk: bytes) -> None:
        room = self.head_cap - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if not chunk:
            return
        self.tail += chunk
        excess = len(self.tail) - self.tail_cap
        if excess > 0:
            del self.tail[:excess]
            self.dropped += excess

    def text(self) -> str:
        middle = f"\n[... {self.dropped} bytes of output omitted ...]\n".encode() if self.dropped else b""
        return bytes(self.head + middle + self.tail).decode("utf-8", errors="replace")


def run(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    timeout: float,
    max_output: int = DEFAULT_MAX_OUTPUT,
    stdin: bytes | None = None,
    user: int | None = None,
    group: int | None = None,
    dedicated_user: bool = False,
) -> Completed:
    """Run argv to completion (or timeout) and return what it printed, capped.

    Afterwards nothing the command started is left: its process group is killed, then every
    process it left elsewhere (see `reap`). `dedicated_user=True` says `user` owns nothing else, so
    every process of that uid is killed too. Raises `reap.Survivors` when something cannot be killed.
    """
    argv = tuple(str(a) for a in argv)
    if not argv:
        raise ValueError("empty command")
    if dedicated_user and (user is None or user in (0, os.getuid(), os.geteuid())):
        raise ValueError("dedicated_user needs a user other than root and ourselves")
    start = time.monotonic()
    try:
        with reap.starting() as starting:
            proc = subprocess.Popen(
                argv,
                cwd=cwd,
                env=dict(env),
                stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                close_fds=True,
                user=user,
                group=group,
                extra_groups=[] if user is not None else None,
            )
            command = starting.track(proc.pid)
    except (FileNotFoundError, PermissionError, NotADirectoryError) as exc:
        return Completed(argv, None, f"{exc.strerror or exc}: {argv[0]}", 0.0, not_found=True)
    assert proc.stdout is not None
    output = _Reader(proc.stdout, max_output)
    if stdin is not None and proc.stdin is not None:
        _feed(proc.stdin, stdin)
    timed_out = _wait(proc, timeout)  # its group killed: its children must not outlive it,
    reap.done(command)
    try:
        # nor may what left the group: this also closes the pipe they may hold, so the reader ends.
        reaped = reap.sweep(command, argv[0], uid=user if dedicated_user else None, gid=group)
    finally:
        output.close()
    return Completed(
        argv=argv,
        exit_code=None if timed_out else proc.returncode,
        output=output.buffer.text(),
        duration_s=time.monotonic() - start,
        timed_out=timed_out,
        truncated=output.buffer.dropped > 0,
        reaped=reaped,
    )


class _Reader:
    """A command's output, read as it comes by a thread of its own into a capped buffer."""

    def __init__(self, pipe: IO[bytes], cap: int) -> None:
        self.pipe = pipe
        self.buffer = _CappedBuffer(cap)
        self._fd = pipe.fileno()
        self._thread = threading.Thread(target=self._pump, daemon=True)
        self._thread.start()

    def _pump(self) -> None:
        with contextlib.suppress(OSError):
            while chunk := os.read(self._fd, _CHUNK):
                self.buffer.add(chunk)

    def close(self) -> None:
        self._thread.join(timeout=5)
        self.pipe.close()


def _feed(pipe: IO[bytes], data: bytes) -> None:
    """Write a command's input from a thread: a command that never reads its input must not block us
    past the timeout."""

    def feed() -> None:
        with contextlib.suppress(OSError):
            pipe.write(data)
            pipe.close()

    threading.Thread(target=feed, daemon=True).start()


def _wait(proc: subprocess.Popen[bytes], timeout: float) -> bool:
    """Wait for the command until `timeout`, then kill its whole group: a command's children (a test
    server, `sleep` in a fork) must not outlive it. True when it timed out."""
    timed_out = False
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
    _kill_group(proc.pid)
    proc.wait()
    return timed_out


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)
