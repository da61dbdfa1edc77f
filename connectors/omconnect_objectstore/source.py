"""The object-store source: the records in the objects under a URL, through fsspec.

A task is one loop of passes, each a listing of the store:

1. list the objects (at most every ``objectstore.list.interval.ms``; when a pass found
   nothing, the base's idle backoff spaces the listings, at most 5 s apart), keep those
   that pass ``objectstore.name.glob`` and that the distribution strategy gives to this
   task (decided from the name: an object is opened by one task only);
2. load the offsets of all of them in one storage read, and warn about objects that
   disappeared before they were read to their end;
3. for each object, in name order: skip it when its offset says done and it has not
   changed; else open it and turn its bytes into records with the record format of
   ``input.format`` (decompressing ``.gz``/``.zst``/``.bz2``/``.xz``), passing over the
   records an earlier read delivered. Each record carries the object's offset entry
   (records read, done on the last one, size and version as listed).

Changed objects (see :class:`~omconnect_objectstore.entry.Change`): one that grew is read
on after its last delivered record; one that was truncated or replaced by another
version is read again from the start, with a warning. A deleted object is a warning, as
is one that cannot be found when opened; neither stops the task.

Malformed records (a bad JSON line, a CSV row of the wrong width, an unreadable Avro or
Parquet file, a corrupt compressed stream): under ``errors.tolerance=all`` each becomes an
:class:`~omconnect.records.ErrantSourceRecord` whose headers name the object and the
line (or record), which the runtime writes to the dead-letter topic; under ``none`` the
task fails with an error naming the object and the line.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from omconnect import __version__
from omconnect.config import ConfigDef
from omconnect.connector import SourceConnector, SourceTask
from omconnect.data import INT64_SCHEMA, STRING_SCHEMA, Header, Headers
from omconnect.errors import ConfigError, ConnectError, DataError, RetriableError
from omconnect.records import ErrantSourceRecord, SourceRecord
from omconnect.source_base import (
    SYSTEM_CLOCK,
    Backoff,
    Clock,
    IteratorBatchSourceTask,
    ParsedRecord,
    open_decompressed,
    task_configs,
)
from omconnect.source_base.formats import ParsedBatch
from omconnect_objectstore.config import CONFIG_DEF, ObjectStoreConfig, parse_config
from omconnect_objectstore.entry import Change, ObjectEntry, object_key
from omconnect_objectstore.store import ObjectInfo, ObjectStore

__all__ = [
    "HEADER_LINE",
    "HEADER_OBJECT",
    "HEADER_RECORD",
    "HEADER_URL",
    "ObjectStoreSourceConnector",
    "ObjectStoreSourceTask",
]

_log = logging.getLogger(__name__)

HEADER_OBJECT = "objectstore.object"
"""Header naming the object a record came from (malformed records; all records with
``objectstore.record.headers``)."""
HEADER_LINE = "objectstore.line"
"""Header with the line a record starts on (JSON lines and CSV)."""
HEADER_RECORD = "objectstore.record"
"""Header with the record's number in its object (other formats, and read failures)."""
HEADER_URL = "objectstore.url"
"""Header with the store's root URL (malformed records)."""

_TEXT_FORMATS = ("jsonl", "csv")


class ObjectStoreSourceConnector(SourceConnector):
    """Reads the objects under a URL into topics, spread over up to ``tasks.max`` tasks.

    Entry point ``objectstore-source``. Each task lists the store and reads the objects
    the distribution strategy (``distribution.type``) assigns to it.
    """

    def __init__(self) -> None:
        super().__init__()
        self._settings: dict[str, Any] = {}

    def version(self) -> str:
        """The omconnect version."""
        return __version__

    def config_def(self) -> ConfigDef:
        """The common iterator-source keys and the ``objectstore.*`` keys."""
        return CONFIG_DEF

    def validate(self, config: Mapping[str, Any]) -> dict[str, list[str]]:
        """Per-key problems, including those only visible together (the distribution's
        pattern, the format's options, the topic template's placeholders).
        """
        errors = super().validate(config)
        if any(errors.values()):
            return errors
        try:
            parse_config(config)
        except ConfigError as exc:
            for key, messages in (exc.errors or {exc.context.get("key", "config"):
                                                 [exc.message]}).items():
                errors.setdefault(key, []).extend(messages)
        return errors

    def start(self, config: Mapping[str, Any]) -> None:
        """Check the whole config (so a bad one fails the connector, not its tasks) and
        keep it for the tasks.

        Raises:
            ConfigError: Listing every bad key.

        """
        parse_config(config)
        self._settings = dict(config)

    def task_class(self) -> type[SourceTask]:
        """:class:`ObjectStoreSourceTask`."""
        return ObjectStoreSourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, Any]]:
        """``max_tasks`` task configs numbered by ``task.id``: every task lists the store
        and keeps its share of the objects.
        """
        return task_configs(self._settings, max_tasks)

    def stop(self) -> None:
        """Nothing to release: the tasks hold the connections."""

    def alter_offsets(
        self,
        config: Mapping[str, Any],
        offsets: Sequence[tuple[Mapping[str, Any], Mapping[str, Any] | None]],
    ) -> bool:
        """Check offsets set by hand (the entries of
        :mod:`~omconnect_objectstore.entry`): a non-null offset needs a partition
        ``{"url": <root URL>, "object": <name>}`` and an offset with a non-negative
        integer ``records``, and if given a boolean ``done``, a non-negative integer
        ``size`` and a string ``version``; a null offset is accepted for any partition.
        ``True``: nothing is kept elsewhere.

        Raises:
            ConfigError: Naming the entry and the field that is wrong.

        """
        for index, (partition, offset) in enumerate(offsets):
            if offset is None:
                continue
            where = f"offsets[{index}]"
            for key in ("url", "object"):
                if not isinstance(partition.get(key), str) or not partition[key]:
                    raise ConfigError(
                        f"{where}.partition.{key} must be a non-empty string (partitions "
                        f"are {{\"url\": <root URL>, \"object\": <name>}}), got "
                        f"{partition.get(key)!r}", key=f"{where}.partition.{key}")
            problem = _offset_problem(offset)
            if problem is not None:
                field, wanted = problem
                raise ConfigError(f"{where}.offset.{field} must be {wanted}, got "
                                  f"{offset.get(field)!r}", key=f"{where}.offset.{field}")
        return True


def _source_batch(topic: str, item: ParsedBatch, partition: Mapping[str, Any],
                  offset: Mapping[str, Any]) -> Any:
    """The :class:`~omconnect.columnar.SourceBatch` of a batch of records read."""
    from omconnect.columnar import SourceBatch

    return SourceBatch(topic=topic, records=item.rows, source_partition=partition,
                       source_offset=offset, key_schema=item.key_schema,
                       value_schema=item.value_schema)


def _offset_problem(offset: Mapping[str, Any]) -> tuple[str, str] | None:
    """The field of an object's offset that is wrong, and what it must be."""
    def count(value: Any) -> bool:
        return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**63

    if not count(offset.get("records")):
        return "records", "a non-negative integer (the records already read)"
    if "done" in offset and not isinstance(offset["done"], bool):
        return "done", "true or false (whether the object was read to its end)"
    if offset.get("size") is not None and not count(offset["size"]):
        return "size", "a non-negative integer (the object's size in bytes) or left out"
    if offset.get("version") is not None and not isinstance(offset["version"], str):
        return "version", "a string (the object's ETag or inode) or left out"
    return None


class ObjectStoreSourceTask(IteratorBatchSourceTask[ObjectStoreConfig]):
    """Reads this task's share of the objects (see the module docstring).

    On the columnar path (the runtime polls ``poll_batch``), a format that reads
    columns (``parquet``) hands over each Arrow batch it reads as one
    :class:`~omconnect.columnar.SourceBatch`, unless ``objectstore.record.headers`` asks
    for per-record headers; other formats, and malformed records, come as records
    between the batches.

    Args:
        clock: Where the base's waits happen (tests pass a fake one).

    """

    def __init__(self, *, clock: Clock = SYSTEM_CLOCK) -> None:
        super().__init__(clock=clock)
        self._store: ObjectStore | None = None
        self._next_listing = 0.0
        self._listed: set[str] = set()
        self._unfinished: set[str] = set()
        self._exhausted: dict[str, ObjectInfo] = {}
        self._warned_missing_root = False

    def version(self) -> str:
        """The omconnect version."""
        return __version__

    @property
    def store(self) -> ObjectStore:
        """The store this task reads (after start)."""
        assert self._store is not None, "the task is not started"
        return self._store

    def configure(self, config: Mapping[str, Any]) -> ObjectStoreConfig:
        """Parse the task config and open the store (no request is made yet).

        Raises:
            ConfigError: Naming each bad key.
            MissingExtraError: fsspec is not installed.

        """
        parsed = parse_config(config)
        self._store = ObjectStore(parsed.url, parsed.storage_options,
                                  recursive=parsed.recursive, name_filter=parsed.name_filter)
        self._next_listing = 0.0
        return parsed

    # -- passes ---------------------------------------------------------------------------
    def iterator(self, backoff: Backoff) -> Iterator[SourceRecord | None]:
        """One pass: list the store, then read this task's unfinished objects in order."""
        now = time.monotonic()
        if now < self._next_listing:
            return  # listed recently: an empty pass, so the base backs off
        self._next_listing = now + self.config.list_interval
        listing = self._list()
        if listing is None:
            return
        assigned = [info for info in listing if self.config.is_assigned(info.name)]
        self._forget_vanished(assigned)
        location = self.store.location
        self.offset_manager.populate(object_key(location, info.name) for info in assigned)
        for info in assigned:
            entry = self._entry(info)
            if entry is not None:
                yield from self._read(info, entry)

    def _list(self) -> list[ObjectInfo] | None:
        store = self.store
        try:
            listing = store.list()
        except FileNotFoundError:
            if not self._warned_missing_root:
                _log.warning("%s does not exist (yet); waiting for it to be created",
                             store.location)
                self._warned_missing_root = True
            return None
        except OSError as exc:
            raise RetriableError(f"could not list {store.location}: {exc}") from exc
        self._warned_missing_root = False
        return listing

    def _forget_vanished(self, assigned: list[ObjectInfo]) -> None:
        """Warn about objects gone before they were read to the end; drop the state of
        every object no longer listed.
        """
        names = {info.name for info in assigned}
        location = self.store.location
        for name in self._listed - names:
            key = object_key(location, name)
            if name in self._unfinished:
                self._unfinished.discard(name)
                entry = self.offset_manager.get_entry(key, ObjectEntry)
                _log.warning("object %s was deleted (or moved) before it was read to its "
                             "end: %d record(s) of it were read, the rest is lost",
                             self.store.url(name), entry.records if entry else 0)
            self._exhausted.pop(name, None)
            self.offset_manager.remove(key)
        self._listed = names

    def _entry(self, info: ObjectInfo) -> ObjectEntry | None:
        """The entry to read ``info`` from, or ``None`` when there is nothing to read."""
        if self._exhausted.get(info.name) == info:
            return None  # read to its end before, with nothing to deliver, and unchanged
        location = self.store.location
        entry = self.offset_manager.get_entry(object_key(location, info.name), ObjectEntry)
        if entry is None:
            self._unfinished.add(info.name)
            return ObjectEntry.new(location, info)
        change = entry.change(info)
        if change is Change.UNCHANGED:
            if entry.done:
                self._unfinished.discard(info.name)
                return None
        elif change is Change.GROWN:
            _log.info("object %s grew from %s to %d bytes; reading on after its record %d",
                      self.store.url(info.name), entry.size, info.size, entry.records)
            entry.resume(info)
        else:
            what = ("was truncated" if change is Change.TRUNCATED
                    else "was replaced by another version")
            _log.warning(
                "object %s %s (%s bytes, version %s when %d record(s) of it were read; now "
                "%d bytes, version %s): reading it again from the start",
                self.store.url(info.name), what, entry.size, entry.version, entry.records,
                info.size, info.version)
            entry = ObjectEntry.new(location, info)
        self._unfinished.add(info.name)
        return entry

    # -- reading one object ---------------------------------------------------------------
    def _read(self, info: ObjectInfo, entry: ObjectEntry) -> Iterator[Any]:
        """The records of one object (and on the columnar path, batches of them)."""
        name = info.name
        config = self.config
        topic = config.topic.topic_for(name)
        try:
            raw = self.store.open(name)
        except FileNotFoundError:
            self._vanished_while_reading(name, entry)
            return
        except Exception as exc:  # unreadable: per errors.tolerance, like a bad record
            yield from self._unreadable(entry, topic, exc)
            return
        failure: DataError | None = None
        read_error: Exception | None = None
        record_format = config.record_format
        text = record_format.name in _TEXT_FORMATS
        headers = config.record_headers
        columns = self.columnar and record_format.reads_columns and not headers
        with raw, open_decompressed(name, raw, config.compression) as stream:
            items: Iterator[Any] = iter(
                record_format.batches(stream, object_name=name, skip=entry.records)
                if columns else record_format.records(stream, object_name=name,
                                                      skip=entry.records))
            # The hot loop: one look-ahead read (the last record carries done=True), one
            # increment, one add_entry and one record per item. Records of an object share
            # one source_partition dict (the runtime compares partitions by identity first).
            add_entry = self.offset_manager.add_entry
            increment = entry.increment
            partition = entry.key
            read = 0
            try:
                item = next(items, None)
            except Exception as exc:  # a corrupt stream, a failed request
                item, read_error = None, exc
            while item is not None:
                try:
                    following = next(items, None)
                except Exception as exc:
                    following, read_error = None, exc
                if type(item) is ParsedBatch:
                    read += item.num_rows
                    increment("records", item.num_rows)
                    if following is None and read_error is None:
                        entry.set("done", True)
                    add_entry(entry)
                    yield _source_batch(topic, item, partition, entry.data)
                    item = following
                    continue
                read += 1
                if item.error is not None and not config.tolerate_errors:
                    failure = self._malformed(name, item, text)
                    break  # raised below, once the object is closed
                increment("records")
                if following is None and read_error is None:
                    entry.set("done", True)
                if item.error is not None:
                    add_entry(entry)
                    yield self._errant(entry, topic, self._malformed(name, item, text),
                                       item.number, text)
                else:
                    add_entry(entry)
                    key, value = item.key, item.value
                    yield SourceRecord(
                        topic=topic,
                        key_schema=key.schema if key is not None else None,
                        key=key.value if key is not None else None,
                        value_schema=value.schema if value is not None else None,
                        value=value.value if value is not None else None,
                        headers=self._headers(name, item.number, text) if headers
                        else Headers.EMPTY,
                        source_partition=partition, source_offset=entry.data)
                item = following
        if failure is not None:
            raise failure
        if read_error is not None:
            if isinstance(read_error, FileNotFoundError):
                self._vanished_while_reading(name, entry)
                return
            if isinstance(read_error, ConnectError) and not isinstance(read_error, DataError):
                raise read_error  # a missing extra, a bad setting: not the object's fault
            yield from self._unreadable(entry, topic, read_error)
            return
        if read == 0:
            self._exhausted[name] = info  # nothing (more) in it: do not open it again
        self._unfinished.discard(name)

    def _malformed(self, name: str, item: ParsedRecord, text: bool) -> DataError:
        error = item.error
        assert error is not None
        where = "line" if text else "record"
        return DataError(
            f"malformed {where} {item.number} in object {self.store.url(name)}: "
            f"{error.message}; fix the object, or set errors.tolerance=all (with "
            "errors.deadletterqueue.topic.name) to send such records to the dead-letter "
            "topic", **{"object": name, where: item.number})

    def _errant(self, entry: ObjectEntry, topic: str, error: DataError, number: int,
                text: bool) -> ErrantSourceRecord:
        name = str(entry.key["object"])
        key = self.config.record_format.object_key(name)
        headers = Headers((
            Header(HEADER_OBJECT, name, STRING_SCHEMA),
            Header(HEADER_LINE if text else HEADER_RECORD, number, INT64_SCHEMA),
            Header(HEADER_URL, self.store.location, STRING_SCHEMA),
        ))
        return ErrantSourceRecord(
            topic=topic, key_schema=key.schema if key is not None else None,
            key=key.value if key is not None else None,
            headers=headers, source_partition=entry.key, source_offset=entry.data,
            error=error)

    def _unreadable(self, entry: ObjectEntry, topic: str,
                    exc: Exception) -> Iterator[SourceRecord]:
        """The object cannot be read on (a corrupt stream, a failed request): fail the
        task, or hand over one errant record for the rest of it and mark it done.
        """
        name = entry.key["object"]
        assert isinstance(name, str)
        number = entry.records + 1
        error = DataError(
            f"could not read object {self.store.url(name)} after {entry.records} record(s):"
            f" {type(exc).__name__}: {exc}", object=name, record=number)
        if not self.config.tolerate_errors:
            raise error from exc
        _log.warning("%s; the rest of the object is skipped (errors.tolerance=all)", error)
        entry.increment("records")
        entry.set("done", True)
        self.offset_manager.add_entry(entry)
        self._unfinished.discard(name)
        yield self._errant(entry, topic, error, number, text=False)

    def _vanished_while_reading(self, name: str, entry: ObjectEntry) -> None:
        _log.warning("object %s was deleted while it was being read: %d record(s) of it "
                     "were read, the rest is lost", self.store.url(name), entry.records)
        self._unfinished.discard(name)

    @staticmethod
    def _headers(name: str, number: int, text: bool) -> Headers:
        return Headers((Header(HEADER_OBJECT, name, STRING_SCHEMA),
                        Header(HEADER_LINE if text else HEADER_RECORD, number, INT64_SCHEMA)))

    def close_resources(self) -> None:
        """Drop the store (fsspec keeps no connection a task must close; an open object
        is closed with the iterator).
        """
        self._store = None
