"""Fixtures for the agent tests: the Messages API fake, and a small broken repository."""

from __future__ import annotations

from pathlib import Path

import pytest

from ci_autofix.sandbox import Sandbox
from tests.testing.agent_samples import make_broken_repo


@pytest.fixture
def broken_repo(tmp_path: Path) -> Path:
    return make_broken_repo(tmp_path)


@pytest.fixture
def sandbox(broken_repo: Path) -> Sandbox:
    return Sandbox(broken_repo, timeout=60)
