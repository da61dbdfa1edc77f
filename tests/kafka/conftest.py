"""Fixtures of the Kafka transport tests: Tansu brokers on free ports, stopped at the end.

One memory-storage broker serves the whole session (topics and groups carry unique
names, so tests never see each other's data); a broker with s3 storage is started only
for the cases that restart the broker and need its data to survive.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from kafka_support import DRIVERS, UNREACHABLE_TIMEOUT_MS, kafka_options, unreachable_options  # noqa: F401
from omconnect_testbrokers.kafka import BrokerHandle, start_broker


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
