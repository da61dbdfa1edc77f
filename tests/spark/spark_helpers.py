"""Helpers of the Spark adapter tests: filling topics, reading tables back."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from omconnect.transport import Message, TopicSpec
from omconnect.transport.embedded import EmbeddedTransport
from omconnect.transport.spi import Transport


def embedded(path: Path) -> EmbeddedTransport:
    return EmbeddedTransport({"path": str(path)})


def create_topic(transport: Transport, topic: str, partitions: int) -> None:
    admin = transport.admin()
    try:
        admin.create_topics([TopicSpec(topic, partitions)])
    finally:
        admin.close()


def order(i: int) -> bytes:
    return json.dumps({"id": i, "item": f"item-{i}", "qty": i % 7}).encode()


def produce(transport: Transport, topic: str, numbers: Iterable[int], *,
            headers: bool = False) -> None:
    """Send one order per number, keyed ``k<n>``, and wait for the acknowledgements."""
    producer = transport.producer()
    try:
        batch = [Message(topic, f"k{i}".encode(), order(i),
                         ((("n", str(i).encode()), ("even", b"1")) if headers and i % 2 == 0
                          else ()))
                 for i in numbers]
        for start in range(0, len(batch), 2000):
            producer.send(batch[start:start + 2000]).result(timeout=60)
    finally:
        producer.close()


def values_of(rows: Sequence[Any]) -> list[int]:
    """The order ids in rows holding the raw JSON value."""
    return sorted(json.loads(bytes(row.value))["id"] for row in rows)


class NonReplayableEmbeddedTransport(EmbeddedTransport):
    """The embedded transport declaring ``replayable=False``: a stand-in for RabbitMQ's
    classic queues, so the adapter's group mode runs without a broker. Give it as
    ``transport=spark_helpers:NonReplayableEmbeddedTransport``.
    """

    @property
    def capabilities(self):  # type: ignore[no-untyped-def]
        import attrs

        return attrs.evolve(super().capabilities, replayable=False)


NON_REPLAYABLE = "spark_helpers:NonReplayableEmbeddedTransport"
