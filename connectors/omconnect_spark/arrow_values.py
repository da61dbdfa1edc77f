"""Connect values (schema + value) to Arrow columns, for the Spark Parquet sink.

With a schema, a key or value gets the matching Arrow type (Spark reads it back as the
matching Spark type):

==================  ==============================================
Connect             Arrow / Spark
==================  ==============================================
INT8 .. INT64       int8 .. int64 / tinyint .. bigint
FLOAT32, FLOAT64    float32, float64 / float, double
BOOLEAN             bool / boolean
STRING              string
BYTES               binary
ARRAY               list / array
MAP                 map / map
STRUCT              struct / struct (fields in schema order)
Decimal             decimal128(precision, scale) / decimal (precision from the
                    ``connect.decimal.precision`` parameter, else 38)
Date                date32 / date
Time                string ``HH:MM:SS.ffffff`` (Spark has no time-of-day type)
Timestamp           timestamp[us, UTC] / timestamp
==================  ==============================================

Without a schema (schemaless JSON, or a converter that gives none) the column is
``string`` (or ``binary``, see ``schemaless.column.type``): text as it is, bytes as UTF-8
text, anything else as JSON text.
"""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import json
from typing import Any

from omconnect.data.schema import Schema
from omconnect.data.struct import Struct
from omconnect.errors import DataError

__all__ = ["arrow_type_of", "schemaless_values", "to_arrow_value"]



def arrow_type_of(schema: Schema) -> Any:
    """The Arrow type of values of ``schema``: omconnect's
    (:func:`omconnect.columnar.arrow_types.arrow_type_of`) with Times as ``string``.

    Raises:
        DataError: The type is not known.

    """
    import pyarrow as pa

    from omconnect.columnar.arrow_types import arrow_type_of as columnar_type_of

    arrow_type = columnar_type_of(schema, time_type=pa.string())
    if arrow_type is None:
        raise DataError(f"no Arrow type for schema {schema}")
    return arrow_type


def to_arrow_value(value: Any, schema: Schema | None) -> Any:
    """``value`` as Arrow takes it for ``arrow_type_of(schema)``: structs as dicts,
    times as text, recursively (:func:`omconnect.columnar.arrow_types.arrow_value`).
    """
    from omconnect.columnar.arrow_types import arrow_value

    return arrow_value(value, schema, _time_text)


def _time_text(value: dt.time) -> str:
    return value.isoformat(timespec="microseconds")


def schemaless_values(values: list[Any], *, binary: bool) -> list[Any]:
    """Schemaless values for a ``string`` (or ``binary``) column."""
    if binary:
        return [v if v is None or isinstance(v, bytes)
                else v.encode("utf-8") if isinstance(v, str)
                else _json(v).encode("utf-8") for v in values]
    return [v if v is None or isinstance(v, str)
            else _utf8(v) if isinstance(v, (bytes, bytearray))
            else _json(v) for v in values]


def _utf8(data: bytes | bytearray) -> str:
    try:
        return bytes(data).decode("utf-8")
    except UnicodeDecodeError:
        raise DataError("a schemaless value is bytes that are not UTF-8 text; set "
                        "schemaless.column.type=binary to store bytes as they are") from None


def _json(value: Any) -> str:
    return json.dumps(value, default=_json_default, separators=(",", ":"), ensure_ascii=False)


def _json_default(value: Any) -> Any:
    if isinstance(value, Struct):
        return value.to_dict()
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, (dt.date, dt.time, dt.datetime)):
        return value.isoformat()
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(bytes(value)).decode("ascii")
    raise TypeError(f"cannot write {type(value).__name__} as JSON")
