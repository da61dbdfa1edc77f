"""The conformance kit against the Redis transport on a redis-server of the tests' own
(with an append-only file, so the persistence and broker-restart cases run), pipeline
cases included.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from omconnect_redis import RedisTransport
from omconnect_testbrokers.redis import BrokerHandle, server_options

from omconnect.testing import TransportFactory, UnreachableBroker
from omconnect.testing.processes import free_port
from omconnect.testing.transport import PipelineCases, TransportApiCases
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
