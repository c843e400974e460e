"""Our secrets leave our process environment once the settings hold them.

`withdraw(secrets)` removes from `os.environ` every variable that holds a secret we hold (the
token and key inputs in both spellings, GITHUB_TOKEN, ANTHROPIC_API_KEY, the runner's
ACTIONS_* tokens, and any variable whose value contains one of our secrets), so that no child
inherits them. Because `/proc/<pid>/environ` shows the environment we were started with
whatever `os.environ` says now, the original strings are also overwritten in place, and the
process is made non-dumpable (`PR_SET_DUMPABLE` 0), so that a process of the same uid can read
neither `/proc/<pid>/environ` nor `/proc/<pid>/mem`. Credentials that the cloud SDKs read
lazily (AWS_*, Google's) stay: `shell.scrubbed_env` keeps them from every child. Linux only;
elsewhere only `os.environ` is cleaned.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import sys
from collections.abc import Sequence

NAMES = (
    "INPUT_GITHUB-TOKEN",
    "INPUT_GITHUB_TOKEN",
    "INPUT_CI-TOKEN",
    "INPUT_CI_TOKEN",
    "INPUT_ANTHROPIC-API-KEY",
    "INPUT_ANTHROPIC_API_KEY",
    "GITHUB_TOKEN",
    "GH_TOKEN",
    "ANTHROPIC_API_KEY",
    "ACTIONS_RUNTIME_TOKEN",
    "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
)
_PR_SET_DUMPABLE = 4


def withdraw(secrets: Sequence[str]) -> list[str]:
    """Remove the variables holding `secrets` (and the known secret names); returns their names."""
    values = [s for s in secrets if s]
    names = [
        name
        for name, value in os.environ.items()
        if name in NAMES or any(secret in value for secret in values)
    ]
    for name in names:
        _overwrite_original(name)
        del os.environ[name]
    _non_dumpable()
    return names


def _libc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None


def _overwrite_original(name: str) -> None:
    """Zero the value of `name` in the C environment block (what /proc/<pid>/environ shows)."""
    libc = _libc()
    if libc is None:
        return
    with contextlib.suppress(ValueError, OSError):
        environ = ctypes.POINTER(ctypes.c_void_p).in_dll(libc, "environ")
        prefix = os.fsencode(name) + b"="
        index = 0
        while (address := environ[index]) is not None:
            entry = ctypes.string_at(address)
            if entry.startswith(prefix):
                ctypes.memset(address + len(prefix), 0, len(entry) - len(prefix))
            index += 1


def _non_dumpable() -> None:
    libc = _libc()
    if libc is not None:
        libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)
