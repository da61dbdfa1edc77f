"""Writing a DataFrame to a transport: ``df.write`` / ``df.writeStream.format("omconnect")``.

Columns, as Spark's Kafka sink takes them: ``value`` (binary or string, required),
``key`` (binary or string), ``topic`` (string; else the ``topic`` option), ``partition``
(integer; else the transport picks one from the key), ``headers``
(``array<struct<key: string, value: binary or string>>``) and ``timestamp``. Any other
column is refused (select the columns to write).

Each Spark task sends its rows in batches of ``sendBatchSize`` through one producer and
waits for every acknowledgement before it reports success, so a batch Spark commits is
stored in the transport as durably as the transport promises.

Idempotence (streaming, ``idempotentWrites=true``, the default): Spark may run a write
task again (a retried task) or a whole micro-batch again (a query restarted after a crash
between the sink's commit and Spark's commit log). Markers in the transport's key/value
store skip work already done:

* a task, once all its messages are acknowledged, stores ``<query id>/<batch id>/<task
  partition>``; a later attempt of the same (query, batch, partition) finds it and sends
  nothing;
* the driver's commit of a batch stores ``<query id>/<batch id>``; a replay of that batch
  sends nothing at all (markers of the last 100 batches are kept).

The remaining duplicate window, exactly: a task that fails (or whose executor dies) after
some of its messages were acknowledged and before its marker is stored is run again in
full, so those acknowledged messages are sent twice. Skipping a partition on replay
assumes the replayed batch puts the same rows in the same task partition, which holds for
this adapter's own source and for Spark's Kafka and file sources (the batch's offsets are
fixed in the checkpoint) and for hash partitioning; a plan with non-deterministic
partitioning should set ``idempotentWrites=false`` (then a replayed batch is written again:
at-least-once). Batch writes (``df.write``) have no query or batch id: a retried task sends
its rows again.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator, Sequence
from concurrent.futures import Future
from typing import Any

from omconnect.errors import DataError
from omconnect.records import RecordMetadata
from omconnect.transport.messages import Message
from omconnect.transport.spi import KeyValueStore
from omconnect_spark._pyspark import (
    DataSourceArrowWriter,
    DataSourceStreamArrowWriter,
    WriterCommitMessage,
)
from omconnect_spark.options import WriteOptions
from omconnect_spark.retry import retrying

__all__ = [
    "OmconnectBatchWriter",
    "OmconnectStreamWriter",
    "WriteCommitMessage",
    "WriteMarkers",
    "check_write_schema",
    "messages_of",
]

_log = logging.getLogger(__name__)

MARKERS_KEPT = 100
"""Batch markers kept per query; Spark only ever replays its last batch."""

_MAX_IN_FLIGHT = 16
"""Sends awaiting acknowledgement before a task waits for the oldest."""


def check_write_schema(schema: Any, options: WriteOptions) -> None:
    """Refuse a DataFrame the sink cannot write, before any task runs.

    Args:
        schema: The DataFrame's StructType.
        options: The write options.

    Raises:
        DataError: A column is missing, unknown or of the wrong type (naming it and the
            fix).

    """
    from pyspark.sql import types as T

    def text_or_binary(t: Any) -> bool:
        return isinstance(t, (T.StringType, T.BinaryType))

    checks: dict[str, tuple[Any, str]] = {
        "value": (text_or_binary, "binary or string"),
        "key": (text_or_binary, "binary or string"),
        "topic": (lambda t: isinstance(t, T.StringType), "string"),
        "partition": (lambda t: isinstance(t, (T.IntegerType, T.LongType, T.ShortType)),
                      "an integer"),
        "timestamp": (lambda t: isinstance(t, (T.TimestampType, T.TimestampNTZType)),
                      "a timestamp"),
        "headers": (lambda t: isinstance(t, T.ArrayType)
                    and isinstance(t.elementType, T.StructType)
                    and t.elementType.fieldNames() == ["key", "value"]
                    and isinstance(t.elementType["key"].dataType, T.StringType)
                    and text_or_binary(t.elementType["value"].dataType),
                    "array<struct<key: string, value: binary>>"),
    }
    names = schema.fieldNames()
    unknown = [name for name in names if name not in checks]
    if unknown:
        raise DataError(f"the omconnect sink writes the columns {list(checks)}; the "
                        f"DataFrame also has {unknown}: select only the columns to write "
                        "(e.g. to_json(struct(*)) AS value)", key=unknown[0])
    if "value" not in names:
        raise DataError("the DataFrame has no value column; the omconnect sink needs one "
                        "(binary or string)", key="value")
    for field in schema.fields:
        accepts, wanted = checks[field.name]
        if not accepts(field.dataType):
            raise DataError(f"column {field.name} is {field.dataType.simpleString()}, but the "
                            f"omconnect sink needs {wanted}; cast it", key=field.name)
    if "topic" not in names and not options.topic:
        raise DataError("no topic: add a topic column or set the topic option, e.g. "
                        ".option('topic', 'orders')", key="topic")


def messages_of(batch: Any, default_topic: str | None) -> list[Message]:
    """The messages of one Arrow record batch of the sink's columns.

    Raises:
        DataError: A row has no topic (null topic and no ``topic`` option).

    """
    n = batch.num_rows
    names = batch.schema.names

    def column(name: str) -> Any:
        return batch.column(names.index(name)) if name in names else None

    values = _bytes(column("value"))
    key_column = column("key")
    keys = _bytes(key_column) if key_column is not None else [None] * n
    topic_column = column("topic")
    if topic_column is None:
        topics: list[Any] = [default_topic] * n
    else:
        topics = topic_column.to_pylist()
        if topic_column.null_count:
            if default_topic is None:
                row = topics.index(None)
                raise DataError(f"row {row} of the batch has a null topic and no topic "
                                "option is set; set .option('topic', ...) or fill the column",
                                key="topic")
            topics = [topic if topic is not None else default_topic for topic in topics]
    partition_column = column("partition")
    partitions = partition_column.to_pylist() if partition_column is not None else [None] * n
    stamp_column = column("timestamp")
    if stamp_column is not None:
        import pyarrow as pa

        micros = stamp_column.cast(pa.timestamp("us")).cast(pa.int64()).to_pylist()
        stamps = [m // 1000 if m is not None else None for m in micros]
    else:
        stamps = [None] * n
    header_column = column("headers")
    headers: list[Any] = ([_headers(row) for row in header_column.to_pylist()]
                          if header_column is not None else [()] * n)
    return [Message(topic, key, value, header, stamp, partition)
            for topic, key, value, header, stamp, partition
            in zip(topics, keys, values, headers, stamps, partitions, strict=True)]


def _bytes(column: Any) -> list[bytes | None]:
    import pyarrow as pa

    if pa.types.is_string(column.type) or pa.types.is_large_string(column.type):
        column = column.cast(pa.binary())
    return column.to_pylist()  # type: ignore[no-any-return]


def _headers(row: list[dict[str, Any]] | None) -> tuple[tuple[str, bytes | None], ...]:
    if not row:
        return ()
    return tuple((item["key"], item["value"].encode("utf-8")
                  if isinstance(item["value"], str) else item["value"]) for item in row)


class WriteCommitMessage(WriterCommitMessage):
    """What a write task reports to the driver.

    Attributes:
        partition_id: The Spark task partition.
        records: Messages sent and acknowledged.
        skipped: True when a marker showed the work was done before.
        query_id: The streaming query's id (``None`` for batch writes).
        batch_id: The micro-batch id (``None`` for batch writes).

    """

    def __init__(self, *, partition_id: int, records: int, skipped: bool,
                 query_id: str | None = None, batch_id: int | None = None) -> None:
        self.partition_id = partition_id
        self.records = records
        self.skipped = skipped
        self.query_id = query_id
        self.batch_id = batch_id


class WriteMarkers:
    """Idempotent-write markers of one streaming query, in a key/value store.

    Args:
        store: The transport's key/value store (namespace ``writeMarkersNamespace``).
        query_id: The streaming query's id (stable across restarts).

    """

    def __init__(self, store: KeyValueStore, query_id: str) -> None:
        self._store = store
        self._query = query_id

    def done(self, batch_id: int, partition_id: int) -> bool:
        """Whether the batch, or this task partition of it, was written before."""
        return (self._store.get(f"{self._query}/{batch_id}") is not None
                or self._store.get(f"{self._query}/{batch_id}/{partition_id}") is not None)

    def mark_partition(self, batch_id: int, partition_id: int, records: int) -> None:
        """Record that the task partition's messages were all acknowledged."""
        self._store.put(f"{self._query}/{batch_id}/{partition_id}",
                        json.dumps({"records": records}).encode())

    def mark_batch(self, batch_id: int, partition_ids: Sequence[int]) -> None:
        """Record that the batch is committed; drop its task markers and old batches'."""
        changes: dict[str, bytes | None] = {f"{self._query}/{batch_id}": b"{}"}
        changes.update({f"{self._query}/{batch_id}/{pid}": None for pid in partition_ids})
        if batch_id >= MARKERS_KEPT:
            changes[f"{self._query}/{batch_id - MARKERS_KEPT}"] = None
        self._store.put_many(changes)


def _task_context() -> Any:
    from pyspark import TaskContext

    return TaskContext.get()


def send_all(options: WriteOptions, batches: Iterator[Any], markers: tuple[str, int] | None,
             partition_id: int) -> WriteCommitMessage:
    """Send every row of ``batches`` and wait for the acknowledgements.

    Args:
        options: The write options.
        batches: The task's Arrow record batches.
        markers: (query id, batch id) for an idempotent streaming write, else ``None``.
        partition_id: The task partition.

    Raises:
        SendError: A message was not acknowledged (the task fails; Spark retries it).

    """
    transport = options.transport.open()
    timeout = options.retry_timeout_ms
    try:
        store = marks = None
        if markers is not None:
            store = retrying(lambda: transport.kv_store(options.markers_namespace),
                             what="opening the markers store", timeout_ms=timeout)
            marks = WriteMarkers(store, markers[0])
            done = marks
            if retrying(lambda: done.done(markers[1], partition_id), what="reading markers",
                        timeout_ms=timeout):
                skipped = sum(batch.num_rows for batch in batches)
                _log.info("batch %s partition %s of query %s was written before; skipping "
                          "%d rows", markers[1], partition_id, markers[0], skipped)
                return WriteCommitMessage(partition_id=partition_id, records=0, skipped=True,
                                          query_id=markers[0], batch_id=markers[1])
        producer = retrying(transport.producer, what="opening a producer", timeout_ms=timeout)
        sent = 0
        try:
            pending: list[Future[list[RecordMetadata]]] = []
            for batch in batches:
                messages = messages_of(batch, options.topic)
                for start in range(0, len(messages), options.send_batch_size):
                    pending.append(producer.send(messages[start:start + options.send_batch_size]))
                    if len(pending) > _MAX_IN_FLIGHT:
                        sent += len(pending.pop(0).result())
            for future in pending:
                sent += len(future.result())
        finally:
            producer.close()
        if marks is not None and markers is not None:
            mark = marks
            retrying(lambda: mark.mark_partition(markers[1], partition_id, sent),
                     what="storing the task's marker", timeout_ms=timeout)
        return WriteCommitMessage(partition_id=partition_id, records=sent, skipped=False,
                                  query_id=markers[0] if markers else None,
                                  batch_id=markers[1] if markers else None)
    finally:
        if store is not None:
            store.close()
        transport.close()


class OmconnectBatchWriter(DataSourceArrowWriter):
    """``df.write.format("omconnect")``: each task sends its rows and waits for the acks.

    Args:
        options: The parsed write options.

    """

    def __init__(self, options: WriteOptions) -> None:
        self._options = options

    def write(self, iterator: Iterator[Any]) -> WriteCommitMessage:
        """Send the task's rows (on an executor)."""
        context = _task_context()
        partition_id = context.partitionId() if context is not None else 0
        return send_all(self._options, iterator, None, partition_id)


class OmconnectStreamWriter(DataSourceStreamArrowWriter):
    """``df.writeStream.format("omconnect")``: idempotent per (query, batch, partition)
    when ``idempotentWrites`` is on (see the module docs for the remaining window).

    Args:
        options: The parsed write options.

    """

    def __init__(self, options: WriteOptions) -> None:
        self._options = options

    def write(self, iterator: Iterator[Any]) -> WriteCommitMessage:
        """Send the task's rows unless a marker shows they were sent (on an executor)."""
        context = _task_context()
        partition_id = context.partitionId() if context is not None else 0
        markers = None
        if self._options.idempotent_writes and context is not None:
            query = context.getLocalProperty("sql.streaming.queryId")
            batch = context.getLocalProperty("streaming.sql.batchId")
            if query and batch is not None:
                markers = (str(query), int(batch))
        return send_all(self._options, iterator, markers, partition_id)

    def commit(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        """Store the batch's marker (so a replay of it sends nothing), on the driver."""
        done = [m for m in messages
                if isinstance(m, WriteCommitMessage) and m.query_id is not None]
        if not done:
            return
        transport = self._options.transport.open()
        try:
            timeout = self._options.retry_timeout_ms
            store = retrying(lambda: transport.kv_store(self._options.markers_namespace),
                             what="opening the markers store", timeout_ms=timeout)
            try:
                marks = WriteMarkers(store, str(done[0].query_id))
                retrying(lambda: marks.mark_batch(batchId, [m.partition_id for m in done]),
                         what="storing the batch's marker", timeout_ms=timeout)
            finally:
                store.close()
        finally:
            transport.close()

    def abort(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        """A task failed: what was acknowledged stays in the transport (see the window)."""
        sent = sum(m.records for m in messages if isinstance(m, WriteCommitMessage))
        _log.warning("micro-batch %d failed after %d messages were acknowledged; Spark runs "
                     "it again", batchId, sent)
