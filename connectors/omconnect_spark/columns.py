"""Messages to Arrow record batches with the columns of Spark's Kafka source.

Columns: ``key`` and ``value`` (binary, or decoded), ``topic``, ``partition``, ``offset``,
``timestamp`` (from the transport's milliseconds) and ``headers``
(``array<struct<key: string, value: binary>>``, empty when a message has none).

The batches are built column by column from the messages (one list per column, then one
Arrow array each), with the exact Arrow schema Spark expects for the query's columns:
Spark checks it, and copies Arrow batches without converting a value in Python.

Decoding: a key or value read with a converter (``value.converter=json`` and
``value.schema``) goes through the omconnect converter's batch method, then into an Arrow
array of the column's type; ``string`` in UTF-8 is decoded by Arrow (the same result as
omconnect's StringConverter, validated, without a Python call per value). Plain JSON
(``value.converter=json`` with ``schemas.enable=false``) is parsed by Arrow's JSON reader
straight into the column's type, as Spark's ``from_json`` would: DECIMAL from numbers or
strings, TIMESTAMP and DATE from ISO-8601 strings, nested structs and arrays, fields the
schema lacks ignored, missing ones null; a batch Arrow cannot parse (a value that is not a
JSON object, a field of the wrong type) goes through the converter, which names the
record that is wrong.
"""

from __future__ import annotations

import datetime
import decimal
from collections.abc import Callable, Sequence
from operator import attrgetter
from typing import Any

from omconnect.converters.base import Converter
from omconnect.converters.task_converters import build_converters
from omconnect.data.struct import Struct
from omconnect.errors import DataError
from omconnect.transport.messages import Message
from omconnect_spark.decoding import Decoding

__all__ = ["RecordBatchBuilder", "arrow_schema_of"]

_key = attrgetter("key")
_value = attrgetter("value")
_offset = attrgetter("offset")
_timestamp = attrgetter("timestamp")
_headers = attrgetter("headers")
_topic = attrgetter("topic")
_partition = attrgetter("partition")

COLUMNS = ("key", "value", "topic", "partition", "offset", "timestamp", "headers")
"""The columns of a read, in order (``headers`` only with ``includeHeaders``)."""


def arrow_schema_of(spark_schema: Any) -> Any:
    """The Arrow schema Spark expects of batches for ``spark_schema`` (a StructType).

    Raises:
        DataError: The schema does not have the columns this source yields (a schema
            given with ``.schema(...)`` must be the one the source reports).

    """
    from pyspark.sql.pandas.types import to_arrow_schema

    names = tuple(spark_schema.fieldNames())
    if names not in (COLUMNS, COLUMNS[:-1]):
        raise DataError(f"the omconnect source yields the columns {list(COLUMNS)}, but the "
                        f"query asks for {list(names)}; do not set .schema(...) on the "
                        "reader (decode with value.converter and value.schema), and select "
                        "columns after load()")
    return to_arrow_schema(spark_schema, timezone="UTC")


class RecordBatchBuilder:
    """Builds Arrow record batches of messages; one per reading task.

    Args:
        schema: The Arrow schema of the batches (:func:`arrow_schema_of`).
        key: How keys are decoded.
        value: How values are decoded.

    """

    def __init__(self, schema: Any, key: Decoding, value: Decoding) -> None:
        import pyarrow as pa
        import pyarrow.compute as pc

        self._pa = pa
        self._pc = pc
        self._schema = schema
        self._key = _ColumnDecoder(key, schema.field("key").type, "key")
        self._value = _ColumnDecoder(value, schema.field("value").type, "value")
        self._with_headers = "headers" in schema.names
        if self._with_headers:
            self._headers_type = schema.field("headers").type
            self._header_fields = list(self._headers_type.value_type)
        self._timestamp_type = schema.field("timestamp").type

    def build(self, messages: Sequence[Message], *, topic: str | None = None,
              partition: int | None = None) -> Any:
        """One ``pyarrow.RecordBatch`` of ``messages``.

        Args:
            messages: The messages, each with partition and offset set.
            topic: The topic of every message, when they share one (faster).
            partition: The partition of every message, when they share one.

        Raises:
            DataError: A key or value cannot be decoded as configured (naming the
                message's topic, partition and offset).

        """
        pa = self._pa
        n = len(messages)
        if topic is not None:
            topics = pa.repeat(pa.scalar(topic, pa.string()), n)
        else:
            topics = pa.array(list(map(_topic, messages)), pa.string())
        if partition is not None:
            partitions = pa.repeat(pa.scalar(partition, pa.int32()), n)
        else:
            partitions = pa.array(list(map(_partition, messages)), pa.int32())
        stamps = pa.array(list(map(_timestamp, messages)), pa.int64())
        timestamps = self._pc.multiply(stamps, 1000).cast(self._timestamp_type)
        columns = [
            self._key.decode(list(map(_key, messages)), messages),
            self._value.decode(list(map(_value, messages)), messages),
            topics,
            partitions,
            pa.array(list(map(_offset, messages)), pa.int64()),
            timestamps,
        ]
        if self._with_headers:
            columns.append(self._header_column(list(map(_headers, messages))))
        return pa.RecordBatch.from_arrays(columns, schema=self._schema)

    def build_polled(self, polled: Any) -> Any:
        """One ``pyarrow.RecordBatch`` of a batch a consumer's ``poll_batch`` returned
        (:func:`omconnect.columnar.consumed_schema`): its columns are cast, not rebuilt,
        where the decoding allows (bytes, UTF-8 text); otherwise its rows go through
        :meth:`build` as messages.

        Raises:
            DataError: As :meth:`build`.

        """
        pa = self._pa
        key = self._key.decode_column(polled.column("key"))
        value = self._value.decode_column(polled.column("value"))
        if key is None or value is None:
            from omconnect.transport.message_batches import batch_to_messages

            return self.build(batch_to_messages(None, polled))
        schema = self._schema
        stamps = polled.column("timestamp")
        columns = [
            key, value,
            polled.column("topic").cast(schema.field("topic").type),
            polled.column("partition").cast(schema.field("partition").type),
            polled.column("offset").cast(schema.field("offset").type),
            self._pc.multiply(stamps, 1000).cast(self._timestamp_type),
        ]
        if self._with_headers:
            headers = polled.column("headers")
            item_type = self._headers_type.value_type
            columns.append(pa.ListArray.from_arrays(
                headers.offsets, headers.values.cast(item_type), type=self._headers_type))
        return pa.RecordBatch.from_arrays(columns, schema=schema)

    def _header_column(self, headers: list[Any]) -> Any:
        pa = self._pa
        offsets = [0]
        names: list[str] = []
        values: list[bytes | None] = []
        if any(headers):
            total = 0
            for pairs in headers:
                for name, data in pairs:
                    names.append(name)
                    values.append(data)
                total += len(pairs)
                offsets.append(total)
        else:
            offsets *= len(headers) + 1
        items = pa.StructArray.from_arrays(
            [pa.array(names, self._header_fields[0].type),
             pa.array(values, self._header_fields[1].type)], fields=self._header_fields)
        return pa.ListArray.from_arrays(pa.array(offsets, pa.int32()), items,
                                        type=self._headers_type)


class _ColumnDecoder:
    """Turns the key or value bytes of a batch into the column's Arrow array."""

    def __init__(self, decoding: Decoding, arrow_type: Any, side: str) -> None:
        import pyarrow as pa

        self._pa = pa
        self._type = arrow_type
        self._side = side
        self._decoding = decoding
        self._converter: Converter | None = None
        self.decode: Callable[[list[bytes | None], Sequence[Message]], Any]
        if decoding.converter is None:
            self.decode = self._binary
        elif decoding.output == "string" and _is_utf8(decoding):
            self.decode = self._utf8
        elif decoding.output == "struct" and _is_plain_json(decoding):
            self._converter = _converter(decoding)
            self.decode = self._arrow_json
        else:
            self._converter = _converter(decoding)
            self.decode = self._convert

    def decode_column(self, column: Any) -> Any:
        """A polled ``binary`` column as this side's Arrow array, or ``None`` when the
        decoding needs the per-message way (a converter, or text that is not UTF-8, whose
        error names the message).
        """
        pa = self._pa
        if self.decode == self._binary:
            return column
        if self.decode == self._utf8:
            try:
                return column.cast(pa.string())
            except pa.ArrowInvalid:
                return None
        return None

    def _binary(self, data: list[bytes | None], messages: Sequence[Message]) -> Any:
        return self._pa.array(data, self._pa.binary())

    def _utf8(self, data: list[bytes | None], messages: Sequence[Message]) -> Any:
        pa = self._pa
        try:
            return pa.array(data, pa.binary()).cast(pa.string())
        except pa.ArrowInvalid:
            for index, item in enumerate(data):
                if item is not None:
                    try:
                        item.decode("utf-8")
                    except UnicodeDecodeError as exc:
                        raise self._error(messages[index], f"is not UTF-8 text ({exc})") from None
            raise

    def _arrow_json(self, data: list[bytes | None], messages: Sequence[Message]) -> Any:
        """Plain JSON objects parsed by Arrow into the column's struct type."""
        import io

        import pyarrow.json as pa_json

        pa = self._pa
        nulls = [item is None for item in data]
        lines = [b"{}" if item is None else item for item in data]
        if any(b"\n" in line for line in lines):  # not one object per line: take the slow way
            return self._convert(data, messages)
        body = b"\n".join(lines)
        try:
            table = pa_json.read_json(
                io.BytesIO(body),
                read_options=pa_json.ReadOptions(block_size=max(len(body) + 1, 1 << 20)),
                parse_options=pa_json.ParseOptions(explicit_schema=pa.schema(list(self._type)),
                                                   unexpected_field_behavior="ignore"))
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            return self._convert(data, messages)  # it names the record that is wrong
        if table.num_rows != len(data):
            return self._convert(data, messages)
        columns = [column.combine_chunks() for column in table.columns]
        return pa.StructArray.from_arrays(columns, fields=list(self._type),
                                          mask=pa.array(nulls, pa.bool_()) if any(nulls)
                                          else None)

    def _convert(self, data: list[bytes | None], messages: Sequence[Message]) -> Any:
        assert self._converter is not None
        converted: list[Any] = []
        start = 0
        for topic, end in _topic_runs(messages):
            chunk = data[start:end]
            try:
                decoded = self._converter.to_connect_batch(topic, chunk)
            except DataError:
                decoded = [self._one(topic, item, messages[start + i])
                           for i, item in enumerate(chunk)]
            converted += [_plain(item.value) for item in decoded]
            start = end
        try:
            return self._pa.array(converted, self._type)
        except (self._pa.ArrowException, TypeError, ValueError, OverflowError):
            for index, item in enumerate(converted):
                try:
                    self._pa.array([item], self._type)
                except (self._pa.ArrowException, TypeError, ValueError, OverflowError) as exc:
                    raise self._error(messages[index], f"does not fit {self._side}.schema "
                                      f"{self._decoding.schema} ({exc})") from None
            raise

    def _one(self, topic: str, item: bytes | None, message: Message) -> Any:
        assert self._converter is not None
        try:
            return self._converter.to_connect(topic, item)
        except DataError as exc:
            raise self._error(message, f"cannot be decoded by {self._decoding.role}="
                              f"{self._decoding.converter} ({exc.message})") from None

    def _error(self, message: Message, problem: str) -> DataError:
        return DataError(f"the {self._side} of {message.topic}-{message.partition} at offset "
                         f"{message.offset} {problem}", topic=message.topic,
                         partition=message.partition, offset=message.offset,
                         key=f"{self._side}.converter")


def _is_plain_json(decoding: Decoding) -> bool:
    """Whether ``decoding`` reads JSON without the schema envelope."""
    if (decoding.converter or "").lower() not in ("json", "org.apache.kafka.connect.json."
                                                  "jsonconverter"):
        return False
    return str(decoding.options.get("schemas.enable", "true")).strip().lower() == "false"


def _is_utf8(decoding: Decoding) -> bool:
    encoding = str(decoding.options.get("converter.encoding") or "utf-8")
    return encoding.replace("-", "").replace("_", "").lower() in ("utf8",)


def _converter(decoding: Decoding) -> Converter:
    """The configured converter of ``decoding``, built as the runtime builds a task's."""
    role = decoding.role
    settings: dict[str, Any] = {"key.converter": "bytearray", "value.converter": "bytearray",
                                "header.converter": "simple", role: decoding.converter}
    settings.update({f"{role}.{k}": v for k, v in decoding.options.items()})
    converters = build_converters(settings, {})
    return converters.key if role == "key.converter" else converters.value


def _topic_runs(messages: Sequence[Message]) -> list[tuple[str, int]]:
    """(topic, end index) of each run of messages of one topic."""
    runs: list[tuple[str, int]] = []
    for index, message in enumerate(messages):
        if runs and runs[-1][0] == message.topic:
            runs[-1] = (message.topic, index + 1)
        else:
            runs.append((message.topic, index + 1))
    return runs


_SCALARS = (str, bytes, int, float, bool, decimal.Decimal, datetime.date, datetime.time,
            datetime.datetime, type(None))


def _plain(value: Any) -> Any:
    """``value`` as Arrow takes it: structs as dicts, recursively."""
    if isinstance(value, _SCALARS):
        return value
    if isinstance(value, Struct):
        return {name: _plain(item) for name, item in value.items()}
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    return value
