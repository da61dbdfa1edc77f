"""FileStreamSource: each line of a file becomes a record, like Kafka Connect's.

Config-compatible with Kafka Connect's ``FileStreamSourceConnector`` (``file``, ``topic``,
``batch.size``), so its example properties run unchanged. Each line (UTF-8, invalid bytes
replaced by U+FFFD) becomes a record whose value is the line as a string (``STRING``
schema), without key, timestamped when read.

Offsets: source partition ``{"filename": <file>}``, source offset ``{"position": <byte
position of the next line>, "inode": <file identity>}``. A restarted task seeks to the
committed position; ``inode`` lets it notice that the file was rotated while it was not
running (then it reads the new file from the start). An offset without ``inode`` (e.g.
written by hand as ``{"position": 120}``) is used as it is. Truncation and rotation while
running: see :mod:`omconnect_file.tail`.

Without ``file``, standard input is read (no offsets: nothing to resume), as Kafka
Connect does.

On the runtime's columnar path (``columnar.enable``, the default when pyarrow is
installed) the task's ``poll_batch`` returns the same lines as one Arrow batch, split
by Arrow with no Python object per line (:mod:`omconnect_file.line_columns`); the batch's
source offset is the position after its last line, so a restart resumes after the last
batch delivered whole.

Offsets changed through the runtime (``PATCH /connectors/{name}/offsets``) are checked
as Kafka Connect's file source checks them: a non-null offset needs a partition with a
``filename`` and a non-negative integer ``position`` (and, if given, an integer
``inode``); a null offset (a reset) is accepted for any partition. Without ``file``
(standard input) no offset can be set. A position beyond the end of the file makes the
task read the file from the start (with a warning).
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from omconnect import __version__
from omconnect.config import ConfigDef, ConfigType, Importance, NonEmptyString, Range
from omconnect.connector import SourceConnector, SourceTask
from omconnect.data import STRING_SCHEMA
from omconnect.errors import ConfigError
from omconnect.records import SourceRecord
from omconnect_file.tail import FileTail, Line, StreamLines

if TYPE_CHECKING:
    from omconnect.columnar.source_batch import SourceBatch

__all__ = ["FileStreamSourceConnector", "FileStreamSourceTask"]

_log = logging.getLogger(__name__)

FILE = "file"
TOPIC = "topic"
BATCH_SIZE = "batch.size"

_IDLE_WAIT_S = 0.1
"""How long a poll waits for new lines before returning nothing."""
_MISSING_FILE_WAIT_S = 1.0
"""How long a poll waits when the file does not exist yet (Kafka Connect's too)."""


def _single_topic(value: Any) -> str | None:
    if "," in str(value):
        return (f"{value!r} names several topics; this connector writes to exactly one "
                "(use topic=<name>)")
    return None


CONFIG_DEF = (
    ConfigDef()
    .define(FILE, ConfigType.STRING, None, importance=Importance.HIGH,
            documentation="The file to read; standard input when not set.")
    .define(TOPIC, ConfigType.STRING, importance=Importance.HIGH,
            validators=[NonEmptyString(), _single_topic],
            documentation="The topic to write each line to.")
    .define(BATCH_SIZE, ConfigType.INT, 2000, importance=Importance.LOW,
            validators=[Range(min=1)],
            documentation="The most lines returned by one poll.")
)
"""The settings of the file source (Kafka Connect's three)."""


class FileStreamSourceConnector(SourceConnector):
    """Reads a file (or standard input) line by line into one topic, in one task.

    Entry point ``file-source``; Kafka Connect's names ``FileStreamSource`` and
    ``org.apache.kafka.connect.file.FileStreamSourceConnector`` are aliases.
    """

    def __init__(self) -> None:
        super().__init__()
        self._config: dict[str, Any] = {}

    def version(self) -> str:
        """The omconnect version."""
        return __version__

    def config_def(self) -> ConfigDef:
        """``file``, ``topic`` and ``batch.size``."""
        return CONFIG_DEF

    def start(self, config: Mapping[str, Any]) -> None:
        """Keep the parsed config for the task."""
        self._config = CONFIG_DEF.parse(config, what="file source connector configuration")

    def task_class(self) -> type[SourceTask]:
        """:class:`FileStreamSourceTask`."""
        return FileStreamSourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, Any]]:
        """One task: a file is read by one reader, whatever ``max_tasks`` is."""
        config = {TOPIC: self._config[TOPIC], BATCH_SIZE: self._config[BATCH_SIZE]}
        if self._config.get(FILE):
            config[FILE] = self._config[FILE]
        return [config]

    def stop(self) -> None:
        """Nothing to release."""

    def exactly_once_support(self) -> bool:
        """A file re-read from a committed byte position yields exactly the same lines."""
        return True

    def alter_offsets(
        self,
        config: Mapping[str, Any],
        offsets: Sequence[tuple[Mapping[str, Any], Mapping[str, Any] | None]],
    ) -> bool:
        """Check offsets set by hand (see the module documentation); ``True``: this
        connector keeps no offsets elsewhere.

        Raises:
            ConfigError: Naming the entry and the field that is wrong.

        """
        reading_stdin = not config.get(FILE)
        for index, (partition, offset) in enumerate(offsets):
            if offset is None:
                continue  # a reset: allowed for anything, so stray entries can go
            where = f"offsets[{index}]"
            if reading_stdin:
                raise ConfigError(
                    f"{where}: offsets cannot be set while '{FILE}' is not set: standard "
                    "input is read, and its position is not tracked", key=FILE)
            if "filename" not in partition:
                raise ConfigError(
                    f"{where}.partition must hold the key 'filename' (the file the "
                    f"position belongs to, e.g. {{\"filename\": {config.get(FILE)!r}}}), "
                    f"got {dict(partition)!r}", key=f"{where}.partition")
            if "position" not in offset:
                raise ConfigError(
                    f"{where}.offset must be null or hold the key 'position' (a byte "
                    f"position in the file), got {dict(offset)!r}", key=f"{where}.offset")
            if not _is_position(offset["position"]):
                raise ConfigError(
                    f"{where}.offset.position must be a non-negative integer (a byte "
                    f"position in the file), got {offset['position']!r}",
                    key=f"{where}.offset.position")
            inode = offset.get("inode")
            if inode is not None and (not isinstance(inode, int) or isinstance(inode, bool)):
                raise ConfigError(
                    f"{where}.offset.inode must be an integer (the file's identity) or "
                    f"left out, got {inode!r}", key=f"{where}.offset.inode")
        return True


class FileStreamSourceTask(SourceTask):
    """Follows one file; see the module documentation for offsets and rotation."""

    def __init__(self) -> None:
        super().__init__()
        self._stopping = threading.Event()
        self._lock = threading.Lock()  # held while reading; stop() closes the file under it
        self._tail: FileTail | None = None
        self._stream: StreamLines | None = None
        self._filename: str | None = None
        self._partition: dict[str, Any] = {}
        self._topic = ""
        self._batch_size = 2000
        self._warned_missing = False

    def version(self) -> str:
        """The omconnect version."""
        return __version__

    def start(self, config: Mapping[str, Any]) -> None:
        """Read the config; the file itself is opened by the first poll (it may not exist
        yet).
        """
        values = CONFIG_DEF.parse(config, what="file source task configuration")
        self._topic = values[TOPIC]
        self._batch_size = values[BATCH_SIZE]
        self._filename = values.get(FILE) or None
        self._partition = {"filename": self._filename} if self._filename else {}
        if self._filename is None:
            self._stream = StreamLines(sys.stdin.buffer.fileno())

    def poll(self) -> Sequence[SourceRecord] | None:
        """The next lines (at most ``batch.size``), or ``None`` after waiting briefly for
        some (about 0.1 s; 1 s while the file does not exist).
        """
        with self._lock:
            if self._stopping.is_set():
                return None
            if self._stream is not None:
                lines = self._stream.read_lines(self._batch_size, _IDLE_WAIT_S)
                return self._records(lines, None)
            tail = self._tail or self._open()
            lines = tail.read_lines(self._batch_size) if tail is not None else []
            if lines:
                assert tail is not None
                return self._records(lines, tail.identity)
        self._stopping.wait(_IDLE_WAIT_S if tail is not None else _MISSING_FILE_WAIT_S)
        return None

    def poll_batch(self) -> SourceBatch | None:
        """:meth:`poll` on the columnar path: the same lines as one Arrow batch of string
        values, split by Arrow with no object per line; its source offset is the byte
        position after its last line.
        """
        from omconnect_file.line_columns import line_batch

        with self._lock:
            if self._stopping.is_set():
                return None
            timestamp = int(time.time() * 1000)
            if self._stream is not None:
                block = self._stream.read_block(self._batch_size, _IDLE_WAIT_S)
                return line_batch(self._topic, block, timestamp, {}, {}) if block else None
            tail = self._tail or self._open()
            block = tail.read_block(self._batch_size) if tail is not None else b""
            if block:
                assert tail is not None
                return line_batch(self._topic, block, timestamp, self._partition,
                                  {"position": tail.position, "inode": tail.identity})
        self._stopping.wait(_IDLE_WAIT_S if tail is not None else _MISSING_FILE_WAIT_S)
        return None

    def _records(self, lines: list[Line], identity: int | None) -> list[SourceRecord] | None:
        if not lines:
            return None
        topic = self._topic
        partition = self._partition
        timestamp = int(time.time() * 1000)
        schema = STRING_SCHEMA
        if identity is None:
            return [SourceRecord(topic=topic, value_schema=schema,
                                 value=line.decode("utf-8", "replace"), timestamp=timestamp)
                    for line, _ in lines]
        return [SourceRecord(topic=topic, value_schema=schema,
                             value=line.decode("utf-8", "replace"), timestamp=timestamp,
                             source_partition=partition,
                             source_offset={"position": position, "inode": identity})
                for line, position in lines]

    def _open(self) -> FileTail | None:
        assert self._filename is not None
        stored = self.context.offset_storage_reader.offset(self._partition) or {}
        position = _int_or_none(stored.get("position")) or 0
        identity = _int_or_none(stored.get("inode"))
        try:
            self._tail = FileTail(self._filename, position, identity)
        except FileNotFoundError:
            if not self._warned_missing:
                _log.warning("file %s does not exist (yet); waiting for it to be created",
                             os.path.abspath(self._filename))
                self._warned_missing = True
            return None
        if position:
            _log.info("reading %s from byte %d (the committed position)", self._filename,
                      self._tail.position)
        return self._tail

    def stop(self) -> None:
        """Make a waiting :meth:`poll` return at once, and close the file (after a read
        in progress, which does not block).
        """
        self._stopping.set()
        with self._lock:
            if self._tail is not None:
                self._tail.close()
                self._tail = None


def _is_position(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**63


def _int_or_none(value: Any) -> int | None:
    if value is None or isinstance(value, bool):
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        return None
