"""pytest fixtures of the GitHub emulator (enabled by `pytest_plugins` in tests/conftest.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.testing.emulator.core import GitHubEmulator


@pytest.fixture
def github_emulator(tmp_path: Path) -> Iterator[GitHubEmulator]:
    """A fresh emulator per test. At teardown it stops both servers and fails the test if any
    request our code made or any response the emulator gave broke GitHub's REST description,
    or if the emulator itself raised."""
    emu = GitHubEmulator.start(tmp_path / "github-emulator")
    try:
        yield emu
    finally:
        emu.close()
    problems = [str(v) for v in emu.violations] + [f"emulator bug: {e!r}" for e in emu.server_errors]
    if problems:
        pytest.fail("GitHub REST description violations:\n  " + "\n  ".join(problems[:30]), pytrace=False)
