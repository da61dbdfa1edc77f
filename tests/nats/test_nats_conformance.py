"""The conformance kit against the NATS transport, on a nats-server the tests started:
every transport case (the broker-restart ones restart that server, keeping its store)
and the pipeline cases through ``omconnect standalone`` workers on the transport's
defaults.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from omconnect_nats import NatsTransport
from omconnect_testbrokers.nats import (
    BrokerHandle,
    profile_options,
    start_broker,
    unreachable_options,
)

from omconnect.testing import TransportFactory, UnreachableBroker
from omconnect.testing.transport import PipelineCases, TransportApiCases
from omconnect.transport import Transport

pytestmark = pytest.mark.nats


@pytest.fixture
def broker_control(broker: BrokerHandle) -> BrokerHandle:
    return broker


@pytest.fixture
def unreachable_broker() -> UnreachableBroker:
    return UnreachableBroker(factory=TransportFactory.of(NatsTransport, unreachable_options()),
                             timeout=3.0)


@pytest.fixture(scope="module")
def pipeline_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerHandle]:
    """A server for the pipeline cases alone (see :class:`TestNatsPipelines`)."""
    handle = start_broker(tmp_path_factory.mktemp("nats-server-pipelines"))
    try:
        yield handle
    finally:
        handle.stop()


class TestNatsConformance(TransportApiCases):
    """Every transport case."""

    @pytest.fixture
    def transport_factory(self, broker: BrokerHandle) -> Callable[[], Transport]:
        return TransportFactory.of(NatsTransport, profile_options(broker.url))


class TestNatsPipelines(PipelineCases):
    """The pipeline cases on the transport's defaults (only the server's URL given), on a
    server of their own: a restart restores every stream the server holds, so the
    broker-restart case should not wait for the other cases' streams.
    """

    @pytest.fixture
    def broker_control(self, pipeline_broker: BrokerHandle) -> BrokerHandle:
        return pipeline_broker

    @pytest.fixture
    def transport_factory(self, pipeline_broker: BrokerHandle) -> Callable[[], Transport]:
        return TransportFactory.of(NatsTransport, {"servers": pipeline_broker.url})
