"""How the spark-parquet sink turns records into Arrow tables (no JVM needed)."""

from __future__ import annotations

import datetime as dt
import decimal

import pytest

pa = pytest.importorskip("pyarrow", reason="the spark extra is not installed")

from omconnect_spark.arrow_values import arrow_type_of, schemaless_values  # noqa: E402
from omconnect_spark.parquet_table import range_label, split_segments, table_of  # noqa: E402

from omconnect.data import SchemaBuilder, Struct  # noqa: E402
from omconnect.data.logical import (  # noqa: E402
    date_schema,
    decimal_schema,
    time_schema,
    timestamp_schema,
)
from omconnect.errors import DataError  # noqa: E402
from omconnect.records import SinkRecord  # noqa: E402

pytestmark = pytest.mark.spark

ITEM = SchemaBuilder.struct().name("item").field("sku", SchemaBuilder.string().build()).build()
ORDER = (SchemaBuilder.struct().name("order")
         .field("id", SchemaBuilder.int64().build())
         .field("price", decimal_schema(2))
         .field("day", date_schema())
         .field("at", time_schema())
         .field("when", timestamp_schema())
         .field("items", SchemaBuilder.array(ITEM).build())
         .field("tags", SchemaBuilder.map(SchemaBuilder.string().build(),
                                          SchemaBuilder.int32().build()).build())
         .build())


def order(i: int) -> Struct:
    return Struct(ORDER, {
        "id": i, "price": decimal.Decimal("1.25"), "day": dt.date(2024, 5, i + 1),
        "at": dt.time(13, 30, 5, 250000),
        "when": dt.datetime(2024, 5, 1, 12, tzinfo=dt.UTC),
        "items": [Struct(ITEM, {"sku": "a"}), Struct(ITEM, {"sku": "b"})],
        "tags": {"x": 1}})


def record(offset: int, value, schema=None, partition: int = 0) -> SinkRecord:
    return SinkRecord(topic="orders", partition=partition, offset=offset, value=value,
                      value_schema=schema, key=f"k{offset}", timestamp=1_700_000_000_000,
                      headers=[("trace", b"\xff\x01"), ("n", 5)])


def test_connect_schemas_become_arrow_types_spark_reads_back():
    assert str(arrow_type_of(ORDER)) == (
        "struct<id: int64, price: decimal128(38, 2), day: date32[day], at: string, "
        "when: timestamp[us, tz=UTC], items: list<item: struct<sku: string>>, "
        "tags: map<string, int32>>")


def test_a_table_holds_typed_values_metadata_and_directory_columns():
    records = [record(i, order(i), ORDER) for i in range(3)]
    table = table_of([records], pa.string(), arrow_type_of(ORDER), binary=False)
    assert table.column_names == ["key", "value", "timestamp", "offset", "headers", "topic",
                                  "partition", "offsets"]
    row = table.to_pylist()[1]
    assert row["value"]["price"] == decimal.Decimal("1.25")
    assert row["value"]["day"] == dt.date(2024, 5, 2)
    assert row["value"]["at"] == "13:30:05.250000"
    assert row["value"]["items"] == [{"sku": "a"}, {"sku": "b"}]
    assert row["value"]["tags"] == [("x", 1)]
    assert row["headers"] == [{"key": "trace", "value": "/wE="}, {"key": "n", "value": "5"}]
    assert (row["topic"], row["partition"], row["offset"]) == ("orders", 0, 1)
    assert row["offsets"] == range_label(0, 2) == f"{0:020d}-{2:020d}"
    assert row["timestamp"].timestamp() == 1_700_000_000


def test_schemaless_values_go_to_one_text_or_binary_column():
    values = ["text", b"bytes", {"a": [1, 2]}, 7, None, Struct(ITEM, {"sku": "s"})]
    assert schemaless_values(values, binary=False) == [
        "text", "bytes", '{"a":[1,2]}', "7", None, '{"sku":"s"}']
    assert schemaless_values(values, binary=True)[:3] == [b"text", b"bytes", b'{"a":[1,2]}']
    with pytest.raises(DataError, match=r"schemaless\.column\.type=binary"):
        schemaless_values([b"\xff"], binary=False)


def test_a_schema_change_cuts_a_partition_into_segments_in_offset_order():
    other = SchemaBuilder.struct().field("id", SchemaBuilder.int64().build()).build()
    records = [record(0, order(0), ORDER), record(1, order(1), ORDER),
               record(2, Struct(other, {"id": 2}), other), record(3, "text"),
               record(4, "more text")]
    segments = split_segments(records, binary=False)
    assert [[r.offset for r in segment] for segment in segments] == [[0, 1], [2], [3, 4]]


def test_a_columnar_batch_becomes_the_same_table_as_its_records():
    from omconnect_spark.parquet_table import batch_table, records_table

    from omconnect.columnar.columns import consumed_batch
    from omconnect.data.schema import OPTIONAL_BYTES_SCHEMA, OPTIONAL_STRING_SCHEMA

    headers = [[("trace", b"\xff\x01"), ("n", b"5")], [], None]
    polled = consumed_batch(["orders"] * 3, [1] * 3, [7, 8, 9],
                            [1_700_000_000_000, None, 1_700_000_000_005],
                            [b"k7", None, b"k9"], [b"\x00v", b"w", None], headers)
    # What the String (key) and ByteArray (value) converters give put_batch.
    batch = polled.set_column(4, "key", polled.column("key").cast(pa.string()))
    records = [SinkRecord(topic="orders", partition=1, offset=7 + i,
                          key=None if key is None else key.decode(),
                          key_schema=OPTIONAL_STRING_SCHEMA, value=value,
                          value_schema=OPTIONAL_BYTES_SCHEMA, timestamp=stamp,
                          headers=list(pairs or ()))
               for i, (key, value, stamp, pairs) in enumerate(zip(
                   [b"k7", None, b"k9"], [b"\x00v", b"w", None],
                   [1_700_000_000_000, None, 1_700_000_000_005], headers, strict=True))]
    from_batch = batch_table(batch)
    assert from_batch.equals(records_table(records, binary=False))
    assert from_batch.to_pylist()[0]["headers"] == [{"key": "trace", "value": "/wE="},
                                                    {"key": "n", "value": "5"}]
    # A slice of a batch (what a filtering transform or a split leaves) keeps its rows.
    assert batch_table(batch.slice(1, 2)).equals(records_table(records[1:], binary=False))


def test_consecutive_tables_of_the_same_types_make_one_segment():
    from omconnect_spark.parquet_table import merge_segments, records_table

    text = [record(i, f"v{i}") for i in range(4)]
    typed = [record(4, order(4), ORDER)]
    tables = [records_table(text[:2], binary=False), records_table(text[2:], binary=False),
              records_table(typed, binary=False)]
    segments = merge_segments(tables)
    assert [s.column("offset").to_pylist() for s in segments] == [[0, 1, 2, 3], [4]]


def test_a_value_the_table_cannot_hold_stops_the_task_instead_of_retrying():
    from omconnect_spark.sink import _translate

    from omconnect.errors import ConnectError, RetriableError

    with pytest.raises(DataError) as bad:
        schemaless_values([b"\xff"], binary=False)
    fatal = _translate(bad.value, "/t")
    assert isinstance(fatal, ConnectError) and not isinstance(fatal, RetriableError)
    assert "schemaless.column.type=binary" in str(fatal)
    assert isinstance(_translate(OSError("disk full"), "/t"), RetriableError)
