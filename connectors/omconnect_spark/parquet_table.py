"""The Parquet table the Spark sink writes: its layout, how a flush is written, and how a
restarted task finds what is already there.

Layout (Spark's partition directories, so ``spark.read.parquet(path)`` reads it whole)::

    <path>/topic=<topic>/partition=<n>/offsets=<first>-<last>/part-....parquet

``offsets`` holds the first and last offset of the records in that directory (20 digits
each, so directories sort by offset). Columns: ``key``, ``value``, ``timestamp``,
``offset``, ``headers`` (``array<struct<key: string, value: string>>``), plus the
directory columns ``topic``, ``partition`` and ``offsets``.

A flush is one Spark job with dynamic partition overwrite: tasks write into a staging
directory and the job's commit moves each ``offsets=`` directory into place (a rename),
so a directory is either complete or absent, and a flush retried with the same records
overwrites its directories instead of adding to them. A restarted task lists the
directories of its partitions and resumes after the highest ``last`` offset it finds
(:func:`written_ends`), so records already in the table are not written again even when
the consumer group's commit was lost.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any
from urllib.parse import unquote

from omconnect.records import SinkRecord, TopicPartition
from omconnect_spark.arrow_values import arrow_type_of, schemaless_values, to_arrow_value

__all__ = [
    "Segment",
    "batch_table",
    "merge_segments",
    "range_label",
    "records_table",
    "split_segments",
    "table_of",
    "write_segments",
    "written_ends",
]

TOPIC, PARTITION, OFFSETS = "topic", "partition", "offsets"
"""The directory (partition) columns."""

Segment = Sequence[SinkRecord]
"""Consecutive records of one partition whose keys and values share column types."""


def range_label(first: int, last: int) -> str:
    """The ``offsets`` directory value of records ``first`` to ``last`` (inclusive)."""
    return f"{first:020d}-{last:020d}"


def _parse_range(label: str) -> tuple[int, int] | None:
    first, sep, last = label.partition("-")
    if not (sep and first.isdigit() and last.isdigit()):
        return None
    return int(first), int(last)


def column_types(record: SinkRecord, *, binary: bool) -> tuple[Any, Any]:
    """The Arrow types of ``record``'s key and value columns."""
    import pyarrow as pa

    schemaless = pa.binary() if binary else pa.string()
    return (arrow_type_of(record.key_schema) if record.key_schema is not None else schemaless,
            arrow_type_of(record.value_schema) if record.value_schema is not None
            else schemaless)


def _side(values: list[Any], schemas: list[Any], arrow_type: Any, binary: bool) -> Any:
    import pyarrow as pa

    if all(schema is None for schema in schemas):
        return pa.array(schemaless_values(values, binary=binary), arrow_type)
    return pa.array([to_arrow_value(v, s) for v, s in zip(values, schemas, strict=True)],
                    arrow_type)


def _header_text(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, (bytes, bytearray)):
        try:
            return bytes(value).decode("utf-8")
        except UnicodeDecodeError:
            return base64.b64encode(bytes(value)).decode("ascii")
    return json.dumps(value, default=str, separators=(",", ":"))


def _header_type() -> Any:
    import pyarrow as pa

    return pa.list_(pa.struct([("key", pa.string()), ("value", pa.string())]))


def _timestamp_column(millis: Any) -> Any:
    import pyarrow as pa
    import pyarrow.compute as pc

    return pc.multiply(millis.cast(pa.int64()), 1000).cast(pa.timestamp("us", tz="UTC"))


def records_table(records: Segment, *, binary: bool) -> Any:
    """The rows of ``records`` (one segment: key and value types of its first record) as
    an Arrow table of the table's columns, without :data:`OFFSETS`.
    """
    import pyarrow as pa

    key_type, value_type = column_types(records[0], binary=binary)
    return pa.table({
        "key": _side([r.key for r in records], [r.key_schema for r in records], key_type,
                     binary),
        "value": _side([r.value for r in records], [r.value_schema for r in records],
                       value_type, binary),
        "timestamp": _timestamp_column(pa.array([r.timestamp for r in records], pa.int64())),
        "offset": pa.array([r.offset for r in records], pa.int64()),
        "headers": pa.array([[{"key": h.key, "value": _header_text(h.value)}
                              for h in r.headers] for r in records], _header_type()),
        TOPIC: pa.array([r.topic_partition.topic for r in records], pa.string()),
        PARTITION: pa.array([r.topic_partition.partition for r in records], pa.int32()),
    })


def _text_headers(wire: Any) -> Any:
    """Wire headers (``list<struct<key, value: binary>>``) as the table's text headers:
    values that are UTF-8 as text, others as base64 (as :func:`records_table` writes
    them); a row without headers gets an empty list.
    """
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    rows = len(wire)
    header_type = _header_type()
    if wire.null_count == rows:
        return pa.ListArray.from_arrays(pa.array(np.zeros(rows + 1, np.int32)),
                                        pa.array([], header_type.value_type))
    if isinstance(wire, pa.ChunkedArray):
        wire = wire.combine_chunks()
    offsets = wire.offsets  # no validity: a null list spans nothing, an empty list
    offsets = pc.subtract(offsets, offsets[0])  # a slice's offsets start past 0
    pairs = wire.flatten()
    values = pairs.field("value")
    try:
        texts = values.cast(pa.string())
    except pa.ArrowInvalid:  # some are not UTF-8: those go as base64, one by one
        texts = pa.array([_header_text(v) for v in values.to_pylist()], pa.string())
    return pa.ListArray.from_arrays(
        offsets, pa.StructArray.from_arrays([pairs.field("key").cast(pa.string()), texts],
                                            names=["key", "value"]))


def batch_table(batch: Any) -> Any:
    """The rows of a batch ``put_batch`` was given (the consumed columns, keys and values
    as the converters read them) as an Arrow table of the table's columns, without
    :data:`OFFSETS`. Keys and values keep the converters' Arrow types (``binary`` from the
    ByteArray converter, ``string`` from the String and JSON converters), no object per
    row.
    """
    import pyarrow as pa

    return pa.table({
        "key": batch.column("key"),
        "value": batch.column("value"),
        "timestamp": _timestamp_column(batch.column("timestamp")),
        "offset": batch.column("offset").cast(pa.int64()),
        "headers": _text_headers(batch.column("headers")),
        TOPIC: batch.column(TOPIC).cast(pa.string()),
        PARTITION: batch.column(PARTITION).cast(pa.int32()),
    })


def _signature(table: Any) -> tuple[str, str]:
    return str(table.schema.field("key").type), str(table.schema.field("value").type)


def merge_segments(tables: Sequence[Any]) -> list[Any]:
    """Tables of one partition's rows (in offset order) joined where consecutive ones share
    key and value types: each result is one segment, one ``offsets=`` directory.
    """
    import pyarrow as pa

    runs: list[list[Any]] = []
    for table in tables:
        if table.num_rows == 0:
            continue
        if runs and _signature(runs[-1][-1]) == _signature(table):
            runs[-1].append(table)
        else:
            runs.append([table])
    return [run[0] if len(run) == 1 else pa.concat_tables(run) for run in runs]


def _labelled(segment: Any) -> Any:
    """``segment`` with its :data:`OFFSETS` column (first and last offset)."""
    import pyarrow as pa

    offsets = segment.column("offset")
    label = range_label(offsets[0].as_py(), offsets[-1].as_py())
    return segment.append_column(OFFSETS, pa.repeat(pa.scalar(label, pa.string()),
                                                    segment.num_rows))


def table_of(segments: Sequence[Segment], key_type: Any, value_type: Any, *,
             binary: bool) -> Any:
    """One Arrow table of ``segments`` (all of the given key and value types), with the
    :data:`OFFSETS` column.
    """
    import pyarrow as pa

    tables = []
    for segment in segments:
        table = records_table(segment, binary=binary)
        tables.append(_labelled(table.cast(table.schema.set(
            0, pa.field("key", key_type)).set(1, pa.field("value", value_type)))))
    return pa.concat_tables(tables)


def split_segments(records: Sequence[SinkRecord], *, binary: bool) -> list[Segment]:
    """``records`` (of one partition, in offset order) cut where the column types change."""
    segments: list[Segment] = []
    previous: tuple[str, str] | None = None
    for record in records:
        signature = tuple(str(t) for t in column_types(record, binary=binary))
        if signature != previous:
            segments.append([])
            previous = signature  # type: ignore[assignment]
        segments[-1].append(record)  # type: ignore[attr-defined]
    return segments


def write_segments(spark: Any, path: str, per_partition: Mapping[TopicPartition, Sequence[Any]]
                   ) -> None:
    """Write each partition's segments (Arrow tables of :func:`merge_segments`) into the
    table, in rounds: every partition's first segment, then every second one, ...; within
    a round one Spark job per combination of key and value types. So a partition's
    segments land in offset order, and after a crash the table holds a prefix of each
    partition's records.
    """
    import pyarrow as pa

    rounds = max((len(segments) for segments in per_partition.values()), default=0)
    for index in range(rounds):
        groups: dict[tuple[str, str], list[Any]] = {}
        for segments in per_partition.values():
            if index < len(segments):
                segment = segments[index]
                groups.setdefault(_signature(segment), []).append(_labelled(segment))
        for members in groups.values():
            table = members[0] if len(members) == 1 else pa.concat_tables(members)
            frame = spark.createDataFrame(table)
            (frame.write.mode("overwrite").option("partitionOverwriteMode", "dynamic")
             .partitionBy(TOPIC, PARTITION, OFFSETS).parquet(path))


def written_ends(spark: Any, path: str,
                 partitions: Iterable[TopicPartition]) -> dict[TopicPartition, int]:
    """For each of ``partitions`` with data in the table: the offset after the last record
    written. Lists directories through Spark's Hadoop filesystem (any URL Spark writes to).
    """
    wanted = set(partitions)
    jvm = spark.sparkContext._jvm
    root = jvm.org.apache.hadoop.fs.Path(path)
    fs = root.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration())
    ends: dict[TopicPartition, int] = {}
    if not fs.exists(root):
        return ends

    def children(directory: Any, prefix: str) -> list[tuple[str, Any]]:
        found = []
        for status in fs.listStatus(directory):
            name = status.getPath().getName()
            if status.isDirectory() and name.startswith(prefix):
                found.append((unquote(name[len(prefix):]), status.getPath()))
        return found

    topics = {tp.topic for tp in wanted}
    for topic, topic_dir in children(root, f"{TOPIC}="):
        if topic not in topics:
            continue
        for number, partition_dir in children(topic_dir, f"{PARTITION}="):
            if not number.isdigit() or TopicPartition(topic, int(number)) not in wanted:
                continue
            tp = TopicPartition(topic, int(number))
            for label, _ in children(partition_dir, f"{OFFSETS}="):
                bounds = _parse_range(label)
                if bounds is not None:
                    ends[tp] = max(ends.get(tp, 0), bounds[1] + 1)
    return ends
