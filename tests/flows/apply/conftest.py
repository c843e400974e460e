"""Fixtures of the apply tests; the world they act on is built in `apply_world`."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.testing.apply_world import World, make_world
from tests.testing.emulator import GitHubEmulator


@pytest.fixture
def world(github_emulator: GitHubEmulator, tmp_path: Path) -> World:
    return make_world(github_emulator, tmp_path)
