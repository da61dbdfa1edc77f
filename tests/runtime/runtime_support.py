"""Helpers shared by the tests in tests/runtime/ (a uniquely named module, so that test modules
import them by name without clashing with other directories' conftest modules)."""

from __future__ import annotations

from typing import Any

from omconnect.testing.waiting import eventually  # noqa: F401  (the tests import it from here)
from omconnect.transport.memory import MemoryTransport

SOURCE_CLASSES = {"records": "runtime_connectors:CountingSource",
                  "columns": "runtime_connectors:CountingBatchSource"}
"""The test source of each path: ``poll`` per record, or ``poll_batch`` (columnar)."""

source_path = "records"
"""Which of :data:`SOURCE_CLASSES` :func:`source_config` names (set by conftest.py)."""


def source_config(name: str = "counting", **extra: Any) -> dict[str, Any]:
    config = {"name": name, "connector.class": SOURCE_CLASSES[source_path],
              "topic": f"{name}-out"}
    config.update({k.replace("_", "."): v for k, v in extra.items()})
    return config


SINK_CLASSES = {"records": "runtime_connectors:ListSink",
                "columns": "runtime_connectors:ListBatchSink"}
"""The test sink of each path: ``put`` per record, or ``put_batch`` (the columnar path)."""

sink_path = "records"
"""Which of :data:`SINK_CLASSES` :func:`sink_config` names (set by the ``sink_path``
fixture of conftest.py, which runs every test on both).
"""


def sink_config(name: str = "listing", topics: str = "in", **extra: Any) -> dict[str, Any]:
    config = {"name": name, "connector.class": SINK_CLASSES[sink_path],
              "topics": topics}
    config.update({k.replace("_", "."): v for k, v in extra.items()})
    return config


def read_topic(transport_config: dict[str, Any], topic: str) -> list[Any]:
    """Every message of ``topic`` (all partitions), read with a lone consumer."""
    from omconnect.records import TopicPartition

    transport = MemoryTransport({"namespace": transport_config.get(
        "memory.namespace") or transport_config["gated.namespace"]})
    admin = transport.admin()
    topics = admin.list_topics()
    if topic not in topics:
        return []
    consumer = transport.consumer()
    partitions = [TopicPartition(topic, p) for p in range(topics[topic].partitions)]
    consumer.assign(partitions)
    for tp in partitions:
        consumer.seek(tp, 0)
    out: list[Any] = []
    while True:
        batch = consumer.poll(10_000, 0.05)
        if not batch:
            break
        out.extend(batch)
    consumer.close()
    return out
