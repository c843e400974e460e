"""Fixtures for the fixer tests: a fresh git repository, and one tools directory per session."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.testing.fixer_projects import Project
from tests.testing.git import init


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Project]:
    root = tmp_path / "repo"
    root.mkdir()
    init(root)
    yield Project(root)


@pytest.fixture(scope="session")
def tools_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Installed pinned tools, shared by the whole session so each version is installed once."""
    return tmp_path_factory.mktemp("tools")
