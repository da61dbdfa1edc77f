"""The conformance suite against the Pulsar transport on pulsar-lite, with each
subscription type. Cases that fail only because of a pulsar-lite defect run as
``xfail(strict=True)`` naming it (``PULSAR_LITE_DEFECTS``), so a fixed defect or a new
failure shows up.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from omconnect_pulsar import PulsarTransport
from omconnect_testbrokers.pulsar import (
    KILLED_CONSUMER_BACKLOG_DEFECT,
    PULSAR_LITE_BATCHING_DEFECTS,
    PULSAR_LITE_DEFECTS,
    BrokerHandle,
    free_port,
    lite_profile_options,
)

from omconnect.testing import TransportFactory, UnreachableBroker
from omconnect.testing.transport import PipelineCases, TransportApiCases
from omconnect.transport import Transport

pytestmark = pytest.mark.pulsar


class _PulsarLite(TransportApiCases):
    subscription_type = "Failover"
    extra: dict[str, Any] = {}

    @pytest.fixture
    def transport_factory(self, broker: BrokerHandle) -> Callable[[], Transport]:
        config = {**lite_profile_options(broker.url),
                  "subscription.type": self.subscription_type, **self.extra}
        return TransportFactory.of(PulsarTransport, config)

    @pytest.fixture
    def broker_control(self, broker: BrokerHandle) -> BrokerHandle:
        return broker

    @pytest.fixture
    def unreachable_broker(self) -> UnreachableBroker:
        config = {"service.url": f"pulsar://127.0.0.1:{free_port()}",
                  "operation.timeout.ms": 3000, "connection.timeout.ms": 1000}
        return UnreachableBroker(factory=TransportFactory.of(PulsarTransport, config),
                                 timeout=3.0)

    @pytest.fixture
    def expected_failures(self) -> dict[str, str]:
        return PULSAR_LITE_DEFECTS


class TestFailover(_PulsarLite):
    """Failover subscriptions (the default): order per key."""


class TestShared(_PulsarLite):
    """Shared subscriptions, with producer batching on (pulsar-lite delivers Shared
    subscriptions correctly with batching, but mishandles batch-index acknowledgements)."""

    subscription_type = "Shared"
    extra = {"batching.enabled": True, "receiver.queue.size": 1000}

    @pytest.fixture
    def expected_failures(self) -> dict[str, str]:
        return PULSAR_LITE_BATCHING_DEFECTS


class TestPulsarPipelines(PipelineCases):
    """The pipeline cases on the transport's defaults (Failover, batching on, a receiver
    queue of 1,000).
    """

    @pytest.fixture
    def transport_factory(self, broker: BrokerHandle) -> Callable[[], Transport]:
        return TransportFactory.of(PulsarTransport, {"service.url": broker.url})

    @pytest.fixture
    def broker_control(self, broker: BrokerHandle) -> BrokerHandle:
        return broker

    @pytest.fixture
    def skip_cases(self) -> dict[str, str]:
        return {"test_a_killed_worker_restarted_loses_nothing_and_stops_cleanly":
                KILLED_CONSUMER_BACKLOG_DEFECT}
