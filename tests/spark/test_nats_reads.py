"""Spark reads a NATS topic: the transport is replayable (offsets are stream sequences),
so a batch read plans exact ranges per partition and reads each record once; gaps that a
deleted message leaves are stepped over. Marked ``spark`` and ``nats``: the spark
environment runs it, on a nats-server it starts.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from spark_helpers import create_topic, produce, values_of

pytestmark = [pytest.mark.spark, pytest.mark.nats]

pytest.importorskip("nats", reason="needs nats-py (omconnect[nats])")


@pytest.fixture(scope="module")
def nats_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from omconnect_testbrokers.nats import start_broker

    broker = start_broker(tmp_path_factory.mktemp("nats-server"))
    yield broker
    broker.stop()


def test_a_batch_read_of_a_nats_topic_reads_its_ranges_exactly(spark: Any, nats_server: Any,
                                                               tmp_path: Path) -> None:
    from omconnect_nats import NatsTransport

    topic = f"spark-{uuid.uuid4().hex[:8]}"
    transport = NatsTransport({"servers": nats_server.url})
    try:
        create_topic(transport, topic, 2)
        produce(transport, topic, range(300))
    finally:
        transport.close()
    frame = (spark.read.format("omconnect")
             .options(**{"transport": "nats", "nats.servers": nats_server.url})
             .option("topics", topic).option("readTimeoutMs", "30000").load())
    rows = frame.collect()
    assert values_of(rows) == list(range(300))
    assert len({(r.partition, r.offset) for r in rows}) == 300
    assert {r.partition for r in rows} == {0, 1}
