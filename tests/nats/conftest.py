"""Fixtures of the NATS transport tests: one nats-server with JetStream per session,
started on a free port with a store directory of its own (never the machine's server on
4222), stopped after.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("nats", reason="needs nats-py (omconnect[nats])")

from omconnect_nats import NatsTransport
from omconnect_testbrokers.nats import BrokerHandle, profile_options, start_broker


@pytest.fixture(scope="session")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerHandle]:
    """A nats-server with JetStream (file storage in a temporary directory)."""
    handle = start_broker(tmp_path_factory.mktemp("nats-server"))
    try:
        yield handle
    finally:
        handle.stop()


@pytest.fixture
def make_transport(broker: BrokerHandle) -> Iterator[Any]:
    """Builds transports on the session's server with the test profile's options."""
    opened: list[NatsTransport] = []

    def make(**options: Any) -> NatsTransport:
        transport = NatsTransport({**profile_options(broker.url), **options})
        opened.append(transport)
        return transport

    yield make
    for transport in opened:
        transport.close()
