"""The toolchain mirror (real archives on 127.0.0.1), built once per session."""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.testing.toolchain_mirror import Built, MirrorServer, available, build, session_root


@pytest.fixture(scope="session")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    missing = available()
    if missing:
        pytest.skip(f"the toolchain mirror cannot be built here: {missing}")
    return build(session_root(tmp_path_factory))


@pytest.fixture
def mirror(built: Built) -> Iterator[MirrorServer]:
    with MirrorServer(built.tree).running() as server:
        yield server


@pytest.fixture
def open_tmp() -> Iterator[Path]:
    """A temp directory other uids can enter (pytest's own is private to root): the sandbox uid
    must reach the toolchains installed under it."""
    path = Path(tempfile.mkdtemp(prefix="ci-autofix-toolchains-test-"))
    path.chmod(stat.S_IRWXU | stat.S_IRGRP | stat.S_IXGRP | stat.S_IROTH | stat.S_IXOTH)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)
        assert not os.path.exists(path)
