"""Typed Arrow rows become Connect values with one check per column where the Arrow types
vouch for them, and with a check per value where they do not (nothing invalid gets
through either way).
"""

from __future__ import annotations

import datetime as dt
import decimal

import pytest

pa = pytest.importorskip("pyarrow")

from omconnect.columnar import SourceBatch  # noqa: E402
from omconnect.columnar.records import source_batch_to_records  # noqa: E402
from omconnect.columnar.typed_values import column_fits, value_builder  # noqa: E402
from omconnect.data import (  # noqa: E402
    SchemaBuilder,
    Struct,
    date_schema,
    decimal_schema,
    timestamp_schema,
)
from omconnect.errors import DataError  # noqa: E402


def _order_schema(*, optional_note: bool = True):
    line = SchemaBuilder.struct().field("sku", SchemaBuilder.string().build()) \
        .field("qty", SchemaBuilder.int32().build()).build()
    note = SchemaBuilder.string().optional().build() if optional_note else \
        SchemaBuilder.string().build()
    return (SchemaBuilder.struct()
            .field("id", SchemaBuilder.int64().build())
            .field("note", note)
            .field("day", date_schema())
            .field("at", timestamp_schema())
            .field("price", decimal_schema(2))
            .field("lines", SchemaBuilder.array(line).build())
            .field("attrs", SchemaBuilder.map(SchemaBuilder.string().build(),
                                              SchemaBuilder.int64().build()).build())
            .build())


def _order_column(note=None):
    rows = [{"id": i, "note": note if i == 1 else f"n{i}", "day": dt.date(2024, 1, i + 1),
             "at": dt.datetime(2024, 1, 1, i, tzinfo=dt.UTC),
             "price": decimal.Decimal(f"{i}.25"),
             "lines": [{"sku": f"s{i}", "qty": i}], "attrs": [("k", i)]} for i in range(3)]
    arrow = pa.struct([
        ("id", pa.int64()), ("note", pa.string()), ("day", pa.date32()),
        ("at", pa.timestamp("us", tz="UTC")), ("price", pa.decimal128(9, 2)),
        ("lines", pa.list_(pa.struct([("sku", pa.string()), ("qty", pa.int16())]))),
        ("attrs", pa.map_(pa.string(), pa.int64()))])
    return pa.array(rows, arrow)


def test_a_column_whose_types_match_builds_valid_structs_without_a_check_per_value():
    schema, column = _order_schema(), _order_column()
    assert column_fits(column, schema)
    built = list(map(value_builder(schema), column.to_pylist()))
    for value in built:
        value.validate()
    assert built[2].get("lines")[0].get("qty") == 2
    assert built[2].get("attrs") == {"k": 2}
    assert built[0] == Struct(schema, {
        "id": 0, "note": "n0", "day": dt.date(2024, 1, 1),
        "at": dt.datetime(2024, 1, 1, 0, tzinfo=dt.UTC), "price": decimal.Decimal("0.25"),
        "lines": [Struct(schema.field("lines").schema.value_schema, {"sku": "s0", "qty": 0})],
        "attrs": {"k": 0}})


@pytest.mark.parametrize(("column", "schema", "why"), [
    (pa.array([1, 2], pa.int64()), SchemaBuilder.int32().build(), "int64 into INT32"),
    (pa.array([1, 2], pa.uint32()), SchemaBuilder.int32().build(), "uint32 into INT32"),
    (pa.array(["a"]), SchemaBuilder.bytes().build(), "string into BYTES"),
    (pa.array([decimal.Decimal("1.5")], pa.decimal128(5, 1)), decimal_schema(2),
     "a Decimal of another scale"),
    (pa.array([dt.datetime(2024, 1, 1)], pa.timestamp("ns")), timestamp_schema(),
     "nanoseconds"),
    (pa.array([{"b": 1}], pa.struct([("b", pa.int32())])),
     SchemaBuilder.struct().field("a", SchemaBuilder.int32().build()).build(),
     "another field name"),
])
def test_a_column_whose_types_do_not_vouch_for_the_schema_is_checked_per_value(
        column, schema, why):
    assert not column_fits(column, schema), why


def test_a_double_column_fits_a_float32_schema_as_the_python_floats_records_hold():
    # A FLOAT32 value is any Python float (a CSV field read record by record is one), so
    # a float64 column of them stays a column: narrowing it to float32 would change them.
    column = pa.array([0.1, None], pa.float64())
    schema = SchemaBuilder.float32().optional().build()
    assert column_fits(column, schema)
    assert value_builder(schema) is None  # the values are the floats as they are


def test_a_null_where_the_schema_has_no_room_for_one_is_checked_per_value():
    schema = _order_schema(optional_note=False)
    assert column_fits(_order_column(note="x"), schema)
    assert not column_fits(_order_column(note=None), schema)


def test_a_batch_whose_rows_do_not_match_their_schema_still_fails_per_record():
    schema = SchemaBuilder.struct().field("n", SchemaBuilder.int8().build()).build()
    batch = SourceBatch(topic="t", records=pa.RecordBatch.from_arrays(
        [pa.array([{"n": 1}, {"n": 300}], pa.struct([("n", pa.int64())]))], names=["value"]),
        value_schema=schema)
    with pytest.raises(DataError, match="300 is out of range for int8"):
        source_batch_to_records(batch)


def test_a_batch_whose_rows_match_gives_the_records_of_the_checked_path():
    schema, column = _order_schema(), _order_column()
    batch = SourceBatch(topic="t", records=pa.RecordBatch.from_arrays([column],
                                                                     names=["value"]),
                        value_schema=schema)
    fast = [record.value for record in source_batch_to_records(batch)]
    checked = [Struct(schema, row | {
        "lines": [Struct(schema.field("lines").schema.value_schema, line)
                  for line in row["lines"]], "attrs": dict(row["attrs"])})
        for row in column.to_pylist()]
    assert fast == checked
