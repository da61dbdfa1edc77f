"""Fixtures of the Pulsar transport tests: one pulsar-lite broker per session (plus a
partitioned one for the tests that need it), started on free ports and stopped after.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("pulsar", reason="needs pulsar-client (omconnect[pulsar])")

from omconnect_pulsar import PulsarTransport
from omconnect_testbrokers.pulsar import (
    BrokerHandle,
    lite_profile_options,
    start_broker,
)

PARTITIONS = 3
"""Partitions of auto-created topics on the partitioned broker (tests repeat it)."""


@pytest.fixture(scope="session")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerHandle]:
    """A pulsar-lite broker with non-partitioned topics (its default)."""
    handle = start_broker(tmp_path_factory.mktemp("pulsar-lite"))
    try:
        yield handle
    finally:
        handle.stop()


@pytest.fixture(scope="session")
def partitioned_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerHandle]:
    """A pulsar-lite broker whose auto-created topics have ``PARTITIONS`` partitions."""
    handle = start_broker(tmp_path_factory.mktemp("pulsar-lite-partitioned"),
                          default_partitions=PARTITIONS)
    try:
        yield handle
    finally:
        handle.stop()


@pytest.fixture
def make_transport(broker: BrokerHandle) -> Iterator[Any]:
    """Builds transports on the session broker with the pulsar-lite test profile."""
    opened: list[PulsarTransport] = []

    def make(url: str | None = None, **options: Any) -> PulsarTransport:
        config = {**lite_profile_options(url or broker.url), **options}
        transport = PulsarTransport(config)
        opened.append(transport)
        return transport

    yield make
    for transport in opened:
        transport.close()
