"""Fixtures of the Kafka transport tests: Tansu brokers on free ports, stopped at the end.

One memory-storage broker serves the whole session (topics and groups carry unique
names, so tests never see each other's data); a broker with s3 storage is started only
for the cases that restart the broker and need its data to survive.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from omconnect_kafka.testing import TEST_CLIENT_OPTIONS, BrokerHandle, free_port, start_broker

DRIVERS = ("kafka-python", "confluent")
UNREACHABLE_TIMEOUT_MS = 2000


def kafka_options(url: str, driver: str, **overrides: Any) -> dict[str, Any]:
    """Transport options for the test broker at ``url`` with ``driver``."""
    return {"bootstrap.servers": url, "client.driver": driver, **TEST_CLIENT_OPTIONS,
            **overrides}


def unreachable_options(driver: str) -> dict[str, Any]:
    """Options pointing at a port nothing listens on, with 2-second timeouts."""
    return kafka_options(f"127.0.0.1:{free_port()}", driver, **{
        "connect.timeout.ms": UNREACHABLE_TIMEOUT_MS,
        "request.timeout.ms": UNREACHABLE_TIMEOUT_MS})


@pytest.fixture(scope="session")
def tansu(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerHandle]:
    """A Tansu broker with memory storage for the whole session."""
    broker = start_broker(tmp_path_factory.mktemp("tansu"))
    try:
        yield broker
    finally:
        broker.stop()


@pytest.fixture(scope="session")
def tansu_s3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrokerHandle]:
    """A Tansu broker whose data survives ``restart()`` (s3 storage on a local moto)."""
    broker = start_broker(tmp_path_factory.mktemp("tansu-s3"), storage="s3")
    try:
        yield broker
    finally:
        broker.stop()
