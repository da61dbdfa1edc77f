"""Fixtures of the Redis transport tests: one ``redis-server`` with an append-only file
per session, on a free port (never the machine's server on 6379), stopped after.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("redis", reason="needs redis-py (omconnect[redis])")

from omconnect_redis import RedisTransport
from omconnect_testbrokers.redis import BrokerHandle, server_options, start_broker


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerHandle]:
    """A redis-server with an append-only file (persistent)."""
    handle = start_broker(tmp_path_factory.mktemp("redis"))
    try:
        yield handle
    finally:
        handle.stop()


@pytest.fixture
def make_transport(server: BrokerHandle) -> Iterator[Any]:
    """Builds transports on the session server with the test options."""
    opened: list[RedisTransport] = []

    def make(url: str | None = None, **options: Any) -> RedisTransport:
        transport = RedisTransport({**server_options(url or server.url), **options})
        opened.append(transport)
        return transport

    yield make
    for transport in opened:
        transport.close()
