"""Two work areas on one host never share a sandbox uid: each reservation holds a lock until its
work area is gone (before, a uid was drawn at random, and a second work area could draw the same
one and have its processes swept by the first)."""

from __future__ import annotations

import contextlib
import fcntl
import os

import pytest

from ci_autofix.ladder.workarea import LOCK_DIRS, SANDBOX_IDS, sandbox_ids

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="uids are reserved only as root")


def test_reservations_held_together_are_all_different() -> None:
    with contextlib.ExitStack() as stack:
        held = [stack.enter_context(sandbox_ids()) for _ in range(200)]  # a collision is ~98% likely unlocked
        uids = [ids[0] for ids in held if ids is not None]
        assert len(uids) == 200 and len(set(uids)) == 200
        assert all(uid in SANDBOX_IDS for uid in uids)


def test_a_reservation_ends_with_its_block() -> None:
    with sandbox_ids() as first:
        assert first is not None
    path = next(p for p in LOCK_DIRS if p.is_dir()) / str(first[0])
    with open(path, "rb") as fd:  # the lock is free again: it can be taken without waiting
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)


def test_the_reservation_directory_is_roots_alone() -> None:
    with sandbox_ids():
        info = next(p for p in LOCK_DIRS if p.is_dir()).lstat()
    assert (info.st_uid, info.st_mode & 0o777) == (0, 0o700)
