"""Helpers for the object-store source tests: an offset store that keeps offsets as JSON
(as the runtime's key/value store does), a task context, and a task driver that does
what the runtime does with polled records.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from omconnect_objectstore.source import ObjectStoreSourceTask

from omconnect.connector import OffsetStorageReader, SourceTaskContext, freeze_partition
from omconnect.records import SourceRecord


class JsonOffsetStore(OffsetStorageReader):
    """Committed source offsets, stored as JSON text like the runtime's KV store."""

    def __init__(self) -> None:
        self.stored: dict[str, str] = {}

    def commit(self, partition: Mapping[str, Any], offset: Mapping[str, Any]) -> None:
        self.stored[json.dumps(sorted(partition.items()))] = json.dumps(dict(offset))

    def offsets(self, partitions: Iterable[Mapping[str, Any]]) -> dict[Any, dict[str, Any]]:
        found: dict[Any, dict[str, Any]] = {}
        for partition in partitions:
            text = self.stored.get(json.dumps(sorted(partition.items())))
            if text is not None:
                found[freeze_partition(partition)] = json.loads(text)
        return found


class Context(SourceTaskContext):
    def __init__(self, store: OffsetStorageReader, configs: Mapping[str, Any]) -> None:
        self._store = store
        self._configs = dict(configs)

    @property
    def offset_storage_reader(self) -> OffsetStorageReader:
        return self._store

    @property
    def configs(self) -> Mapping[str, Any]:
        return self._configs


def config(directory: Path | str, **settings: Any) -> dict[str, Any]:
    """A task config reading ``directory``; ``settings`` with ``_`` for ``.``."""
    values: dict[str, Any] = {"objectstore.url": str(directory), "topic": "out",
                              "objectstore.list.interval.ms": "0",
                              "poll.backoff.initial.ms": "5", "poll.backoff.max.ms": "20",
                              "poll.timeout.ms": "200"}
    values.update({k.replace("_", "."): str(v) for k, v in settings.items()})
    return values


def start_task(settings: Mapping[str, Any], store: JsonOffsetStore | None = None
               ) -> ObjectStoreSourceTask:
    task = ObjectStoreSourceTask()
    task.initialize(Context(store if store is not None else JsonOffsetStore(), settings))
    task.start(settings)
    return task


def acknowledge(task: ObjectStoreSourceTask, store: JsonOffsetStore,
                records: Iterable[SourceRecord]) -> None:
    """What the runtime does once records are acknowledged and offsets flushed."""
    latest: dict[Any, tuple[Mapping[str, Any], Mapping[str, Any]]] = {}
    for record in records:
        task.commit_record(record, None)
        latest[freeze_partition(record.source_partition)] = (
            record.source_partition, record.source_offset)
    for partition, offset in latest.values():
        store.commit(partition, offset)
    task.commit()


def drain(task: ObjectStoreSourceTask, store: JsonOffsetStore | None = None, *,
          expect: int | None = None, idle: float = 0.3,
          timeout: float = 30.0) -> list[SourceRecord]:
    """Poll until ``expect`` records came (or, without ``expect``, until nothing came
    for ``idle`` seconds); acknowledge and commit each batch into ``store`` when given.
    """
    got: list[SourceRecord] = []
    deadline = time.monotonic() + timeout
    quiet_since = time.monotonic()
    while time.monotonic() < deadline:
        batch = task.poll()
        if batch:
            got.extend(batch)
            if store is not None:
                acknowledge(task, store, batch)
            quiet_since = time.monotonic()
            if expect is not None and len(got) >= expect:
                return got
        elif expect is None and time.monotonic() - quiet_since >= idle:
            return got
    if expect is not None:
        raise AssertionError(f"expected {expect} records within {timeout} s, got {len(got)}")
    return got


def write_jsonl(path: Path, rows: Iterable[Mapping[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def values(records: Iterable[SourceRecord]) -> list[Any]:
    return [r.value for r in records]
