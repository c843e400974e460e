"""Fixtures of the fault tests: the format scenario's failing run, proposed in process."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.testing.emulator import GitHubEmulator
from tests.testing.format_scenario import Scenario, make_scenario


@pytest.fixture
def scenario(github_emulator: GitHubEmulator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Scenario:
    """`acme/widgets`, whose CI failed on `ruff format --check`; ruff is this interpreter's (as in
    the image) and HOME is the test's own."""
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}:/usr/bin:/bin")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return make_scenario(github_emulator, tmp_path)
