"""SparkParquetSink: the standalone runtime writes micro-batches to a Parquet table through
a SparkSession (entry point ``spark-parquet``).

Each task buffers what ``put`` (records) or ``put_batch`` (Arrow batches, on the
runtime's columnar path: no object per record) gives it; at every commit
(``offset.flush.interval.ms``, or sooner once ``flush.max.records`` are buffered) ``flush``
writes the buffer as one Spark job into the table at ``path`` (layout in
:mod:`omconnect_spark.parquet_table`) and only after that job committed does the runtime
commit the consumed positions.

Exactly-once into the table: every flush writes directories named by partition and offset
range (``topic=orders/partition=0/offsets=<first>-<last>``), moved into place at the job's
commit; when a task is given a partition it lists those directories, seeks the consumer
past the last offset written and drops any record at or below it. So a crash anywhere
(before the Spark job, during it, between its commit and the runtime's offset commit)
neither loses a record nor writes one twice. What this relies on: the table is written
only by this connector, and the filesystem renames directories atomically (local and
HDFS do; object stores such as S3 do not: there a crash during a job's commit can leave a
partial directory, which the next flush of the same range overwrites only if it covers
the same offsets).

Config:
    * ``path`` (required): the table's root directory or URL (anything Spark writes to).
    * ``spark.master`` (``local[2]``), ``spark.app.name``; any other ``spark.*`` key is
      passed to the SparkSession builder (e.g. ``spark.sql.parquet.compression.codec``).
    * ``flush.max.records`` (50000): buffered records that trigger an early commit; at
      twice as many, ``put`` pushes back (RetriableError) until a flush has written.
    * ``schemaless.column.type`` (``string``): column type of keys and values that have no
      schema: ``string`` or ``binary`` (see :mod:`omconnect_spark.arrow_values`).

Column types: a record's key and value columns follow its schemas
(:mod:`omconnect_spark.arrow_values`); a batch's are the Arrow types the converters read
(``binary`` from the ByteArray converter, ``string`` from the String converter and from
JSON strings). Both give the same types for the same converter, except JSON without
schemas with ``schemaless.column.type=binary``: its batches keep ``string``. Rows whose
types change start a new ``offsets=`` directory, as a schema change does.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping, Sequence
from typing import Any

from omconnect import __version__
from omconnect.config import ConfigDef, ConfigType, Importance, NonEmptyString, OneOf, Range
from omconnect.connector import SinkConnector, SinkTask
from omconnect.errors import ConnectError, DataError, IllegalStateError, RetriableError
from omconnect.records import SinkRecord, TopicPartition
from omconnect_spark.parquet_table import (
    batch_table,
    merge_segments,
    records_table,
    split_segments,
    write_segments,
    written_ends,
)
from omconnect_spark.session import SharedSparkSession

__all__ = ["CONFIG_DEF", "SparkParquetSinkConnector", "SparkParquetSinkTask"]

_log = logging.getLogger(__name__)

PATH = "path"
MASTER = "spark.master"
APP_NAME = "spark.app.name"
FLUSH_MAX_RECORDS = "flush.max.records"
SCHEMALESS_TYPE = "schemaless.column.type"

CONFIG_DEF = (
    ConfigDef()
    .define(PATH, ConfigType.STRING, importance=Importance.HIGH,
            validators=[NonEmptyString()],
            documentation="Root directory (or URL) of the Parquet table.")
    .define(MASTER, ConfigType.STRING, "local[2]", importance=Importance.HIGH,
            validators=[NonEmptyString()],
            documentation="Spark master of the SparkSession the tasks share.")
    .define(APP_NAME, ConfigType.STRING, "omconnect-spark-parquet",
            documentation="Spark application name.")
    .define(FLUSH_MAX_RECORDS, ConfigType.INT, 50_000, validators=[Range(min=1)],
            documentation="Buffered records that trigger an early flush and commit; at "
            "twice as many, put() pushes back until a flush has written.")
    .define(SCHEMALESS_TYPE, ConfigType.STRING, "string",
            validators=[OneOf(("string", "binary"))],
            documentation="Column type of schemaless keys and values: string (text as it "
            "is, bytes as UTF-8, others as JSON) or binary.")
)
"""The settings of the Spark Parquet sink besides ``topics``."""


def _spark_conf(config: Mapping[str, Any]) -> dict[str, str]:
    return {key: str(value) for key, value in config.items()
            if key.startswith("spark.") and key not in (MASTER, APP_NAME)}


class SparkParquetSinkConnector(SinkConnector):
    """Writes the records of ``topics`` to a Parquet table through Spark.

    Entry point ``spark-parquet``. Tasks share the process's SparkSession; the group
    shares the partitions among them.
    """

    def __init__(self) -> None:
        super().__init__()
        self._config: dict[str, Any] = {}

    def version(self) -> str:
        """The omconnect version."""
        return __version__

    def config_def(self) -> ConfigDef:
        """``path``, ``spark.*``, ``flush.max.records``, ``schemaless.column.type``."""
        return CONFIG_DEF

    def start(self, config: Mapping[str, Any]) -> None:
        """Keep the config for the tasks (checked first).

        Raises:
            ConfigError: A setting is invalid (naming it).

        """
        CONFIG_DEF.parse(config, what="spark-parquet sink connector configuration")
        self._config = dict(config)

    def task_class(self) -> type[SinkTask]:
        """:class:`SparkParquetSinkTask`."""
        return SparkParquetSinkTask

    def task_configs(self, max_tasks: int) -> list[dict[str, Any]]:
        """``max_tasks`` identical configs; the consumer group shares the partitions."""
        return [dict(self._config) for _ in range(max(1, max_tasks))]

    def stop(self) -> None:
        """Nothing to release."""


class SparkParquetSinkTask(SinkTask):
    """Buffers records and writes them at each flush; see the module docs.

    ``stop`` may be called from another thread while ``put`` or ``flush`` runs: a lock
    orders them.
    """

    def __init__(self) -> None:
        super().__init__()
        self._lock = threading.Lock()
        self._spark: Any = None
        self._path = ""
        self._flush_max = 0
        self._binary = False
        self._buffer: dict[TopicPartition, _Pending] = {}
        self._buffered = 0
        self._written: dict[TopicPartition, int] = {}

    def version(self) -> str:
        """The omconnect version."""
        return __version__

    def start(self, config: Mapping[str, Any]) -> None:
        """Start (or join) the process's SparkSession.

        Raises:
            ConfigError: A setting is invalid.
            MissingExtraError: PySpark is not installed (extra ``spark``).

        """
        from omconnect_spark._pyspark import require_pyspark

        values = CONFIG_DEF.parse(config, what="spark-parquet sink task configuration")
        require_pyspark()
        self._path = values[PATH]
        self._flush_max = values[FLUSH_MAX_RECORDS]
        self._binary = values[SCHEMALESS_TYPE] == "binary"
        self._spark = SharedSparkSession.acquire(values[MASTER], values[APP_NAME],
                                                 _spark_conf(values))

    def open(self, partitions: frozenset[TopicPartition]) -> None:
        """Find how far the table already holds each partition; seek past it."""
        with self._lock:
            spark = self._require_started()
            ends = written_ends(spark, self._path, partitions)
        self._written.update(ends)
        if ends:
            _log.info("%s already holds %s; resuming after them", self._path,
                      ", ".join(f"{tp} up to offset {end - 1}" for tp, end in sorted(ends.items())))
            self.context.offset(ends)

    def put(self, records: Sequence[SinkRecord]) -> None:
        """Buffer ``records`` (those already in the table are dropped).

        Raises:
            RetriableError: The buffer holds twice ``flush.max.records``: the runtime
                retries this batch after the next flush.

        """
        with self._lock:
            self._push_back()
            for record in records:
                tp = record.topic_partition
                if record.offset < self._written.get(tp, 0):
                    continue  # already in the table (written before a restart)
                self._pending(tp).add_record(record)
                self._buffered += 1
            self._commit_when_full()

    def put_batch(self, batch: Any) -> None:
        """Buffer the rows of an Arrow ``batch`` (the runtime's columnar path; those
        already in the table are dropped), as columns: no object per record.

        Raises:
            RetriableError: As :meth:`put`.

        """
        import numpy as np

        with self._lock:
            self._push_back()
            if batch.num_rows == 0:
                return
            for tp, rows in _partition_runs(batch_table(batch)):
                written = self._written.get(tp, 0)
                if written:  # rows below it are in the table already (before a restart)
                    first = int(np.searchsorted(rows.column("offset").to_numpy(), written))
                    rows = rows.slice(first)
                    if not rows.num_rows:
                        continue
                self._pending(tp).add_table(rows)
                self._buffered += rows.num_rows
            self._commit_when_full()

    def _push_back(self) -> None:
        self._require_started()
        if self._buffered >= 2 * self._flush_max:
            self.context.request_commit()
            raise RetriableError(f"{self._buffered} records wait for a flush to "
                                 f"{self._path}; retrying after it")

    def _commit_when_full(self) -> None:
        if self._buffered >= self._flush_max:
            self.context.request_commit()

    def _pending(self, tp: TopicPartition) -> _Pending:
        pending = self._buffer.get(tp)
        if pending is None:
            pending = self._buffer[tp] = _Pending()
        return pending

    def flush(self, offsets: Mapping[TopicPartition, int]) -> None:
        """Write the buffer to the table as one Spark job (per column types); returns
        once the job committed.

        Raises:
            RetriableError: The write failed; the buffer is kept and written at the next
                commit (nothing is committed meanwhile).
            ConnectError: Spark refused the write (e.g. the table's columns differ).

        """
        with self._lock:
            if not self._buffered:
                return
            spark = self._require_started()
            try:
                per_partition = {tp: pending.segments(binary=self._binary)
                                 for tp, pending in self._buffer.items() if pending.rows}
                write_segments(spark, self._path, per_partition)
            except Exception as exc:
                raise _translate(exc, self._path) from exc
            for tp, pending in self._buffer.items():
                if pending.rows:
                    self._written[tp] = pending.last_offset + 1
            self._buffer.clear()
            self._buffered = 0

    def close(self, partitions: frozenset[TopicPartition]) -> None:
        """Forget revoked partitions: their unflushed records are not committed, so the
        partitions' next owner reads them again.
        """
        with self._lock:
            for tp in partitions:
                pending = self._buffer.pop(tp, None)
                if pending is not None:
                    self._buffered -= pending.rows
                self._written.pop(tp, None)

    def stop(self) -> None:
        """Release the SparkSession (the last task's stop stops it)."""
        with self._lock:
            spark, self._spark = self._spark, None
            self._buffer.clear()
            self._buffered = 0
        if spark is not None:
            SharedSparkSession.release()

    def _require_started(self) -> Any:
        if self._spark is None:
            raise IllegalStateError("the spark-parquet sink task is not started or was "
                                    "stopped")
        return self._spark


class _Pending:
    """One partition's buffered rows, in offset order: runs of records (from ``put``)
    and Arrow tables (from ``put_batch``).
    """

    __slots__ = ("last_offset", "parts", "rows")

    def __init__(self) -> None:
        self.parts: list[list[SinkRecord] | Any] = []
        self.rows = 0
        self.last_offset = -1

    def add_record(self, record: SinkRecord) -> None:
        if not self.parts or not isinstance(self.parts[-1], list):
            self.parts.append([])
        self.parts[-1].append(record)
        self.rows += 1
        self.last_offset = record.offset

    def add_table(self, table: Any) -> None:
        self.parts.append(table)
        self.rows += table.num_rows
        self.last_offset = table.column("offset")[-1].as_py()

    def segments(self, *, binary: bool) -> list[Any]:
        """The buffered rows as Arrow tables, one per run of the same column types."""
        tables: list[Any] = []
        for part in self.parts:
            if isinstance(part, list):
                tables += [records_table(segment, binary=binary)
                           for segment in split_segments(part, binary=binary)]
            else:
                tables.append(part)
        return merge_segments(tables)


def _partition_runs(table: Any) -> list[tuple[TopicPartition, Any]]:
    """``table``'s rows per (topic, partition), each in the order given."""
    import numpy as np
    import pyarrow.compute as pc

    topics = table.column("topic")
    partitions = table.column("partition").to_numpy()
    first_topic = topics[0].as_py()
    if (partitions == partitions[0]).all() and pc.all(pc.equal(topics, first_topic)).as_py():
        return [(TopicPartition(first_topic, int(partitions[0])), table)]
    encoded = pc.dictionary_encode(topics.combine_chunks())
    names = encoded.dictionary.to_pylist()
    codes = encoded.indices.to_numpy().astype(np.int64) * (1 << 32) + partitions
    runs = []
    for code in np.unique(codes):
        rows = np.flatnonzero(codes == code)
        runs.append((TopicPartition(names[int(code >> 32)], int(code & 0xFFFFFFFF)),
                     table.take(rows)))
    return runs


def _translate(exc: Exception, path: str) -> ConnectError:
    """Spark's analysis errors, and values or schemas the table cannot hold (a
    :class:`~omconnect.errors.DataError`, an Arrow conversion's ``TypeError`` or
    ``ValueError``), are fatal (they repeat); anything else may pass.
    """
    try:
        from pyspark.errors import AnalysisException
    except ImportError:  # pragma: no cover - pyspark is there if a write ran
        AnalysisException = ()  # type: ignore[assignment,misc]
    if isinstance(exc, (AnalysisException, DataError, TypeError, ValueError)):
        return ConnectError(f"writing to the Parquet table {path} failed: {exc}")
    return RetriableError(f"writing to the Parquet table {path} failed, retrying at the next "
                          f"commit: {exc}")
