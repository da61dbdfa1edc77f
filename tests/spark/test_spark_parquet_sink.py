"""The spark-parquet sink connector, run by the standalone runtime on the embedded
transport: records land in the Parquet table once, even when the consumer group's commit
is lost.
"""

from __future__ import annotations

import datetime as dt
import decimal
import time
from pathlib import Path
from typing import Any

import pytest
from spark_helpers import create_topic, embedded

from omconnect.converters.json import JsonConverter
from omconnect.data import SchemaBuilder, Struct
from omconnect.data.logical import decimal_schema, timestamp_schema
from omconnect.records import TopicPartition
from omconnect.runtime import StandaloneHerder
from omconnect.transport import Message

pytestmark = pytest.mark.spark

ORDER = (SchemaBuilder.struct().name("order")
         .field("id", SchemaBuilder.int64().build())
         .field("item", SchemaBuilder.string().optional().build())
         .field("price", decimal_schema(2))
         .field("at", timestamp_schema())
         .build())
START = dt.datetime(2024, 5, 1, tzinfo=dt.UTC)


def send_orders(data: Path, numbers: range) -> None:
    converter = JsonConverter()
    converter.configure({}, is_key=False)
    with embedded(data) as transport:
        producer = transport.producer()
        try:
            messages = [Message("orders", f"k{i}".encode(), converter.from_connect(
                "orders", ORDER, Struct(ORDER, {
                    "id": i, "item": f"item-{i}", "price": decimal.Decimal(i) / 100,
                    "at": START + dt.timedelta(seconds=i)})))
                for i in numbers]
            producer.send(messages).result(timeout=60)
        finally:
            producer.close()


def worker(data: Path) -> dict[str, Any]:
    return {"transport": "embedded", "embedded.path": str(data), "key.converter": "string",
            "value.converter": "json", "offset.flush.interval.ms": "500",
            "embedded.session.timeout.ms": "3000", "embedded.heartbeat.interval.ms": "300"}


def wait_for_rows(spark, out: Path, rows: int, timeout: float = 240) -> Any:
    deadline = time.monotonic() + timeout
    seen = 0
    while time.monotonic() < deadline:
        if out.exists():
            try:
                seen = spark.read.parquet(str(out)).count()
            except Exception:  # the first flush has not committed yet
                seen = 0
            if seen >= rows:
                return spark.read.parquet(str(out))
        time.sleep(1)
    pytest.fail(f"the table has {seen} rows after {timeout} s, expected {rows}")


def test_records_reach_the_parquet_table_once_even_when_the_group_commit_is_lost(
        spark, tmp_path):
    data, out = tmp_path / "data", tmp_path / "table"
    with embedded(data) as transport:
        create_topic(transport, "orders", 2)
    send_orders(data, range(600))
    connector = {"name": "to-parquet", "connector.class": "spark-parquet", "tasks.max": "1",
                 "topics": "orders", "path": str(out), "flush.max.records": "250"}
    with StandaloneHerder(worker(data)) as herder:
        herder.create_connector(connector)
        table = wait_for_rows(spark, out, 600)
        status = herder.connector_status("to-parquet").to_dict()
    assert status["tasks"][0]["state"] in ("RUNNING", "UNASSIGNED"), status
    assert table.schema["value"].dataType.simpleString() == (
        "struct<id:bigint,item:string,price:decimal(38,2),at:timestamp>")
    rows = table.select("key", "value.*", "topic", "partition", "offset", "offsets").collect()
    assert sorted(r.id for r in rows) == list(range(600))
    first = next(r for r in rows if r.id == 123)
    assert (first.key, first.item, first.price, first.topic) == (
        "k123", "item-123", decimal.Decimal("1.23"), "orders")
    assert first.at.replace(tzinfo=None) == (START + dt.timedelta(seconds=123)).astimezone(
        ).replace(tzinfo=None)
    low, high = (int(x) for x in first.offsets.split("-"))
    assert low <= first.offset <= high

    # The group's commit is lost (reset to the start): the task finds what the table holds
    # and resumes after it, so nothing is written twice.
    with embedded(data) as transport:
        consumer = transport.consumer("connect-to-parquet")
        try:
            consumer.commit({TopicPartition("orders", 0): 0, TopicPartition("orders", 1): 0})
        finally:
            consumer.close()
    send_orders(data, range(600, 800))
    with StandaloneHerder(worker(data)):
        table = wait_for_rows(spark, out, 800)
        time.sleep(3)  # a duplicate would arrive with the next flushes
        table = spark.read.parquet(str(out))
    ids = [r.id for r in table.select("value.id").collect()]
    assert sorted(ids) == list(range(800))
    assert table.select("partition", "offset").distinct().count() == 800
    directories = sorted(p.name for p in (out / "topic=orders" / "partition=0").iterdir())
    assert directories and all(name.startswith("offsets=") for name in directories)


def test_on_the_columnar_path_batches_reach_the_table_once_without_records(spark, tmp_path):
    data, out = tmp_path / "data", tmp_path / "table"
    with embedded(data) as transport:
        create_topic(transport, "events", 2)
        producer = transport.producer()
        try:
            producer.send([Message("events", f"k{i}".encode(), b"\x00\xff" + bytes([i % 256]),
                                   headers=[("n", str(i).encode())])
                           for i in range(500)]).result(timeout=60)
        finally:
            producer.close()
    config = {**worker(data), "value.converter": "bytearray"}
    connector = {"name": "columns", "connector.class": "spark-parquet", "tasks.max": "1",
                 "topics": "events", "path": str(out), "flush.max.records": "200"}
    with StandaloneHerder(config) as herder:
        herder.create_connector(connector)
        table = wait_for_rows(spark, out, 500)
        metrics = next(m for m in herder.metrics() if m.connector == "columns")
    assert metrics.columnar >= 500 and metrics.columnar_fallback == 0
    assert table.schema["key"].dataType.simpleString() == "string"
    assert table.schema["value"].dataType.simpleString() == "binary"
    rows = {r.key: r for r in table.collect()}
    assert sorted(rows) == sorted(f"k{i}" for i in range(500))
    assert bytes(rows["k300"].value) == b"\x00\xff" + bytes([300 % 256])
    assert [(h.key, h.value) for h in rows["k300"].headers] == [("n", "300")]

    # The group's commit is lost: the task resumes after what the table holds.
    with embedded(data) as transport:
        consumer = transport.consumer("connect-columns")
        try:
            consumer.commit({TopicPartition("events", 0): 0, TopicPartition("events", 1): 0})
        finally:
            consumer.close()
        producer = transport.producer()
        try:
            producer.send([Message("events", f"k{i}".encode(), b"v")
                           for i in range(500, 600)]).result(timeout=60)
        finally:
            producer.close()
    with StandaloneHerder(config):  # the stored connector starts again
        wait_for_rows(spark, out, 600)
        time.sleep(3)  # a duplicate would arrive with the next flushes
        table = spark.read.parquet(str(out))
    keys = [r.key for r in table.select("key").collect()]
    assert sorted(keys) == sorted(f"k{i}" for i in range(600))


READING = (SchemaBuilder.struct().name("reading")
           .field("id", SchemaBuilder.int32().build())
           .field("sensor", SchemaBuilder.string().build())
           .field("ok", SchemaBuilder.boolean().optional().build())
           .field("value", SchemaBuilder.float64().build())
           .field("at", timestamp_schema())
           .field("place", SchemaBuilder.struct().optional()
                  .field("zone", SchemaBuilder.int8().build()).build())
           .build())


def test_json_structs_go_columnar_with_the_types_records_give(spark, tmp_path):
    """JSON envelopes of a struct schema reach the sink as struct columns (no record
    objects) and the table has the types, and rows, a per-record run writes."""
    data = tmp_path / "data"
    converter = JsonConverter()
    converter.configure({}, is_key=False)
    with embedded(data) as transport:
        producer = transport.producer()
        try:
            producer.send([Message("readings", f"k{i}".encode(), converter.from_connect(
                "readings", READING, Struct(READING, {
                    "id": i, "sensor": f"s-{i % 7}", "ok": None if i % 5 else i % 2 == 0,
                    "value": i / 4, "at": START + dt.timedelta(seconds=i),
                    "place": None if i % 3 else Struct(READING.field("place").schema,
                                                       {"zone": i % 100})})))
                for i in range(300)]).result(timeout=60)
        finally:
            producer.close()
    tables = {}
    for columnar in (True, False):
        out = tmp_path / f"table-{columnar}"
        config = {**worker(data), "columnar.enable": str(columnar).lower()}
        name = f"readings-{str(columnar).lower()}"
        with StandaloneHerder(config) as herder:
            herder.create_connector({"name": name, "connector.class": "spark-parquet",
                                     "tasks.max": "1", "topics": "readings",
                                     "path": str(out), "flush.max.records": "100"})
            tables[columnar] = wait_for_rows(spark, out, 300)
            metrics = next(m for m in herder.metrics() if m.connector == name)
        if columnar:
            assert (metrics.columnar, metrics.columnar_fallback) == (300, 0)
    value_type = tables[True].schema["value"].dataType.simpleString()
    assert value_type == tables[False].schema["value"].dataType.simpleString()
    assert value_type.startswith("struct<id:int,sensor:string,ok:boolean,value:double,")
    assert "place:struct<zone:tinyint>" in value_type

    def rows(table: Any) -> list[Any]:
        return sorted((r.key, r.value.asDict(recursive=True)) for r in table.collect())

    assert rows(tables[True]) == rows(tables[False])
