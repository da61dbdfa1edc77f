"""ConnectorHarness: run a connector's tasks without the runtime, for acceptance tests.

The harness plays the runtime's part in miniature: it validates and starts the connector,
asks it for task configs, runs source tasks for a number of polls (acknowledging every
record and committing its source offset to a dict-backed
:class:`~omconnect.connector.OffsetStorageReader`, JSON-encoded as the runtime stores
them), and feeds sink tasks records and calls ``pre_commit``::

    harness = ConnectorHarness(FileStreamSourceConnector, {"file": "in.txt", "topic": "t"})
    harness.start()
    [task_config] = harness.task_configs(1)
    run = harness.run_source(task_config, until_idle=3)
    assert run.records
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import Future
from typing import Any

from omconnect.connector import (
    Connector,
    ConnectorContext,
    ErrantRecordReporter,
    OffsetStorageReader,
    SinkConnector,
    SinkTask,
    SinkTaskContext,
    SourceConnector,
    SourceTask,
    SourceTaskContext,
    freeze_partition,
)
from omconnect.errors import ConfigError, DataError, IllegalStateError
from omconnect.records import JsonScalar, RecordMetadata, SinkRecord, SourceRecord, TopicPartition

__all__ = [
    "ConnectorHarness",
    "DictOffsetStore",
    "SourceRun",
]


class DictOffsetStore(OffsetStorageReader):
    """Committed source offsets in a dict, stored as JSON like the runtime stores them
    (so an offset that is not JSON-serialisable fails here as it would there).
    """

    def __init__(self) -> None:
        self._data: dict[str, str] = {}

    @staticmethod
    def _key(partition: Mapping[str, JsonScalar]) -> str:
        return json.dumps(sorted(partition.items()), separators=(",", ":"))

    def commit(self, partition: Mapping[str, JsonScalar], offset: Mapping[str, JsonScalar]
               ) -> None:
        """Store ``offset`` as the committed offset of ``partition``.

        Raises:
            DataError: The partition or offset is not JSON-serialisable.

        """
        try:
            key, value = self._key(partition), json.dumps(dict(offset), allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise DataError(f"source partition {dict(partition)!r} / offset "
                            f"{dict(offset)!r} is not JSON-serialisable: {exc}") from exc
        self._data[key] = value

    def offsets(
        self, partitions: Iterable[Mapping[str, JsonScalar]]
    ) -> dict[tuple[tuple[str, JsonScalar], ...], dict[str, Any]]:
        """Committed offsets of ``partitions``, keyed by their frozen form."""
        found: dict[tuple[tuple[str, JsonScalar], ...], dict[str, Any]] = {}
        for partition in partitions:
            stored = self._data.get(self._key(partition))
            if stored is not None:
                found[freeze_partition(partition)] = json.loads(stored)
        return found

    def copy(self) -> DictOffsetStore:
        """An independent copy (to restart from the same committed state twice)."""
        clone = DictOffsetStore()
        clone._data = dict(self._data)
        return clone

    def __len__(self) -> int:
        return len(self._data)


class _ConnectorContext(ConnectorContext):
    def __init__(self) -> None:
        self.reconfiguration_requests = 0
        self.errors: list[BaseException] = []

    def request_task_reconfiguration(self) -> None:
        self.reconfiguration_requests += 1

    def raise_error(self, error: BaseException) -> None:
        self.errors.append(error)


class _SourceTaskContext(SourceTaskContext):
    def __init__(self, configs: Mapping[str, Any], offsets: DictOffsetStore) -> None:
        self._configs = dict(configs)
        self._offsets = offsets

    @property
    def offset_storage_reader(self) -> OffsetStorageReader:
        return self._offsets

    @property
    def configs(self) -> Mapping[str, Any]:
        return self._configs


class _Reporter(ErrantRecordReporter):
    def __init__(self) -> None:
        self.reported: list[tuple[SinkRecord, BaseException]] = []

    def report(self, record: SinkRecord, error: BaseException) -> Future[None]:
        self.reported.append((record, error))
        done: Future[None] = Future()
        done.set_result(None)
        return done


class _SinkTaskContext(SinkTaskContext):
    def __init__(self, configs: Mapping[str, Any]) -> None:
        self._configs = dict(configs)
        self.assigned: frozenset[TopicPartition] = frozenset()
        self.paused: set[TopicPartition] = set()
        self.offset_resets: dict[TopicPartition, int] = {}
        self.commit_requests = 0
        self.reporter = _Reporter()

    @property
    def configs(self) -> Mapping[str, Any]:
        return self._configs

    def offset(self, offsets: Mapping[TopicPartition, int]) -> None:
        self.offset_resets.update(offsets)

    def assignment(self) -> frozenset[TopicPartition]:
        return self.assigned

    def pause(self, *partitions: TopicPartition) -> None:
        self.paused.update(partitions)

    def resume(self, *partitions: TopicPartition) -> None:
        self.paused.difference_update(partitions)

    def request_commit(self) -> None:
        self.commit_requests += 1

    @property
    def errant_record_reporter(self) -> ErrantRecordReporter | None:
        return self.reporter


class SourceRun:
    """What running a source task produced.

    Attributes:
        task: The task (stopped unless the run was asked to keep it running).
        records: Every record polled, in order.
        offsets: The offset store the run committed to.
        polls: How many times ``poll`` was called.

    """

    def __init__(self, task: SourceTask, offsets: DictOffsetStore) -> None:
        self.task = task
        self.records: list[SourceRecord] = []
        self.offsets = offsets
        self.polls = 0


class ConnectorHarness:
    """Runs one connector and its tasks in this thread, like the runtime would.

    Args:
        connector: The connector class (or an instance).
        config: The connector's configuration, as a user writes it.

    """

    def __init__(self, connector: type[Connector] | Connector, config: Mapping[str, Any]) -> None:
        self.connector = connector() if isinstance(connector, type) else connector
        self.config = dict(config)
        self.context = _ConnectorContext()
        self._started = False
        self._acked = 0

    def validate(self) -> dict[str, list[str]]:
        """The connector's per-key errors for the config (only keys with errors)."""
        return {k: v for k, v in self.connector.validate(self.config).items() if v}

    def start(self) -> None:
        """Validate, then initialize and start the connector with the parsed config.

        Raises:
            ConfigError: The config is invalid (listing every bad key).

        """
        errors = self.validate()
        if errors:
            raise ConfigError.from_errors(errors, what=f"connector {type(self.connector).__name__}")
        parsed = self.connector.config_def().parse(self.config)
        self.connector.initialize(self.context)
        self.connector.start(parsed)
        self._started = True

    def task_configs(self, max_tasks: int) -> list[dict[str, Any]]:
        """The connector's task configs for ``max_tasks`` (starting it first if needed)."""
        if not self._started:
            self.start()
        return self.connector.task_configs(max_tasks)

    def stop(self) -> None:
        """Stop the connector (if started)."""
        if self._started:
            self._started = False
            self.connector.stop()

    # -- sources -------------------------------------------------------------------
    def source_task(self, task_config: Mapping[str, Any],
                    offsets: DictOffsetStore | None = None) -> SourceTask:
        """A started source task for ``task_config`` resuming from ``offsets``."""
        if not isinstance(self.connector, SourceConnector):
            raise IllegalStateError(f"{type(self.connector).__name__} is not a SourceConnector")
        task = self.connector.task_class()()
        task.initialize(_SourceTaskContext(task_config, offsets or DictOffsetStore()))
        task.start(task_config)
        return task

    def run_source(
        self,
        task_config: Mapping[str, Any],
        *,
        offsets: DictOffsetStore | None = None,
        polls: int = 1000,
        until_idle: int | None = None,
        until_records: int | None = None,
        stop: bool = True,
    ) -> SourceRun:
        """Start a source task and poll it; acknowledge and commit every record.

        Args:
            task_config: One of :meth:`task_configs`.
            offsets: Committed offsets to resume from (a new store by default).
            polls: The most polls.
            until_idle: Stop after this many consecutive polls returned nothing.
            until_records: Stop once at least this many records were polled.
            stop: Stop the task at the end (``commit`` is called first).

        Raises:
            DataError: A record's source partition or offset is not JSON-serialisable.

        """
        store = offsets if offsets is not None else DictOffsetStore()
        task = self.source_task(task_config, store)
        run = SourceRun(task, store)
        idle = 0
        while run.polls < polls:
            batch = task.poll() or []
            run.polls += 1
            idle = 0 if batch else idle + 1
            self._acknowledge(task, batch, store)
            run.records.extend(batch)
            if until_idle is not None and idle >= until_idle:
                break
            if until_records is not None and len(run.records) >= until_records:
                break
        task.commit()
        if stop:
            task.stop()
        return run

    def _acknowledge(self, task: SourceTask, batch: Sequence[SourceRecord],
                     store: DictOffsetStore) -> None:
        for record in batch:
            store.commit(record.source_partition, record.source_offset)
            self._acked += 1
            task.commit_record(record, RecordMetadata(record.topic, record.partition or 0,
                                                      self._acked, record.timestamp))

    # -- sinks ---------------------------------------------------------------------
    def sink_task(self, task_config: Mapping[str, Any],
                  partitions: Iterable[TopicPartition] = ()) -> SinkTask:
        """A started sink task for ``task_config`` with ``partitions`` opened."""
        if not isinstance(self.connector, SinkConnector):
            raise IllegalStateError(f"{type(self.connector).__name__} is not a SinkConnector")
        task = self.connector.task_class()()
        context = _SinkTaskContext(task_config)
        context.assigned = frozenset(partitions)
        task.initialize(context)
        task.start(task_config)
        task.open(context.assigned)
        return task

    @staticmethod
    def next_offsets(records: Iterable[SinkRecord]) -> dict[TopicPartition, int]:
        """The position after ``records``: last offset + 1 per partition."""
        positions: dict[TopicPartition, int] = {}
        for record in records:
            tp = record.topic_partition
            positions[tp] = max(positions.get(tp, 0), record.offset + 1)
        return positions

    def put_and_commit(self, task: SinkTask, records: Sequence[SinkRecord],
                       consumed: Mapping[TopicPartition, int] | None = None
                       ) -> dict[TopicPartition, int]:
        """``put`` the records, then ``pre_commit`` with the positions after them (or
        ``consumed``); the offsets the task says are safe to commit.
        """
        if records:
            task.put(list(records))
        positions = dict(consumed) if consumed is not None else self.next_offsets(records)
        return dict(task.pre_commit(positions))
