"""Fixtures for the judge tests: the stand-in server and a fake key in the environment."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from .episodes import FAKE_KEY, smart_answer
from .stub_server import StubServer


@pytest.fixture
def stub() -> Iterator[Callable[..., StubServer]]:
    """Factory: ``stub(latency=..., fault=..., answer=...)`` -> a started server."""
    servers: list[StubServer] = []

    def make(**kwargs: Any) -> StubServer:
        kwargs.setdefault("answer", smart_answer)
        server = StubServer(**kwargs).start()
        servers.append(server)
        return server

    yield make
    for server in servers:
        server.stop()


@pytest.fixture
def fake_key(monkeypatch: pytest.MonkeyPatch) -> str:
    """An API key in the environment, as a user would set it."""
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    return FAKE_KEY
