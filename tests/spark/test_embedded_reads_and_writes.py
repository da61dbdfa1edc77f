"""Batch and streaming reads and writes through Spark on the embedded transport."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from omconnect_spark import offsets_behind_latest
from spark_helpers import (
    NON_REPLAYABLE,
    create_topic,
    embedded,
    produce,
    values_of,
)

from omconnect.records import TopicPartition
from omconnect.transport import Message

pytestmark = pytest.mark.spark

@pytest.fixture
def data(tmp_path: Path) -> Path:
    return tmp_path / "data"


def reader(spark, data: Path, topics: str = "orders", **options: str):
    return (spark.read.format("omconnect").option("transport", "embedded")
            .option("embedded.path", str(data)).option("topics", topics).options(**options))


def stream(spark, data: Path, topics: str = "orders", **options: str):
    return (spark.readStream.format("omconnect").option("transport", "embedded")
            .option("embedded.path", str(data)).option("topics", topics).options(**options))


def run_available_now(frame, out: Path, checkpoint: Path):
    query = (frame.writeStream.format("parquet").option("path", str(out))
             .option("checkpointLocation", str(checkpoint)).trigger(availableNow=True).start())
    query.awaitTermination(300)
    assert query.exception() is None
    return query


# -- batch reads ----------------------------------------------------------------------------

def test_a_batch_read_yields_every_record_once_with_kafka_columns(spark, data):
    with embedded(data) as transport:
        create_topic(transport, "orders", 2)
        produce(transport, "orders", range(500), headers=True)
    rows = reader(spark, data).load().collect()
    assert values_of(rows) == list(range(500))
    for partition in (0, 1):
        offsets = sorted(r.offset for r in rows if r.partition == partition)
        assert offsets == list(range(len(offsets)))
    by_id = {json.loads(bytes(r.value))["id"]: r for r in rows}
    assert bytes(by_id[42].key) == b"k42" and by_id[42].topic == "orders"
    assert [(h.key, bytes(h.value)) for h in by_id[42].headers] == [("n", b"42"), ("even", b"1")]
    assert by_id[43].headers == []
    assert by_id[7].timestamp is not None


def test_a_batch_read_between_offsets_reads_exactly_that_range(spark, data):
    with embedded(data) as transport:
        create_topic(transport, "orders", 2)
        produce(transport, "orders", range(200))
    frame = reader(spark, data, startingOffsets='{"orders": {"0": 10, "1": -2}}',
                   endingOffsets='{"orders": {"0": 25, "1": 5}}')
    got = sorted((r.partition, r.offset) for r in frame.load().select("partition", "offset")
                 .collect())
    assert got == [(0, o) for o in range(10, 25)] + [(1, o) for o in range(5)]
    split = reader(spark, data, maxRecordsPerPartition="7").load()
    assert split.rdd.getNumPartitions() >= 200 // 7
    assert split.count() == 200


def test_kafka_source_selections_and_time_bounds_read_what_they_say(spark, data):
    with embedded(data) as transport:
        for topic in ("orders-eu", "orders-us", "refunds"):
            create_topic(transport, topic, 2)
        producer = transport.producer()
        producer.send([Message(topic, value=f"{topic}-{i}".encode(), partition=i % 2,
                               timestamp=1_000_000 + i)
                       for topic in ("orders-eu", "orders-us", "refunds")
                       for i in range(100)]).result(30)
        producer.close()

    def read(**options: str):
        return (spark.read.format("omconnect").option("transport", "embedded")
                .option("embedded.path", str(data)).options(**options).load())

    by_pattern = read(subscribePattern="orders-.*", includeHeaders="false")
    assert "headers" not in by_pattern.columns
    assert sorted({r.topic for r in by_pattern.collect()}) == ["orders-eu", "orders-us"]
    assigned = read(assign='{"refunds": [1]}').collect()
    assert {(r.topic, r.partition) for r in assigned} == {("refunds", 1)}
    assert len(assigned) == 50
    between = read(subscribe="orders-eu", startingTimestamp="1000040",
                   endingTimestamp="1000060").collect()
    assert sorted(bytes(r.value).decode() for r in between) == \
        sorted(f"orders-eu-{i}" for i in range(40, 60))
    assert all(1_000_040 <= r.timestamp.timestamp() * 1000 < 1_000_060 for r in between)
    with pytest.raises(Exception, match="'ordres-eu' does not exist"):
        read(subscribe="ordres-eu").collect()


def test_values_and_keys_decode_into_typed_columns(spark, data):
    with embedded(data) as transport:
        create_topic(transport, "orders", 1)
        produce(transport, "orders", range(50))
    frame = reader(spark, data, **{
        "key.converter": "string", "value.converter": "json",
        "value.converter.schemas.enable": "false",
        "value.schema": "id BIGINT, item STRING, qty INT"}).load()
    assert frame.schema["value"].dataType.simpleString() == "struct<id:bigint,item:string,qty:int>"
    rows = frame.where("value.qty = 3").select("key", "value.*").orderBy("id").collect()
    assert [(r.key, r.id, r.item) for r in rows] == [
        (f"k{i}", i, f"item-{i}") for i in range(50) if i % 7 == 3]


def test_a_batch_read_of_a_non_replayable_transport_is_refused(spark, data):
    with embedded(data) as transport:
        create_topic(transport, "orders", 1)
    frame = (spark.read.format("omconnect").option("transport", NON_REPLAYABLE)
             .option(f"{NON_REPLAYABLE}.path", str(data)).option("topics", "orders").load())
    with pytest.raises(Exception, match="cannot replay"):
        frame.collect()


# -- bad options ----------------------------------------------------------------------------

@pytest.mark.parametrize(("options", "option", "hint"), [
    ({"transport": "kafak", "topics": "orders"}, "transport", "did you mean 'kafka'"),
    ({"topics": "orders", "startingOffsets": "{orders: 1}"}, "startingOffsets",
     "neither earliest, latest nor valid JSON"),
    ({"startingOffsets": "earliest"}, "subscribe", "give exactly one of subscribe"),
    ({"topics": "orders", "startingOffset": "earliest"}, "startingoffset",
     "did you mean startingOffsets"),
])
def test_bad_options_fail_at_load_before_any_query_starts(spark, data, tmp_path, options,
                                                          option, hint):
    frame = spark.readStream.format("omconnect").option("embedded.path", str(data))
    with pytest.raises(Exception) as caught:
        frame.options(**options).load()
    message = str(caught.value)
    assert f"{option}:" in message and hint in message
    assert not spark.streams.active


def test_ending_offsets_in_a_stream_fail_the_query_naming_the_option(spark, data, tmp_path):
    with embedded(data) as transport:
        create_topic(transport, "orders", 1)
    frame = stream(spark, data, endingOffsets="latest").load()
    query = (frame.writeStream.format("noop").option("checkpointLocation", str(tmp_path / "c"))
             .trigger(availableNow=True).start())
    with pytest.raises(Exception, match="endingOffsets, endingTimestamp and "
                       "endingOffsetsByTimestamp apply to batch reads only"):
        query.awaitTermination(120)


# -- streaming reads ------------------------------------------------------------------------

def test_a_stream_reads_in_limited_batches_and_resumes_from_its_checkpoint(spark, data, tmp_path):
    with embedded(data) as transport:
        create_topic(transport, "orders", 2)
        produce(transport, "orders", range(1000))
    frame = stream(spark, data, startingOffsets="earliest", maxRecordsPerTrigger="300").load()
    out, checkpoint = tmp_path / "out", tmp_path / "checkpoint"
    query = run_available_now(frame, out, checkpoint)
    sizes = [p["numInputRows"] for p in query.recentProgress if p["numInputRows"]]
    assert sizes == [300, 300, 300, 100]
    first = next(p for p in query.recentProgress if p["numInputRows"])
    lag = offsets_behind_latest(first)  # per-partition offsets in the progress
    assert lag["avgOffsetsBehindLatest"] * 2 == 700 and lag["maxOffsetsBehindLatest"] >= 350
    with embedded(data) as transport:
        produce(transport, "orders", range(1000, 1250))
    run_available_now(frame, out, checkpoint)
    assert values_of(spark.read.parquet(str(out)).collect()) == list(range(1250))


def test_a_new_stream_starts_at_the_latest_offsets_by_default(spark, data, tmp_path):
    with embedded(data) as transport:
        create_topic(transport, "orders", 2)
        produce(transport, "orders", range(100))
    frame = stream(spark, data).load()
    out, checkpoint = tmp_path / "out", tmp_path / "checkpoint"
    run_available_now(frame, out, checkpoint)  # fixes the start at the ends as they are
    with embedded(data) as transport:
        produce(transport, "orders", range(100, 130))
    run_available_now(frame, out, checkpoint)
    assert values_of(spark.read.parquet(str(out)).collect()) == list(range(100, 130))


def test_twenty_concurrent_streaming_queries_each_read_everything(spark, data, tmp_path):
    # Twenty queries on one source run side by side and read what is produced while they
    # all run. They are started one after another, each once its first batch ran: Spark
    # 4.3 gives the Python worker of a new streaming query a fixed 10 s to connect back,
    # which several workers starting at once on 2 busy cores exceed (docs/spark.md).
    with embedded(data) as transport:
        create_topic(transport, "orders", 2)
        produce(transport, "orders", range(300))
    frame = stream(spark, data, startingOffsets="earliest").load()
    queries: list = []

    def rows(number: int) -> list[int]:
        from pyspark.errors import AnalysisException

        try:  # files appear before the sink's log lists them
            return values_of(spark.read.parquet(str(tmp_path / f"o{number}")).collect())
        except AnalysisException:
            return []

    def wait_for(number: int, expected: list[int]) -> None:
        query, deadline = queries[number], time.monotonic() + 300
        while query.exception() is None and time.monotonic() < deadline and \
                rows(number) != expected:
            time.sleep(0.5)
        assert query.exception() is None, query.exception()
        assert rows(number) == expected, f"query {number}"

    try:
        for number in range(20):
            queries.append(
                frame.writeStream.format("parquet").option("path", str(tmp_path / f"o{number}"))
                .option("checkpointLocation", str(tmp_path / f"c{number}"))
                .trigger(processingTime="2 seconds").start())
            wait_for(number, list(range(300)))
        assert all(query.isActive for query in queries)
        with embedded(data) as transport:
            produce(transport, "orders", range(300, 600))
        for number in range(20):
            wait_for(number, list(range(600)))
    finally:
        for query in queries:
            query.stop()


def test_a_non_replayable_transport_streams_at_least_once_committing_on_spark_commit(
        spark, data, tmp_path):
    with embedded(data) as transport:
        create_topic(transport, "orders", 2)
        produce(transport, "orders", range(400))
    frame = (spark.readStream.format("omconnect").option("transport", NON_REPLAYABLE)
             .option(f"{NON_REPLAYABLE}.path", str(data)).option("topics", "orders")
             .option("groupId", "spark-group").option("startingOffsets", "earliest")
             .option("maxRecordsPerTrigger", "150").load())
    out = tmp_path / "out"
    query = run_available_now(frame, out, tmp_path / "checkpoint")
    assert values_of(spark.read.parquet(str(out)).collect()) == list(range(400))
    assert max(p["numInputRows"] for p in query.recentProgress) <= 150
    with embedded(data) as transport:  # every batch, the last one included, was committed
        consumer = transport.consumer("spark-group")
        try:
            committed = consumer.committed([TopicPartition("orders", 0),
                                            TopicPartition("orders", 1)])
            ends = {tp: consumer.offset_range(tp)[1] for tp in committed}
        finally:
            consumer.close()
    assert committed == ends
    with embedded(data) as transport:  # the run left the group: a new run reads at once
        produce(transport, "orders", range(400, 500))
    run_available_now(frame, out, tmp_path / "checkpoint")
    assert values_of(spark.read.parquet(str(out)).collect()) == list(range(500))


# -- writes ---------------------------------------------------------------------------------

def test_a_batch_write_round_trips_keys_values_headers_and_partitions(spark, data):
    with embedded(data) as transport:
        create_topic(transport, "copy", 3)
    rows = [(f"k{i}".encode(), f"value {i}", [("source", b"test"), ("i", str(i).encode())],
             i % 3) for i in range(300)]
    frame = spark.createDataFrame(
        rows, "key BINARY, value STRING, headers ARRAY<STRUCT<key: STRING, value: BINARY>>, "
              "partition INT")
    frame.write.format("omconnect").option("embedded.path", str(data)).option(
        "topic", "copy").mode("append").save()
    back = reader(spark, data, "copy", **{"value.converter": "string"}).load().collect()
    assert sorted((bytes(r.key), r.value, r.partition) for r in back) == sorted(
        (k, v, p) for k, v, _, p in rows)
    assert all((r.headers[0].key, bytes(r.headers[0].value)) == ("source", b"test")
               for r in back)


def test_a_write_of_unknown_columns_fails_before_any_task_naming_the_column(spark, data):
    frame = spark.createDataFrame([(b"v", 1)], "value BINARY, extra INT")
    with pytest.raises(Exception, match="also has \\['extra'\\]"):
        frame.write.format("omconnect").option("embedded.path", str(data)).option(
            "topic", "x").mode("append").save()
    with pytest.raises(Exception, match="no topic"):
        frame.select("value").write.format("omconnect").option(
            "embedded.path", str(data)).mode("append").save()


def _uncommit_last_batch(checkpoint: Path) -> int:
    """Delete the last commit-log entry: the restarted query runs that batch again, as
    after a crash between the sink's commit and Spark's commit log.
    """
    commits = sorted((p for p in (checkpoint / "commits").iterdir() if p.name.isdigit()),
                     key=lambda p: int(p.name))
    commits[-1].unlink()
    (checkpoint / "commits" / f".{commits[-1].name}.crc").unlink(missing_ok=True)
    return int(commits[-1].name)


@pytest.mark.parametrize("idempotent", [True, False])
def test_a_replayed_stream_batch_is_written_once_with_idempotent_writes(
        spark, data, tmp_path, idempotent):
    with embedded(data) as transport:
        create_topic(transport, "orders", 2)
        create_topic(transport, "copy", 2)
        produce(transport, "orders", range(600))
    checkpoint = tmp_path / "checkpoint"

    def copy() -> None:
        frame = stream(spark, data, startingOffsets="earliest",
                       maxRecordsPerTrigger="200").load().select("key", "value")
        query = (frame.writeStream.format("omconnect").option("embedded.path", str(data))
                 .option("topic", "copy").option("idempotentWrites", str(idempotent).lower())
                 .option("checkpointLocation", str(checkpoint))
                 .trigger(availableNow=True).start())
        query.awaitTermination(300)
        assert query.exception() is None

    copy()
    replayed = _uncommit_last_batch(checkpoint)
    copy()  # runs the last batch (200 records) again
    assert replayed == 2
    ids = values_of(reader(spark, data, "copy").load().collect())
    if idempotent:
        assert ids == list(range(600))
    else:  # the replay is written again: at-least-once
        assert len(ids) == 800 and sorted(set(ids)) == list(range(600))
