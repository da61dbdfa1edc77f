"""Records of one schema become a column of the schema's Arrow type (what a batch sink
fed record by record gets), and the type is the same as the columnar path gives."""

from __future__ import annotations

import datetime as dt
import decimal

import pytest

pa = pytest.importorskip("pyarrow")

from omconnect.columnar import sink_records_to_batch  # noqa: E402
from omconnect.columnar.arrow_types import arrow_type_of  # noqa: E402
from omconnect.data import SchemaBuilder, Struct, logical  # noqa: E402
from omconnect.records import SinkRecord  # noqa: E402

_ROW = (SchemaBuilder.struct().field("small", SchemaBuilder.int8())
        .field("ratio", SchemaBuilder.float32())
        .field("day", logical.date_schema())
        .field("at", logical.time_schema(optional=True))
        .field("price", SchemaBuilder.decimal(2).parameter("connect.decimal.precision", "9"))
        .field("tags", SchemaBuilder.array(SchemaBuilder.string().build()))
        .field("counts", SchemaBuilder.map(SchemaBuilder.string().build(),
                                           SchemaBuilder.int32().build()))
        .build())


def _record(n: int, value: object, schema: object) -> SinkRecord:
    return SinkRecord(topic="t", partition=0, offset=n, value_schema=schema, value=value)


def _row(n: int) -> Struct:
    return Struct(_ROW, {"small": n, "ratio": 0.5, "day": dt.date(2024, 1, n + 1),
                         "at": None, "price": decimal.Decimal(f"{n}.25"),
                         "tags": ["a"], "counts": {"k": n}})


def test_records_of_one_schema_give_a_column_of_its_arrow_type() -> None:
    records = [_record(0, _row(0), _ROW), _record(1, None, None), _record(2, _row(2), _ROW)]
    column = sink_records_to_batch(records).column("value")
    assert column.type == arrow_type_of(_ROW) == pa.struct([
        ("small", pa.int8()), ("ratio", pa.float32()), ("day", pa.date32()),
        ("at", pa.time64("us")), ("price", pa.decimal128(9, 2)),
        ("tags", pa.list_(pa.string())), ("counts", pa.map_(pa.string(), pa.int32()))])
    assert column.to_pylist()[1] is None  # a tombstone between rows keeps the type
    assert column.to_pylist()[2]["counts"] == [("k", 2)]
    assert column.to_pylist()[2]["price"] == decimal.Decimal("2.25")


def test_records_of_several_schemas_or_none_give_what_arrow_infers() -> None:
    other = SchemaBuilder.struct().field("small", SchemaBuilder.int64()).build()
    mixed = [_record(0, Struct(other, {"small": 1}), other),
             _record(1, {"small": 2}, None)]  # one without a schema: inferred
    assert sink_records_to_batch(mixed).column("value").type == \
        pa.struct([("small", pa.int64())])
    schemaless = [_record(0, 5, None)]
    assert sink_records_to_batch(schemaless).column("value").type == pa.int64()
