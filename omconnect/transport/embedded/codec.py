"""How records are stored: consecutive records of a partition packed into one chunk.

Like Kafka's record batches, one ``log`` row holds a run of consecutive records of one
partition, so SQLite works per chunk, not per record, and the per-record work is a few
slices in Python. A chunk is (all integers little-endian)::

    u8   version (1)
    u8   flags: bit 0 set when any record has headers
    u32  count
    i32  key length      x count   (-1 for a None key)
    i32  value length    x count   (-1 for a None value)
    i64  timestamp (ms)  x count
    i32  headers length  x count   (only with flag bit 0; -1 for no headers)
    keys, then values, then headers, each concatenated in record order

Headers of one record are: per header, the key's UTF-8 length (u32), the key, the value's
length (i32, -1 for ``None``), the value.
"""

from __future__ import annotations

import operator
import struct
from array import array
from collections.abc import Sequence
from itertools import accumulate, repeat

from omconnect.errors import TransportError
from omconnect.transport.messages import Message, WireHeaders, build_message

__all__ = ["CHUNK_BYTES", "CHUNK_RECORDS", "decode_chunk", "encode_chunks"]

CHUNK_BYTES = 1 << 20
"""Payload bytes beyond which a partition's records start a new chunk."""

CHUNK_RECORDS = 4096
"""Most records in one chunk."""

_VERSION = 1
_HAS_HEADERS = 1
_KEY = operator.attrgetter("key")
_VALUE = operator.attrgetter("value")
_HEADERS = operator.attrgetter("headers")
_PREFIX = struct.Struct("<BBI")
_U32 = struct.Struct("<I")
_I32 = struct.Struct("<i")

if array("i").itemsize != 4 or array("q").itemsize != 8:  # pragma: no cover - exotic ABI
    raise ImportError("the embedded transport needs 4-byte 'i' and 8-byte 'q' arrays")


def encode_chunks(
    messages: Sequence[Message], timestamps: Sequence[int]
) -> list[tuple[int, bytes]]:
    """``messages`` of one partition (with their ``timestamps``) packed into chunks of at
    most :data:`CHUNK_RECORDS` records and, unless a single record is bigger, about
    :data:`CHUNK_BYTES` of keys and values.

    Returns:
        (record count, stored form) of each chunk, in order.

    """
    keys = list(map(_KEY, messages))
    values = list(map(_VALUE, messages))
    key_lengths = _field_lengths(keys)
    value_lengths = _field_lengths(values)
    headers: list[bytes | None] | None = None
    header_lengths: list[int] = []
    if any(map(_HEADERS, messages)):
        headers = [encode_headers(h) for h in map(_HEADERS, messages)]
        header_lengths = _field_lengths(headers)
    count = len(messages)
    if count <= CHUNK_RECORDS and sum(key_lengths) + sum(value_lengths) <= CHUNK_BYTES:
        bounds = [(0, count)]
    else:
        bounds = _chunk_bounds(key_lengths, value_lengths)
    chunks = []
    for start, stop in bounds:
        whole = start == 0 and stop == count
        parts = [
            _PREFIX.pack(_VERSION, _HAS_HEADERS if headers else 0, stop - start),
            array("i", key_lengths if whole else key_lengths[start:stop]).tobytes(),
            array("i", value_lengths if whole else value_lengths[start:stop]).tobytes(),
            array("q", timestamps if whole else timestamps[start:stop]).tobytes(),
        ]
        if headers:
            parts.append(array("i", header_lengths[start:stop]).tobytes())
        parts.append(b"".join(filter(None, keys if whole else keys[start:stop])))
        parts.append(b"".join(filter(None, values if whole else values[start:stop])))
        if headers:
            parts.append(b"".join(filter(None, headers[start:stop])))
        chunks.append((stop - start, b"".join(parts)))
    return chunks


def _field_lengths(fields: list[bytes | None]) -> list[int]:
    """The length of each field, -1 for ``None``."""
    if all(fields):  # at C speed: no None (nor empty field) among them
        return list(map(len, fields))  # type: ignore[arg-type]
    return [-1 if f is None else len(f) for f in fields]


def _chunk_bounds(key_lengths: list[int], value_lengths: list[int]) -> list[tuple[int, int]]:
    """(start, stop) of each chunk, cutting at :data:`CHUNK_RECORDS` records or before
    the record that would take a chunk past :data:`CHUNK_BYTES`.
    """
    bounds = []
    start = 0
    size = 0
    for index, (key, value) in enumerate(zip(key_lengths, value_lengths, strict=True)):
        record = max(key, 0) + max(value, 0)
        if index > start and (size + record > CHUNK_BYTES or index - start >= CHUNK_RECORDS):
            bounds.append((start, index))
            start, size = index, 0
        size += record
    bounds.append((start, len(key_lengths)))
    return bounds


def _lengths(data: bytes, position: int, count: int, code: str) -> tuple[array[int], int]:
    size = 4 if code == "i" else 8
    values = array(code)
    values.frombytes(data[position:position + size * count])
    if len(values) != count:
        raise ValueError(f"{count} lengths expected, {len(values)} stored")
    return values, position + size * count


def _slices(
    data: bytes, lengths: array[int], position: int, first: int, stop: int
) -> tuple[list[bytes | None], int]:
    """Fields ``first``..``stop`` of a run of fields starting at ``position``, and where
    the run ends.
    """
    if min(lengths, default=0) >= 0:
        ends = list(accumulate(lengths, initial=position))
        fields: list[bytes | None] = [
            data[a:b] for a, b in zip(ends[first:stop], ends[first + 1:stop + 1], strict=True)]
        return fields, ends[-1]
    fields = []
    for index, length in enumerate(lengths):
        if index >= stop:
            position += max(length, 0)
            continue
        if length < 0:
            field = None
        else:
            field = data[position:position + length]
            position += length
        if index >= first:
            fields.append(field)
    return fields, position


def decode_chunk(
    data: bytes,
    *,
    topic: str,
    partition: int,
    base_offset: int,
    first: int = 0,
    limit: int | None = None,
) -> list[Message]:
    """Messages ``first`` to ``first + limit`` of a chunk whose first record has offset
    ``base_offset``.

    Raises:
        TransportError: The chunk is not in a known format (a damaged database).

    """
    try:
        version, flags, count = _PREFIX.unpack_from(data, 0)
        if version != _VERSION:
            raise TransportError(f"embedded transport: stored records have unknown format "
                                 f"version {version}", topic=topic, partition=partition)
        stop = count if limit is None else min(count, first + limit)
        if first >= stop:
            return []
        key_lengths, position = _lengths(data, _PREFIX.size, count, "i")
        value_lengths, position = _lengths(data, position, count, "i")
        timestamps, position = _lengths(data, position, count, "q")
        header_lengths = None
        if flags & _HAS_HEADERS:
            header_lengths, position = _lengths(data, position, count, "i")
        keys, position = _slices(data, key_lengths, position, first, stop)
        values, position = _slices(data, value_lengths, position, first, stop)
        headers: list[WireHeaders]
        if header_lengths is None:
            headers = [()] * (stop - first)
        else:
            raw, position = _slices(data, header_lengths, position, first, stop)
            headers = [decode_headers(h) for h in raw]
    except (struct.error, ValueError, IndexError) as exc:
        raise TransportError(f"embedded transport: stored records are damaged: {exc}",
                             topic=topic, partition=partition, offset=base_offset) from exc
    # build_message: every field is already of its final type (bytes, tuple, int)
    return list(map(build_message, repeat(topic), keys, values, headers,
                    timestamps[first:stop], repeat(partition),
                    range(base_offset + first, base_offset + stop)))


def encode_headers(headers: WireHeaders) -> bytes | None:
    """The stored form of one record's ``headers`` (``None`` when there are none)."""
    if not headers:
        return None
    parts = []
    for key, value in headers:
        raw_key = key.encode()
        parts.append(_U32.pack(len(raw_key)))
        parts.append(raw_key)
        if value is None:
            parts.append(_I32.pack(-1))
        else:
            parts.append(_I32.pack(len(value)))
            parts.append(bytes(value))
    return b"".join(parts)


def decode_headers(blob: bytes | None) -> WireHeaders:
    """One record's headers from their stored form."""
    if not blob:
        return ()
    headers: list[tuple[str, bytes | None]] = []
    position = 0
    end = len(blob)
    while position < end:
        (key_length,) = _U32.unpack_from(blob, position)
        position += 4
        key = blob[position:position + key_length].decode()
        position += key_length
        (value_length,) = _I32.unpack_from(blob, position)
        position += 4
        if value_length < 0:
            headers.append((key, None))
        else:
            headers.append((key, blob[position:position + value_length]))
            position += value_length
    return tuple(headers)
