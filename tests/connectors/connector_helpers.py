"""Helpers for driving connectors through the SPI alone: offsets stored as JSON the way
the runtime stores them, and a source task harness that "commits" what it polled.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from omconnect.connector import (
    OffsetStorageReader,
    SourceConnector,
    SourceTask,
    SourceTaskContext,
    freeze_partition,
)
from omconnect.records import SourceRecord


class JsonOffsets(OffsetStorageReader):
    """Committed source offsets, kept as JSON text like the runtime's KV store."""

    def __init__(self) -> None:
        self.stored: dict[str, str] = {}

    def commit(self, records: Iterable[SourceRecord]) -> None:
        for record in records:
            if record.source_offset:
                key = json.dumps(sorted(record.source_partition.items()))
                self.stored[key] = json.dumps(dict(record.source_offset))

    def commit_batch(self, batch: Any) -> None:
        """Commit a columnar source batch's offset (as the runtime does once every row
        of it was acknowledged).
        """
        if batch.source_offset:
            key = json.dumps(sorted(batch.source_partition.items()))
            self.stored[key] = json.dumps(dict(batch.source_offset))

    def offsets(self, partitions: Iterable[Mapping[str, Any]]) -> dict[Any, dict[str, Any]]:
        found: dict[Any, dict[str, Any]] = {}
        for partition in partitions:
            text = self.stored.get(json.dumps(sorted(partition.items())))
            if text is not None:
                found[freeze_partition(partition)] = json.loads(text)
        return found


class Context(SourceTaskContext):
    def __init__(self, reader: OffsetStorageReader, configs: Mapping[str, Any]) -> None:
        self._reader = reader
        self._configs = dict(configs)

    @property
    def offset_storage_reader(self) -> OffsetStorageReader:
        return self._reader

    @property
    def configs(self) -> Mapping[str, Any]:
        return self._configs


def start_tasks(connector: SourceConnector, config: Mapping[str, Any], offsets: JsonOffsets,
                max_tasks: int = 1) -> list[SourceTask]:
    """Validate, start the connector and start its tasks, as the runtime does."""
    errors = connector.validate(config)
    assert not any(errors.values()), errors
    connector.start(config)
    tasks = []
    for task_config in connector.task_configs(max_tasks):
        task = connector.task_class()()
        task.initialize(Context(offsets, task_config))
        task.start(task_config)
        tasks.append(task)
    return tasks


def poll_until_idle(task: SourceTask, offsets: JsonOffsets | None = None,
                    idle_polls: int = 2) -> list[SourceRecord]:
    """Poll until ``idle_polls`` polls in a row return nothing; commit when ``offsets``."""
    records: list[SourceRecord] = []
    idle = 0
    while idle < idle_polls:
        batch = task.poll()
        if not batch:
            idle += 1
            continue
        idle = 0
        records.extend(batch)
        if offsets is not None:
            offsets.commit(batch)
    return records
