"""Tests of the built image, run like GitHub's runner runs it. They need an image and podman:
`ci/container/check` builds one and runs them with `CI_AUTOFIX_IMAGE` set; without it they skip."""

from __future__ import annotations

import os

import pytest

from tests.container.container_harness import engine_available


@pytest.fixture(scope="session")
def image() -> str:
    name = os.environ.get("CI_AUTOFIX_IMAGE", "")
    if not name:
        pytest.skip("no image under test: run ci/container/check (it builds one and sets CI_AUTOFIX_IMAGE)")
    if not engine_available():
        pytest.fail(f"CI_AUTOFIX_IMAGE={name} is set but podman or ci/container/run-like-runner is missing")
    if os.geteuid() != 0:
        pytest.fail("the container tests run as root (rootful podman, a workspace owned by uid 1001)")
    return name
