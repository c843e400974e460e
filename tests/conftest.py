"""Shared test configuration. Fixture plugins of the test doubles are listed here."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

# Tests reach only servers on 127.0.0.1: keep any machine proxy out of the way.
os.environ["NO_PROXY"] = "127.0.0.1,localhost"
os.environ["no_proxy"] = "127.0.0.1,localhost"
# The package index's release dates (`workflow.ci_versions`) are asked only by the tests that
# serve them on 127.0.0.1: elsewhere an unpinned tool keeps the version installed here.
os.environ["CI_AUTOFIX_INDEX_JSON_URL"] = ""

pytest_plugins = ["emulator.fixtures", "fakes.messages_fixtures", "pytester"]


def pytest_xdist_auto_num_workers(config: object) -> int:
    """`-n auto`: two workers per CPU. Most tests wait on a subprocess (git, the tools, our own
    entrypoint) or the emulator, so one per CPU leaves the CPUs half idle (on 2 CPUs: 11 min with
    2 workers, 8.8 min with 4, the whole suite)."""
    return 2 * (os.cpu_count() or 1)


# The lanes. `e2e`: a test that runs a flow end to end (the GitHub emulator, the Messages fake, or our
# own entrypoint in a subprocess); `slow`: a test that runs real tools or installs packages. The
# README's test command runs every lane; `pytest -m "not e2e and not slow"` is the unit loop.
_E2E_FIXTURES = frozenset({"github_emulator", "messages_api"})
_E2E_FOLDERS = frozenset(
    {"apply", "cli", "container", "faults", "gates", "integrity", "loop", "review", "security"}
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        path = Path(str(item.fspath))
        folder = path.parent.name if path.parent.parent.name == "tests" else ""
        fixtures = set(getattr(item, "fixturenames", ()))
        if fixtures & _E2E_FIXTURES or folder in _E2E_FOLDERS or path.stem.endswith("_e2e"):
            item.add_marker(pytest.mark.e2e)
