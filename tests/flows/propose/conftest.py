"""Fixtures of the propose suites run in process: the format scenario's failing run."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.testing.emulator import GitHubEmulator
from tests.testing.format_scenario import Scenario, in_process


@pytest.fixture
def scenario(github_emulator: GitHubEmulator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Scenario:
    """`acme/widgets`, whose CI failed on `ruff format --check`, to propose in this process."""
    return in_process(github_emulator, tmp_path, monkeypatch)
