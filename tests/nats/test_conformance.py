"""The conformance kit against the NATS transport, on a nats-server the tests started:
every transport case (the broker-restart ones restart that server, keeping its store)
and the pipeline cases through ``omconnect standalone`` workers on the transport's
defaults.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from omconnect_nats import NatsTransport
from omconnect_testbrokers.nats import BrokerHandle, profile_options, unreachable_options

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


class TestNatsConformance(TransportApiCases):
    """Every transport case."""

    @pytest.fixture
    def transport_factory(self, broker: BrokerHandle) -> Callable[[], Transport]:
        return TransportFactory.of(NatsTransport, profile_options(broker.url))


class TestNatsPipelines(PipelineCases):
    """The pipeline cases on the transport's defaults (only the server's URL given)."""

    @pytest.fixture
    def transport_factory(self, broker: BrokerHandle) -> Callable[[], Transport]:
        return TransportFactory.of(NatsTransport, {"servers": broker.url})
