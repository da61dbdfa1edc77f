"""Options, offsets planning and Arrow batches of the Spark adapter, without a JVM."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("pyspark", reason="the spark extra is not installed")

from omconnect_spark.columns import RecordBatchBuilder, arrow_schema_of
from omconnect_spark.offsets import (
    limit_offsets,
    offsets_from_json,
    offsets_to_json,
    plan_ranges,
)
from omconnect_spark.options import EARLIEST, ReadOptions, WriteOptions
from pyspark.sql.datasource import CaseInsensitiveDict
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from omconnect.errors import ConfigError, DataError
from omconnect.records import TopicPartition
from omconnect.transport import Message

pytestmark = pytest.mark.spark

TP0, TP1 = TopicPartition("orders", 0), TopicPartition("orders", 1)


def spark_options(**values: str) -> CaseInsensitiveDict:
    """Options as Spark hands them to a data source (keys stored lower case)."""
    return CaseInsensitiveDict(values)


def error_of(**values: str) -> ConfigError:
    with pytest.raises(ConfigError) as caught:
        ReadOptions.parse(spark_options(**values))
    return caught.value


# -- options -------------------------------------------------------------------------------

def test_options_come_from_spark_lower_cased_and_keep_their_meaning(tmp_path):
    options = ReadOptions.parse(spark_options(**{
        "transport": "embedded", "Embedded.Path": str(tmp_path), "TOPICS": "orders,returns",
        "startingOffsets": '{"orders": {"0": 5, "1": -2}}', "maxRecordsPerTrigger": "100",
        "failOnDataLoss": "false", "embedded.busy.timeout.ms": "1234"}))
    assert options.topics == ("orders", "returns")
    assert options.transport.name == "embedded"
    assert options.transport.options == {"path": str(tmp_path), "busy.timeout.ms": "1234"}
    assert options.starting is not None and options.starting.wanted(TP0) == 5
    assert options.starting.wanted(TP1) == EARLIEST
    assert options.starting.wanted(TopicPartition("orders", 7)) == EARLIEST
    assert options.max_records_per_trigger == 100
    assert options.fail_on_data_loss is False
    assert options.group_id == "omconnect-spark-orders-returns"


def test_transport_option_spelling_is_restored_from_the_transport_definition():
    from omconnect_spark import options as module

    from omconnect.config import ConfigDef, ConfigType

    class Camel:
        config_def = ConfigDef().define("clientId", ConfigType.STRING, "x")

    original = module._transport_class
    module._transport_class = lambda name: Camel  # type: ignore[assignment,return-value]
    try:
        _, settings, _ = module._split(spark_options(**{
            "transport": "embedded", "embedded.CLIENTID": "abc",
            "embedded.consumer.Some_Native": "1"}), module.READ_CONFIG_DEF)
    finally:
        module._transport_class = original
    assert settings.options == {"clientId": "abc", "consumer.some_native": "1"}


@pytest.mark.parametrize(("values", "option", "says"), [
    ({"transport": "kafak", "topics": "orders"}, "transport", "did you mean 'kafka'"),
    ({"topics": "orders", "startingOffsets": "{not json"}, "startingOffsets",
     "neither earliest, latest nor valid JSON"),
    ({"topics": "orders", "startingOffsets": '{"orders": [1, 2]}'}, "startingOffsets",
     "must map partition numbers to offsets"),
    ({"topics": "orders", "startingOffsets": '{"orders": {"x": 1}}'}, "startingOffsets",
     "is not a partition number"),
    ({"topics": "orders", "startingOffsets": '{"orders": {"0": -3}}'}, "startingOffsets",
     "-2 (earliest) or -1 (latest)"),
    ({"topics": "orders", "startingOffsets": '{"refunds": {"0": 1}}'}, "startingOffsets",
     "not among the topics read"),
    ({}, "subscribe", "give exactly one of subscribe (or topics), subscribePattern and "
     "assign; none is given"),
    ({"subscribe": "a", "subscribePattern": "b.*"}, "subscribe", "subscribe, subscribePattern "
     "are given"),
    ({"subscribe": "a", "topics": "a"}, "topics", "the same option"),
    ({"subscribePattern": "orders("}, "subscribePattern", "not a regular expression"),
    ({"assign": '{"orders": "0"}'}, "assign", "list of partition numbers"),
    ({"topics": "orders", "startingOffsetsByTimestamp": '{"orders": {"0": -5}}'},
     "startingOffsetsByTimestamp", "a timestamp >= 0"),
    ({"topics": "orders", "maxTriggerDelay": "soon"}, "maxTriggerDelay", "not a duration"),
    ({"topics": "orders", "fetchOffset.numRetries": "3"}, "fetchoffset.numretries",
     "retried for retryTimeoutMs"),
    ({"topics": "orders", "kafka.bootstrap.servers": "b:9092"}, "kafka.bootstrap.servers",
     "also set transport=kafka"),
    ({"topics": "orders", "noSuchOption": "1"}, "nosuchoption",
     "unknown option of the omconnect source"),
    ({"topics": " , "}, "topics", "no topic given"),
    ({"topics": "orders", "maxRecordsPerTrigger": "0"}, "maxRecordsPerTrigger", "at least 1"),
    ({"topics": "orders", "startingOffset": "earliest"}, "startingoffset",
     "did you mean startingOffsets"),
    ({"topics": "orders", "embedded.synchronus": "full"}, "embedded.synchronus",
     "did you mean embedded.synchronous"),
    ({"topics": "orders", "embedded.busy.timeout.ms": "soon"}, "embedded.busy.timeout.ms",
     "expected an integer"),
    ({"topics": "orders", "value.converter": "json"}, "value.schema", "value.schema is needed"),
    ({"topics": "orders", "value.schema": "id INT"}, "value.schema", "needs value.converter"),
    ({"topics": "orders", "value.converter": "string", "value.schema": "id INT"},
     "value.schema", "does not apply"),
    ({"topics": "orders", "value.converter": "jsno"}, "value.converter", "did you mean 'json'"),
])
def test_bad_options_are_refused_naming_the_option(values, option, says):
    error = error_of(**values)
    assert option in error.errors, error.errors
    assert says in " ".join(error.errors[option])
    assert option in str(error)


def test_every_bad_option_is_reported_at_once():
    error = error_of(transport="embedded", startingOffsets="{", maxRecordsPerTrigger="-1")
    assert set(error.errors) == {"subscribe", "maxRecordsPerTrigger"}  # offsets need topics
    error = error_of(topics="orders", startingOffsets="{", maxRecordsPerTrigger="-1")
    assert set(error.errors) == {"startingOffsets", "maxRecordsPerTrigger"}


def test_batch_reads_refuse_offsets_that_read_nothing():
    with pytest.raises(ConfigError, match="startingOffsets latest"):
        ReadOptions.parse(spark_options(topics="orders", startingOffsets="latest")).check_batch()
    with pytest.raises(ConfigError, match="endingOffsets earliest"):
        ReadOptions.parse(spark_options(
            topics="orders", endingOffsets='{"orders": {"0": -2}}')).check_batch()
    ReadOptions.parse(spark_options(topics="orders", endingOffsets='{"orders": {"0": 9}}')
                      ).check_batch()


def test_decodings_give_the_columns_types():
    options = ReadOptions.parse(spark_options(
        topics="orders", **{"key.converter": "string", "value.converter": "json",
                            "value.converter.schemas.enable": "false",
                            "value.schema": "id BIGINT, item STRING"}))
    assert options.spark_schema().startswith(
        "key STRING, value STRUCT<id BIGINT, item STRING>, topic STRING")
    assert options.value.options == {"schemas.enable": "false"}
    raw = ReadOptions.parse(spark_options(topics="orders"))
    assert raw.spark_schema().startswith("key BINARY, value BINARY")


def test_write_options_refuse_converters_and_misspellings():
    with pytest.raises(ConfigError) as caught:
        WriteOptions.parse(spark_options(**{"value.converter": "json", "topik": "x"}))
    assert set(caught.value.errors) == {"value.converter", "topik"}
    options = WriteOptions.parse(spark_options(topic="out", checkpointLocation="/tmp/x"))
    assert options.topic == "out" and options.idempotent_writes


# -- offsets ---------------------------------------------------------------------------------

def test_offsets_round_trip_through_checkpoint_json():
    offsets = {TP1: 7, TP0: 3, TopicPartition("a", 10): 0}
    as_json = offsets_to_json(offsets)
    assert json.loads(json.dumps(as_json)) == {"a": {"10": 0}, "orders": {"0": 3, "1": 7}}
    assert offsets_from_json(as_json) == offsets
    with pytest.raises(ValueError, match="not an omconnect offsets object"):
        offsets_from_json({"omconnect.batch": 3})


def test_ranges_cover_exactly_start_to_end_and_split_by_size():
    ranges = plan_ranges({TP0: 10, TP1: 5}, {TP0: 35, TP1: 5, TopicPartition("x", 0): 3},
                         max_per_range=10)
    assert [(r.topic, r.partition, r.start, r.end) for r in ranges] == [
        ("orders", 0, 10, 20), ("orders", 0, 20, 30), ("orders", 0, 30, 35),
        ("x", 0, 0, 3)]  # a new partition starts at 0; an empty range is no partition


@pytest.mark.parametrize("limit", [1, 7, 10, 99, 100, 1000])
def test_rate_limit_shares_the_batch_by_backlog_and_never_exceeds_it(limit):
    start = {TP0: 0, TP1: 50, TopicPartition("x", 0): 0}
    latest = {TP0: 60, TP1: 80, TopicPartition("x", 0): 0, TopicPartition("y", 0): 10}
    end = limit_offsets(start, latest, limit)
    taken = {tp: end[tp] - start.get(tp, 0) for tp in end}
    backlog = {tp: latest[tp] - start.get(tp, 0) for tp in latest}
    assert sum(taken.values()) == min(limit, sum(backlog.values()))
    assert all(0 <= taken[tp] <= backlog[tp] for tp in taken)
    assert end == limit_offsets(start, latest, limit)  # deterministic
    if limit == 10:  # backlogs 60, 30, 10 out of 100: shares 6, 3, 1
        assert taken[TP0] == 6 and taken[TP1] == 3 and taken[TopicPartition("y", 0)] == 1


# -- Arrow batches --------------------------------------------------------------------------

def read_schema(value_type=None) -> StructType:
    header = StructType([StructField("key", StringType()), StructField("value", BinaryType())])
    return StructType([
        StructField("key", BinaryType()), StructField("value", value_type or BinaryType()),
        StructField("topic", StringType()), StructField("partition", IntegerType()),
        StructField("offset", LongType()), StructField("timestamp", TimestampType()),
        StructField("headers", ArrayType(header))])


def test_batches_carry_every_column_with_the_schema_spark_expects():
    options = ReadOptions.parse(spark_options(topics="orders"))
    schema = arrow_schema_of(read_schema())
    builder = RecordBatchBuilder(schema, options.key, options.value)
    messages = [Message("orders", b"k1", b"v1", (("a", b"1"), ("a", None)), 1_700_000_000_123,
                        1, 40),
                Message("orders", None, None, (), None, 1, 41)]
    batch = builder.build(messages, topic="orders", partition=1)
    assert batch.schema.equals(schema)
    rows = batch.to_pylist()
    assert rows[0]["key"] == b"k1" and rows[0]["value"] == b"v1"
    assert rows[0]["offset"] == 40 and rows[0]["partition"] == 1 and rows[0]["topic"] == "orders"
    assert rows[0]["timestamp"].timestamp() == 1_700_000_000.123
    assert rows[0]["headers"] == [{"key": "a", "value": b"1"}, {"key": "a", "value": None}]
    assert rows[1]["key"] is None and rows[1]["timestamp"] is None and rows[1]["headers"] == []
    mixed = builder.build([Message("a", b"1", b"x", (), 1, 0, 5), Message("b", b"2", b"y", (), 2,
                                                                            3, 6)])
    assert mixed.column("topic").to_pylist() == ["a", "b"]
    assert mixed.column("partition").to_pylist() == [0, 3]


def test_a_group_chunk_polled_as_batches_reads_and_commits_as_its_messages_do():
    # Group mode (non-replayable transports) polls Arrow batches on the driver and ships
    # them to the executors as they are; what Spark reads and what the group commits
    # must be what the same chunk as Message objects gives.
    from omconnect_spark.group_reading import _next_positions
    from omconnect_spark.reading import MessagesPartition, PolledPartition, read_partition

    from omconnect.transport.message_batches import messages_to_batch

    messages = [Message(topic, f"k{i}".encode(), f"v{i}".encode(), (("h", b"x"),),
                        1_700_000_000_000 + i, partition, offset)
                for i, (topic, partition, offset) in enumerate([
                    ("a", 0, 7), ("a", 1, 3), ("b", 0, 9), ("a", 0, 8), ("a", 1, 4),
                    ("a", 0, 9)])]
    polled = [messages_to_batch(messages[:4]), messages_to_batch(messages[4:])]
    expected = {TopicPartition("a", 0): 10, TopicPartition("a", 1): 5,
                TopicPartition("b", 0): 10}
    assert _next_positions(polled, columnar=True) == expected
    assert _next_positions(messages, columnar=False) == expected
    options = ReadOptions.parse(spark_options(topics="a,b"))
    schema = read_schema()
    from_batch = [row for part in polled
                  for batch in read_partition(options, schema, PolledPartition(part))
                  for row in batch.to_pylist()]
    from_messages = [row for batch in read_partition(options, schema,
                                                      MessagesPartition(messages))
                     for row in batch.to_pylist()]
    assert from_batch == from_messages
    assert [row["offset"] for row in from_batch] == [7, 3, 9, 8, 4, 9]


def test_values_decode_through_an_omconnect_converter_into_typed_columns():
    value_type = StructType([StructField("id", LongType()), StructField("item", StringType())])
    options = ReadOptions.parse(spark_options(
        topics="orders", **{"value.converter": "json", "value.converter.schemas.enable": "false",
                            "value.schema": "id BIGINT, item STRING"}))
    builder = RecordBatchBuilder(arrow_schema_of(read_schema(value_type)), options.key,
                                 options.value)
    batch = builder.build([Message("orders", None, b'{"id": 1, "item": "tea"}', (), 1, 0, 0),
                           Message("orders", None, None, (), 1, 0, 1)])
    assert batch.column("value").to_pylist() == [{"id": 1, "item": "tea"}, None]
    with pytest.raises(DataError, match=r"orders-0 at offset 8 cannot be decoded"):
        builder.build([Message("orders", None, b'{"id": 1}', (), 1, 0, 7),
                       Message("orders", None, b"{oops", (), 1, 0, 8)])
    with pytest.raises(DataError, match=r"orders-0 at offset 9 does not fit value.schema"):
        builder.build([Message("orders", None, b'{"id": "one"}', (), 1, 0, 9)])


def test_plain_json_yields_decimal_and_timestamp_columns_as_from_json_does():
    from pyspark.sql.types import DecimalType

    value_type = StructType([StructField("id", LongType()),
                             StructField("amount", DecimalType(10, 2)),
                             StructField("at", TimestampType()),
                             StructField("tags", ArrayType(StringType()))])
    options = ReadOptions.parse(spark_options(
        topics="orders", **{"value.converter": "json", "value.converter.schemas.enable": "false",
                            "value.schema": "id BIGINT, amount DECIMAL(10,2), at TIMESTAMP, "
                                            "tags ARRAY<STRING>"}))
    builder = RecordBatchBuilder(arrow_schema_of(read_schema(value_type)), options.key,
                                 options.value)
    batch = builder.build([
        Message("orders", None, b'{"id":1,"amount":12.5,"at":"2024-01-02T03:04:05Z",'
                                b'"tags":["a"],"unknown":true}', (), 1, 0, 0),
        Message("orders", None, None, (), 1, 0, 1),
        Message("orders", None, b'{"id":2,"amount":"0.10","at":"2024-01-02 03:04:05.25"}',
                (), 1, 0, 2)])
    first, tombstone, third = batch.column("value").to_pylist()
    assert tombstone is None
    assert (first["id"], str(first["amount"]), first["tags"]) == (1, "12.50", ["a"])
    assert first["at"].isoformat() == "2024-01-02T03:04:05+00:00"
    assert (str(third["amount"]), third["at"].microsecond, third["tags"]) == ("0.10", 250_000,
                                                                            None)
    with pytest.raises(DataError, match=r"orders-0 at offset 5 does not fit value.schema"):
        builder.build([Message("orders", None, b'{"id":1}', (), 1, 0, 4),
                       Message("orders", None, b'{"id":"one"}', (), 1, 0, 5)])


def test_string_values_are_validated_utf8():
    options = ReadOptions.parse(spark_options(topics="t", **{"value.converter": "string"}))
    builder = RecordBatchBuilder(arrow_schema_of(read_schema(StringType())), options.key,
                                 options.value)
    assert builder.build([Message("t", None, "héllo".encode(), (), 1, 0, 0)]).column(
        "value").to_pylist() == ["héllo"]
    with pytest.raises(DataError, match="t-0 at offset 3 is not UTF-8"):
        builder.build([Message("t", None, b"\xff", (), 1, 0, 3)])


def test_a_schema_set_on_the_reader_is_refused():
    wrong = StructType([StructField("value", BinaryType())])
    with pytest.raises(DataError, match=r"do not set \.schema"):
        arrow_schema_of(wrong)


# -- retries --------------------------------------------------------------------------------

def test_retriable_transport_errors_are_retried_for_a_bounded_time_others_fail_at_once():
    from omconnect_spark.retry import retrying

    from omconnect.errors import RetriableTransportError, TransportError

    calls = []

    def flaky() -> str:
        calls.append(1)
        if len(calls) < 3:
            raise RetriableTransportError("broker restarting")
        return "done"

    assert retrying(flaky, what="test", timeout_ms=10_000) == "done" and len(calls) == 3
    with pytest.raises(RetriableTransportError):
        retrying(lambda: (_ for _ in ()).throw(RetriableTransportError("down")), what="t",
                 timeout_ms=50)
    fatal = []

    def broken() -> None:
        fatal.append(1)
        raise TransportError("bad credentials")

    with pytest.raises(TransportError, match="bad credentials"):
        retrying(broken, what="test", timeout_ms=10_000)
    assert len(fatal) == 1


# -- Spark's Kafka source options ---------------------------------------------------------

def test_kafka_source_names_mean_what_they_mean_there():
    options = ReadOptions.parse(spark_options(**{
        "subscribe": "orders", "maxOffsetsPerTrigger": "500", "minOffsetsPerTrigger": "50",
        "maxTriggerDelay": "30s", "minPartitions": "8", "includeHeaders": "false",
        "kafkaConsumer.pollTimeoutMs": "4000", "groupIdPrefix": "etl"}))
    assert options.selection.kind == "subscribe" and options.topics == ("orders",)
    assert (options.max_records_per_trigger, options.min_records_per_trigger) == (500, 50)
    assert options.max_trigger_delay_ms == 30_000 and options.min_partitions == 8
    assert options.read_timeout_ms == 4000 and options.group_id == "etl-orders"
    assert "headers" not in options.spark_schema()


def test_subscribe_pattern_and_assign_select_partitions():
    pattern = ReadOptions.parse(spark_options(subscribePattern="orders-.*")).selection
    assert pattern.partitions({"orders-eu": 2, "orders-us": 1, "refunds": 3}) == [
        TopicPartition("orders-eu", 0), TopicPartition("orders-eu", 1),
        TopicPartition("orders-us", 0)]
    assigned = ReadOptions.parse(spark_options(assign='{"orders": [1, 0]}')).selection
    assert assigned.partitions({"orders": 3}) == [TP0, TP1]
    too_far = ReadOptions.parse(spark_options(assign='{"orders": [5]}')).selection
    with pytest.raises(ConfigError, match="orders-5"):
        too_far.partitions({"orders": 3})


def test_a_missing_topic_is_an_error_naming_it_unless_waited_for():
    selection = ReadOptions.parse(spark_options(subscribe="orders,ordres")).selection
    with pytest.raises(ConfigError, match="'ordres' does not exist") as caught:
        selection.partitions({"orders": 1})
    assert caught.value.context["key"] == "subscribe"
    waiting = ReadOptions.parse(spark_options(subscribe="orders,later",
                                              missingTopics="wait")).selection
    assert waiting.partitions({"orders": 1}) == [TP0]


def test_timestamp_options_take_precedence_as_in_kafka():
    options = ReadOptions.parse(spark_options(
        subscribe="orders", startingOffsets="earliest", startingTimestamp="1700000000000",
        startingOffsetsByTimestamp='{"orders": {"0": 5}}',
        startingOffsetsByTimestampStrategy="latest"))
    assert options.starting is not None and options.starting.kind == "timestamp"
    assert options.starting.timestamp(TP1) == 1_700_000_000_000
    assert options.starting.if_none == "latest"
    by_partition = ReadOptions.parse(spark_options(
        subscribe="orders", startingOffsetsByTimestamp='{"orders": {"0": 5}}'))
    assert by_partition.starting is not None
    assert (by_partition.starting.timestamp(TP0), by_partition.starting.timestamp(TP1)) == \
        (5, None)
    assert by_partition.starting.if_none == "error"


def test_ending_and_trigger_options_are_refused_where_they_do_not_apply():
    with pytest.raises(ConfigError, match="apply to batch reads only"):
        ReadOptions.parse(spark_options(subscribe="orders",
                                        endingTimestamp="1")).check_stream()
    with pytest.raises(ConfigError, match="minOffsetsPerTrigger applies to streams"):
        ReadOptions.parse(spark_options(subscribe="orders",
                                        minOffsetsPerTrigger="5")).check_batch()


def test_min_partitions_splits_ranges_in_proportion_to_their_records():
    start = {TP0: 0, TP1: 0}
    ranges = plan_ranges(start, {TP0: 900, TP1: 100}, min_ranges=10)
    assert len(ranges) >= 10
    assert sum(r.size for r in ranges) == 1000
    assert sum(1 for r in ranges if r.partition == 0) > sum(1 for r in ranges
                                                           if r.partition == 1)
    assert len(plan_ranges(start, {TP0: 900, TP1: 100}, min_ranges=2)) == 2


def test_offsets_for_timestamps_are_the_first_records_at_or_after_them(tmp_path):
    from omconnect_spark.timestamps import offset_for_timestamp

    from omconnect.transport.embedded import EmbeddedTransport

    with EmbeddedTransport({"path": str(tmp_path)}) as transport:
        producer = transport.producer()
        producer.send([Message("orders", value=b"v", timestamp=1000 + 10 * i, partition=0)
                       for i in range(1000)]).result(30)
        producer.close()
        reader = transport.consumer(None)
        reader.assign([TP0])
        find = lambda stamp: offset_for_timestamp(reader, TP0, 0, 1000, stamp,  # noqa: E731
                                                  timeout=10)
        assert [find(t) for t in (0, 1000, 1001, 1010, 5995, 10990, 10991)] == \
            [0, 0, 1, 1, 500, 999, None]
        reader.close()


def test_lag_metrics_follow_from_a_progress_as_in_spark_kafka():
    from omconnect_spark import offsets_behind_latest

    progress = {"sources": [{
        "endOffset": {"orders": {"0": 100, "1": 40}},
        "latestOffset": {"orders": {"0": 130, "1": 40, "2": 5}}}]}
    assert offsets_behind_latest(progress) == {
        "minOffsetsBehindLatest": 0.0, "maxOffsetsBehindLatest": 30.0,
        "avgOffsetsBehindLatest": 35 / 3}
    assert offsets_behind_latest(json.dumps(progress)) == offsets_behind_latest(progress)
    assert offsets_behind_latest({"sources": [{"endOffset": {"omconnect.batch": 3},
                                               "latestOffset": None}]}) == {}
