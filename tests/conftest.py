"""Shared test configuration. Fixture plugins of the test doubles are listed here."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

# Tests reach only servers on 127.0.0.1: keep any machine proxy out of the way.
os.environ["NO_PROXY"] = "127.0.0.1,localhost"
os.environ["no_proxy"] = "127.0.0.1,localhost"
# The package index's release dates (`tooling.ci_versions`) are asked only by the tests that
# serve them on 127.0.0.1: elsewhere an unpinned tool keeps the version installed here.
os.environ["CI_AUTOFIX_INDEX_JSON_URL"] = ""

pytest_plugins = ["tests.testing.emulator.fixtures", "tests.testing.fakes.messages_fixtures", "pytester"]


def pytest_xdist_auto_num_workers(config: object) -> int:
    """`-n auto`: two workers per CPU. Most tests wait on a subprocess (git, the tools, our own
    entrypoint) or the emulator, so one per CPU leaves the CPUs half idle (on 2 CPUs: 11 min with
    2 workers, 8.8 min with 4, the whole suite)."""
    return 2 * (os.cpu_count() or 1)


# The lanes. `e2e`: a test that runs something whole: a flow (the GitHub emulator, the Messages fake,
# or our own entrypoint in a subprocess), or real tools it installs (`slow`: packages from PyPI or
# the npm registry, runtimes from the toolchain mirror). The README's test command runs every lane;
# `pytest -m "not e2e"` is the unit loop.
# Every suite under `tests/flows/<flow>/` is end to end, and so are the suites by concern below.
_E2E_FIXTURES = frozenset({"github_emulator", "messages_api"})
_E2E_SUITES = frozenset({"cli", "container", "security"})
_TESTS = Path(__file__).resolve().parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    flows: set[str] = set()  # the tests that run a flow end to end
    for item in items:
        path = Path(str(item.fspath)).resolve()
        parts = path.relative_to(_TESTS).parts if path.is_relative_to(_TESTS) else ()
        suite = parts[0] if len(parts) > 1 else ""
        in_a_flow = suite == "flows" and len(parts) > 2
        fixtures = set(getattr(item, "fixturenames", ()))
        by_place = suite in _E2E_SUITES or in_a_flow or path.stem.endswith("_e2e")
        runs_a_flow = bool(fixtures & _E2E_FIXTURES) or by_place or item.get_closest_marker("e2e") is not None
        if runs_a_flow:
            flows.add(item.nodeid)
        if runs_a_flow or item.get_closest_marker("slow"):
            item.add_marker(pytest.mark.e2e)
    # The long tests first, the short ones last: the workers take the tests in this order, so the
    # short ones fill the gaps at the end instead of a long one starting last and running alone
    # (a stable sort: within a lane, the order of the files). First the slow flows (the loop end to
    # end, the soak), then the other slow tests, the other flows, the rest.
    items.sort(key=lambda item: (item.get_closest_marker("slow") is None, item.nodeid not in flows))
