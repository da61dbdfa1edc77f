"""Fixtures of the cluster tests: the settings that put workers on each transport.

Each transport's cluster tests live in a module of their own with its broker marker, so
``tox -e kafka`` / ``-e rabbitmq`` run them and the default unit run has the embedded
ones only.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

GROUP_TIMEOUTS = {"embedded": {"embedded.session.timeout.ms": 3000,
                               "embedded.heartbeat.interval.ms": 300},
                  "kafka": {"kafka.consumer.session.timeout.ms": 3000,
                            "kafka.consumer.heartbeat.interval.ms": 500},
                  "rabbitmq": {"rabbitmq.session.timeout.ms": 3000,
                               "rabbitmq.heartbeat.interval.ms": 300}}
"""Group timeouts of the cluster tests (session 3 s) per transport."""


@pytest.fixture(scope="module")
def embedded_settings(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """Worker settings of an embedded cluster: one data directory, several processes."""
    data: Path = tmp_path_factory.mktemp("embedded-data")
    return {"transport": "embedded", "embedded.path": str(data),
            **GROUP_TIMEOUTS["embedded"]}


@pytest.fixture(scope="module")
def kafka_settings(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, object]]:
    """Worker settings of a cluster on a Tansu broker of the module's own."""
    pytest.importorskip("omconnect_kafka")
    from omconnect_testbrokers.kafka import start_broker

    broker = start_broker(tmp_path_factory.mktemp("tansu"))
    try:
        yield {"transport": "kafka", "kafka.bootstrap.servers": broker.url,
               **GROUP_TIMEOUTS["kafka"]}
    finally:
        broker.stop()


@pytest.fixture(scope="module")
def rabbitmq_settings() -> Iterator[dict[str, object]]:
    """Worker settings of a cluster on a fresh vhost of the local RabbitMQ server."""
    pytest.importorskip("pika")
    from omconnect_testbrokers.rabbitmq import ensure_server_running, start_broker

    ensure_server_running()
    broker = start_broker()
    try:
        yield {"transport": "rabbitmq", "rabbitmq.url": broker.url,
               **GROUP_TIMEOUTS["rabbitmq"]}
    finally:
        broker.stop()
