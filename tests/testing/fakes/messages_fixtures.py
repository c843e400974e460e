"""Pytest fixtures for the Messages API fake: a running fake and an SDK client pointed at it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from ci_autofix.agent.llm import LLM, build_client
from ci_autofix.settings import Settings
from tests.testing.fakes.messages import FakeMessagesAPI

TEST_KEY = "sk-ant-api03-TESTKEYfake0123456789abcdefXYZ"


@pytest.fixture
def messages_api() -> Iterator[FakeMessagesAPI]:
    with FakeMessagesAPI() as fake:
        yield fake


def make_llm(fake: FakeMessagesAPI, *, max_retries: int = 3, **settings: Any) -> LLM:
    """The real client, built by our own `build_client`, strict about responses, aimed at the fake."""
    configured = Settings(anthropic_api_key=TEST_KEY, **settings)
    return build_client(configured, base_url=fake.url, max_retries=max_retries, timeout=30, strict=True)


@pytest.fixture
def llm(messages_api: FakeMessagesAPI) -> LLM:
    return make_llm(messages_api)
