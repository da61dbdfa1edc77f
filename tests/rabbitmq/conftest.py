"""Fixtures of the RabbitMQ transport tests: a private vhost per test module on the local
server, transports pointing at it, and a port where nothing speaks AMQP.
"""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from rabbitmq_helpers import FAST_GROUPS

pytest.importorskip("pika")

from omconnect_rabbitmq.transport import RabbitMQTransport
from omconnect_testbrokers.rabbitmq import BrokerHandle, ensure_server_running, start_broker


@pytest.fixture(scope="module")
def broker() -> Iterator[BrokerHandle]:
    """A fresh vhost for the module (rabbitmqctl costs ~0.5 s a call: one per module)."""
    ensure_server_running()
    handle = start_broker()
    yield handle
    handle.stop()


@pytest.fixture
def make_transport(broker: BrokerHandle) -> Iterator[Callable[..., RabbitMQTransport]]:
    """Builds transports on the module's vhost; closes them after the test."""
    opened: list[RabbitMQTransport] = []

    def make(**options: Any) -> RabbitMQTransport:
        transport = RabbitMQTransport({"url": broker.url, **FAST_GROUPS, **options})
        opened.append(transport)
        return transport

    yield make
    for transport in opened:
        transport.close()


@pytest.fixture(scope="module")
def silent_port() -> Iterator[int]:
    """A port on 127.0.0.1 that accepts TCP connections but never answers: the AMQP
    handshake hangs there, so only the transport's timeout ends it.
    """
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    yield listener.getsockname()[1]
    listener.close()
