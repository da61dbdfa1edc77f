"""The conformance kit against the Redis transport on a redis-server of the tests' own
(with an append-only file, so the persistence and broker-restart cases run), pipeline
cases included; and the delivery and key/value cases on a server without persistence,
where the transport declares ``persistent`` false and the kit skips what needs it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from omconnect_redis import RedisTransport
from omconnect_testbrokers.redis import BrokerHandle, server_options, start_broker

from omconnect.testing import TransportFactory, UnreachableBroker
from omconnect.testing.processes import free_port
from omconnect.testing.transport import (
    DeliveryCases,
    KeyValueCases,
    PipelineCases,
    TransportApiCases,
)
from omconnect.transport import Transport

pytestmark = pytest.mark.redis


class TestRedis(TransportApiCases):
    """Every case of the transport API."""

    @pytest.fixture
    def transport_factory(self, server: BrokerHandle) -> Callable[[], Transport]:
        return TransportFactory.of(RedisTransport, server_options(server.url))

    @pytest.fixture
    def broker_control(self, server: BrokerHandle) -> BrokerHandle:
        return server

    @pytest.fixture
    def unreachable_broker(self) -> UnreachableBroker:
        config = {"url": f"redis://127.0.0.1:{free_port()}/0", "operation.timeout.ms": 3000,
                  "connection.timeout.ms": 1000}
        return UnreachableBroker(factory=TransportFactory.of(RedisTransport, config),
                                 timeout=3.0)


class TestRedisPipelines(PipelineCases):
    """The pipeline cases through ``omconnect standalone`` workers, on the transport's
    defaults (but its URL).
    """

    @pytest.fixture
    def transport_factory(self, server: BrokerHandle) -> Callable[[], Transport]:
        return TransportFactory.of(RedisTransport, {"url": server.url})

    @pytest.fixture
    def broker_control(self, server: BrokerHandle) -> BrokerHandle:
        return server


@pytest.fixture(scope="module")
def volatile_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerHandle]:
    """A redis-server that keeps nothing on disk (as the machine's own)."""
    handle = start_broker(Path(tmp_path_factory.mktemp("redis-volatile")), appendonly=False)
    try:
        yield handle
    finally:
        handle.stop()


class TestRedisWithoutPersistence(DeliveryCases, KeyValueCases):
    """Commits, redelivery, replay and the key/value store on a server without an
    append-only file: the cases that need ``persistent`` are skipped, naming it.
    """

    @pytest.fixture
    def transport_factory(self, volatile_server: BrokerHandle) -> Callable[[], Transport]:
        return TransportFactory.of(RedisTransport, server_options(volatile_server.url))
