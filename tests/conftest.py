"""Shared test configuration. Fixture plugins of the test doubles are listed here."""

from __future__ import annotations

import os

# Tests reach only servers on 127.0.0.1: keep any machine proxy out of the way.
os.environ["NO_PROXY"] = "127.0.0.1,localhost"
os.environ["no_proxy"] = "127.0.0.1,localhost"

pytest_plugins = ["emulator.fixtures", "fakes.messages_fixtures"]
