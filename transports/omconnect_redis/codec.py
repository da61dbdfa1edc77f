"""How a record is written into a stream entry and read back.

An entry's id is ``<offset>-0``; its fields, in this order:

* ``ts``: the timestamp, milliseconds since the epoch, in decimal (always there: an
  entry needs a field);
* ``key``: the key bytes; absent for a ``None`` key (an empty key is an empty field);
* ``value``: the value bytes, untouched, so other Redis clients read it as it is;
  absent for a ``None`` value (a tombstone);
* ``headers``: the headers, ordered and with repeated keys, in the embedded transport's
  binary form (per header the key's UTF-8 length, the key, the value's length or -1 for
  ``None``, the value); absent when there are none.

Writing, records become the argument list of :data:`~omconnect_redis.scripts.APPEND`
(a shape number saying which fields follow, then the fields), from messages or straight
from Arrow columns. Reading, the raw ``XRANGE`` reply (a list of ``[id, [field, value,
...]]``) becomes messages or, for ``poll_batch``, the consumed batch's columns, with no
message per record.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import chain, repeat
from typing import Any

from omconnect.errors import TransportError
from omconnect.transport.embedded.codec import decode_headers, encode_headers
from omconnect.transport.messages import Message, WireHeaders, build_message

__all__ = ["column_args", "decode_entries", "entry_columns", "entry_offset", "message_args"]

_KEY_AND_VALUE = b"3"
_VALUE_ONLY = b"2"
_TS, _KEY, _VALUE, _HEADERS = b"ts", b"key", b"value", b"headers"


def _shaped(out: list[Any], key: bytes | None, value: bytes | None, stamp: int,
            headers: bytes | None) -> None:
    """Append one record's shape and fields to ``out``."""
    shape = (key is not None) + 2 * (value is not None) + 4 * (headers is not None)
    out.append(str(shape).encode())
    out.append(stamp)
    if key is not None:
        out.append(key)
    if value is not None:
        out.append(value)
    if headers is not None:
        out.append(headers)


def message_args(messages: Sequence[Message], timestamps: Sequence[int], out: list[Any]
                 ) -> None:
    """Append the records of ``messages`` (with their ``timestamps``) to ``out``."""
    for message, stamp in zip(messages, timestamps, strict=True):
        key, value = message.key, message.value
        if message.headers:
            _shaped(out, key, value, stamp, encode_headers(message.headers))
        elif key is not None and value is not None:
            out += (_KEY_AND_VALUE, stamp, key, value)
        else:
            _shaped(out, key, value, stamp, None)


def column_args(columns: Any, out: list[Any]) -> None:
    """Append the rows of an Arrow batch (``key``, ``value``, ``timestamp`` and maybe
    ``headers``, as :class:`~omconnect.transport.kit.log_store.LogRun` holds them) to
    ``out``, taking each column whole.
    """
    keys = columns.column("key")
    values = columns.column("value")
    stamps = columns.column("timestamp").to_pylist()
    headers = (columns.column("headers") if "headers" in columns.schema.names else None)
    if headers is not None and headers.null_count == len(headers):
        headers = None
    if headers is None and not keys.null_count and not values.null_count:
        out += chain.from_iterable(zip(repeat(_KEY_AND_VALUE), stamps, keys.to_pylist(),
                                       values.to_pylist()))
        return
    if headers is None and keys.null_count == len(keys) and not values.null_count:
        out += chain.from_iterable(zip(repeat(_VALUE_ONLY), stamps, values.to_pylist()))
        return
    pairs = headers.to_pylist() if headers is not None else repeat(None)
    for key, value, stamp, row in zip(keys.to_pylist(), values.to_pylist(), stamps, pairs,
                                      strict=False):
        blob = encode_headers(tuple((h["key"], h["value"]) for h in row)) if row else None
        _shaped(out, key, value, stamp, blob)


def entry_offset(entry_id: bytes) -> int:
    """The offset of a stream entry id (``<offset>-0``)."""
    return int(entry_id.partition(b"-")[0])


def _fields(fields: list[bytes]) -> tuple[bytes | None, bytes | None, int | None,
                                          WireHeaders]:
    """(key, value, timestamp, headers) of an entry's field list."""
    count = len(fields)
    if count == 6 and fields[0] == _TS and fields[2] == _KEY and fields[4] == _VALUE:
        return fields[3], fields[5], int(fields[1]), ()
    if count == 4 and fields[0] == _TS and fields[2] == _VALUE:
        return None, fields[3], int(fields[1]), ()
    key = value = stamp = None
    headers: WireHeaders = ()
    for index in range(0, len(fields) - 1, 2):
        name, field = fields[index], fields[index + 1]
        if name == _VALUE:
            value = field
        elif name == _KEY:
            key = field
        elif name == _TS:
            stamp = int(field)
        elif name == _HEADERS:
            headers = decode_headers(field)
    return key, value, stamp, headers


def decode_entries(topic: str, partition: int, entries: list[Any]) -> list[Message]:
    """The messages of a raw ``XRANGE`` reply.

    Raises:
        TransportError: An entry is not one this transport wrote (its id or fields do
            not parse).

    """
    try:
        return [build_message(topic, *_key_value(fields), partition, entry_offset(entry_id))
                for entry_id, fields in entries]
    except (ValueError, IndexError, UnicodeDecodeError) as exc:
        raise TransportError(f"redis: an entry of topic {topic!r} partition {partition} "
                             f"is not a record of this transport: {exc}", topic=topic,
                             partition=partition) from exc


def _key_value(fields: list[bytes]) -> tuple[bytes | None, bytes | None, WireHeaders,
                                             int | None]:
    key, value, stamp, headers = _fields(fields)
    return key, value, headers, stamp


def _offsets(ids: Sequence[bytes]) -> Any:
    """The offsets of a range read's entry ids: ``first..last`` at once when they are
    dense (no entry deleted by hand in between), else one by one.
    """
    first, last = entry_offset(ids[0]), entry_offset(ids[-1])
    if last - first + 1 == len(ids):
        return range(first, last + 1)
    return list(map(entry_offset, ids))


def _key_value_columns(field_lists: Sequence[list[bytes]]
                       ) -> tuple[list[Any], list[Any], list[int | None], list[WireHeaders]
                                  ] | None:
    """Keys, values and timestamps of entries that all have the same plain shape (key and
    value, or value only; no headers), column by column; ``None`` otherwise.
    """
    keys: list[bytes | None]
    if all(len(f) == 6 and f[2] == _KEY and f[4] == _VALUE for f in field_lists):
        keys = [f[3] for f in field_lists]
        values = [f[5] for f in field_lists]
    elif all(len(f) == 4 and f[2] == _VALUE for f in field_lists):
        keys = [None] * len(field_lists)
        values = [f[3] for f in field_lists]
    else:
        return None
    if not all(f[0] == _TS for f in field_lists):
        return None
    return keys, values, [int(f[1]) for f in field_lists], []


def entry_columns(topic: str, partition: int, entries: list[Any]) -> Any:
    """The consumed Arrow batch of a raw ``XRANGE`` reply, column by column.

    Raises:
        TransportError: An entry is not one this transport wrote.

    """
    import pyarrow as pa

    from omconnect.columnar.columns import WIRE_HEADERS_TYPE, consumed_schema

    try:
        ids = [entry[0] for entry in entries]
        field_lists = [entry[1] for entry in entries]
        columns = _key_value_columns(field_lists)
        if columns is None:
            keys, values, stamps, headers = map(list, zip(*map(_fields, field_lists),
                                                          strict=True))
            columns = keys, values, stamps, headers
        offsets = _offsets(ids)
    except (ValueError, IndexError, UnicodeDecodeError) as exc:
        raise TransportError(f"redis: an entry of topic {topic!r} partition {partition} "
                             f"is not a record of this transport: {exc}", topic=topic,
                             partition=partition) from exc
    keys, values, stamps, headers = columns
    count = len(ids)
    header_column = (pa.array([list(h) if h else None for h in headers], WIRE_HEADERS_TYPE)
                     if any(headers) else pa.nulls(count, WIRE_HEADERS_TYPE))
    return pa.RecordBatch.from_arrays([
        pa.repeat(pa.scalar(topic, pa.string()), count),
        pa.repeat(pa.scalar(partition, pa.int32()), count),
        pa.array(offsets, pa.int64()),
        pa.array(stamps, pa.int64()),
        pa.array(keys, pa.binary()),
        pa.array(values, pa.binary()),
        header_column,
    ], schema=consumed_schema())
