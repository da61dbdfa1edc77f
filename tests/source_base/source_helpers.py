"""Helpers for the source-base tests: a fake clock and a dict-backed offset storage that
behaves like the runtime's (offsets stored as JSON, read back by frozen partition).
"""

from __future__ import annotations

import io
import json
import threading
from collections.abc import Iterable, Mapping
from typing import IO, Any

from omconnect.connector import OffsetStorageReader, SourceTaskContext, freeze_partition
from omconnect.records import SourceRecord
from omconnect.source_base import ParsedRecord, create_format, open_decompressed
from omconnect.source_base.formats import strip_compression


class FakeClock:
    """A clock whose waits return at once and advance time; records each wait."""

    def __init__(self) -> None:
        self.time = 1000.0
        self.waits: list[float] = []

    def now(self) -> float:
        return self.time

    def advance(self, seconds: float) -> None:
        self.time += seconds

    def wait(self, stop: threading.Event, seconds: float) -> bool:
        self.waits.append(seconds)
        if stop.is_set():
            return True
        self.time += max(seconds, 0.0)
        return stop.is_set()


class DictOffsetStore(OffsetStorageReader):
    """Committed source offsets, stored as JSON text like the runtime's KV store."""

    def __init__(self) -> None:
        self.stored: dict[str, str] = {}
        self.reads = 0

    def commit(self, partition: Mapping[str, Any], offset: Mapping[str, Any]) -> None:
        key = json.dumps(sorted(partition.items()))
        self.stored[key] = json.dumps(dict(offset))

    def offsets(self, partitions: Iterable[Mapping[str, Any]]) -> dict[Any, dict[str, Any]]:
        self.reads += 1
        found: dict[Any, dict[str, Any]] = {}
        for partition in partitions:
            text = self.stored.get(json.dumps(sorted(partition.items())))
            if text is not None:
                found[freeze_partition(partition)] = json.loads(text)
        return found


class Context(SourceTaskContext):
    def __init__(self, store: OffsetStorageReader, configs: Mapping[str, Any] | None = None):
        self._store = store
        self._configs = dict(configs or {})

    @property
    def offset_storage_reader(self) -> OffsetStorageReader:
        return self._store

    @property
    def configs(self) -> Mapping[str, Any]:
        return self._configs


def acknowledge(task: Any, store: DictOffsetStore, records: Iterable[SourceRecord]) -> None:
    """Do what the runtime does once records are acknowledged and offsets flushed."""
    latest: dict[Any, tuple[Mapping[str, Any], Mapping[str, Any]]] = {}
    for record in records:
        task.commit_record(record, None)
        latest[freeze_partition(record.source_partition)] = (
            record.source_partition, record.source_offset)
    for partition, offset in latest.values():
        store.commit(partition, offset)
    task.commit()


def read(name: str, data: bytes | IO[bytes], fmt: str | None = None, skip: int = 0,
         **options: Any) -> list[ParsedRecord]:
    stream = io.BytesIO(data) if isinstance(data, bytes) else data
    record_format = create_format(fmt or strip_compression(name).rsplit(".", 1)[-1],
                                     **options)
    with open_decompressed(name, stream) as decompressed:
        return list(record_format.records(decompressed, object_name=name, skip=skip))


def good(records: list[ParsedRecord]) -> list[Any]:
    assert [r.error for r in records if r.error] == []
    return [r.value.value for r in records if r.value is not None]
