r"""FileStreamSink: each record's value becomes a line of a file, like Kafka Connect's.

It takes Arrow batches too (``put_batch``): with the ``string`` or ``bytearray`` value
converter the lines are written from the value column's buffers, the same bytes as
record by record.

Config-compatible with Kafka Connect's ``FileStreamSinkConnector`` (``file``, plus the
``topics`` every sink takes). Each value is written as text followed by ``\n``: a string
as it is (UTF-8), bytes as they are, ``None`` as ``null`` and booleans as
``true``/``false`` (as Kafka Connect's Java ``println`` does), anything else as
``str(value)``. Without ``file``, lines go to standard output.

Durability: each batch is appended with one ``write`` system call as it is put, and
``flush`` calls ``fsync``; the runtime flushes before it commits the consumed positions.
So a committed record is on disk; after a crash the records after the last commit are
delivered again and their lines appended again: at-least-once, duplicates limited to the
uncommitted window (Kafka Connect's file sink behaves the same, without the ``fsync``).

A write that spans pages can still be cut short by SIGKILL or a power loss, leaving the
start of a line without its newline at the end of the file. Those records were not
committed (their batch was never flushed), so they are delivered again; the task removes
such a torn last line when it starts (logging how many bytes it removed), so that the
re-delivered line starts on a line of its own. The sink owns its file: content appended by
others that does not end with a newline counts as torn.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
from collections.abc import Mapping, Sequence
from typing import IO, Any

from omconnect import __version__
from omconnect.config import ConfigDef, ConfigType, Importance
from omconnect.connector import SinkConnector, SinkTask
from omconnect.errors import IllegalStateError
from omconnect.records import SinkRecord, TopicPartition
from omconnect_file.line_text import line_of

__all__ = ["FileStreamSinkConnector", "FileStreamSinkTask", "drop_torn_last_line", "line_of"]

FILE = "file"

CONFIG_DEF = ConfigDef().define(
    FILE, ConfigType.STRING, None, importance=Importance.HIGH,
    documentation="The file to append lines to (created if missing); standard output "
    "when not set.")
"""The settings of the file sink besides ``topics``."""

_log = logging.getLogger(__name__)
_TAIL_STEP = 1 << 16


class FileStreamSinkConnector(SinkConnector):
    """Appends the values of the records of ``topics`` to a file, in one task.

    Entry point ``file-sink``; Kafka Connect's names ``FileStreamSink`` and
    ``org.apache.kafka.connect.file.FileStreamSinkConnector`` are aliases.
    """

    def __init__(self) -> None:
        super().__init__()
        self._config: dict[str, Any] = {}

    def version(self) -> str:
        """The omconnect version."""
        return __version__

    def config_def(self) -> ConfigDef:
        """``file`` (``topics`` is common to every sink)."""
        return CONFIG_DEF

    def start(self, config: Mapping[str, Any]) -> None:
        """Keep the parsed config for the task."""
        self._config = CONFIG_DEF.parse(config, what="file sink connector configuration")

    def task_class(self) -> type[SinkTask]:
        """:class:`FileStreamSinkTask`."""
        return FileStreamSinkTask

    def task_configs(self, max_tasks: int) -> list[dict[str, Any]]:
        """One task: one writer per file, whatever ``max_tasks`` is."""
        return [{FILE: self._config[FILE]} if self._config.get(FILE) else {}]

    def stop(self) -> None:
        """Nothing to release."""

    def alter_offsets(self, config: Mapping[str, Any],
                      offsets: Mapping[TopicPartition, int | None]) -> bool:
        """``True``: the group's positions are the only ones this sink keeps, so a
        change needs nothing more (as Kafka Connect's file sink).
        """
        return True


class FileStreamSinkTask(SinkTask):
    """Appends one line per record; ``flush`` makes them durable (``fsync``).

    :meth:`stop` may come from another thread while :meth:`put` runs: a lock orders them;
    ``stop`` writes out, syncs and closes the file, and a ``put`` after it raises (so
    nothing is taken as written that was not).
    """

    def __init__(self) -> None:
        super().__init__()
        self._out: IO[bytes] | None = None
        self._filename: str | None = None
        self._lock = threading.Lock()
        self._stopped = False

    def version(self) -> str:
        """The omconnect version."""
        return __version__

    def start(self, config: Mapping[str, Any]) -> None:
        """Open the file for appending, creating it if missing (its directory must exist).

        Raises:
            OSError: The file cannot be opened for appending.

        """
        values = CONFIG_DEF.parse(config, what="file sink task configuration")
        self._filename = values.get(FILE) or None
        if self._filename is None:
            self._out = sys.stdout.buffer
        else:
            # Unbuffered: each put is one write() of whole lines (see the module docs).
            # Readable too ("a+b"): start() looks for a torn last line.
            self._out = open(self._filename, "a+b", buffering=0)  # noqa: SIM115 - stop()
            removed = drop_torn_last_line(self._out)
            if removed:
                _log.warning("file sink: removed the torn last line of %s (%d bytes without "
                             "a newline, from an interrupted write; its records are "
                             "delivered again)", self._filename, removed)

    def put(self, records: Sequence[SinkRecord]) -> None:
        """Append one line per record (durable after :meth:`flush`).

        Raises:
            IllegalStateError: The task was stopped (or not started).

        """
        self._write(b"".join([line_of(record.value) + b"\n" for record in records]))

    def _write(self, data: bytes | memoryview) -> None:
        with self._lock:
            out = self._out
            if out is None:
                raise IllegalStateError(
                    f"file sink task for {self._filename or 'standard output'} is "
                    f"{'stopped' if self._stopped else 'not started'}; cannot write")
            view = memoryview(data)
            while view:
                written = out.write(view)
                view = view[written or 0:]

    def put_batch(self, batch: Any) -> None:
        """Append one line per row of an Arrow batch (the columnar path): a ``string``
        or ``binary`` value column is written from its buffers, with no object per row;
        other value types line by line as :meth:`put` writes them.

        Raises:
            IllegalStateError: The task was stopped (or not started).

        """
        from omconnect_file.lines import lines_of_column  # needs pyarrow: only here

        self._write(lines_of_column(batch.column("value")))

    def flush(self, offsets: Mapping[TopicPartition, int]) -> None:
        """Write the buffered lines out and ``fsync`` the file. After :meth:`stop`,
        nothing is left to write (stop wrote and synced everything put).
        """
        with self._lock:
            out = self._out
            if out is None:
                return
            out.flush()
            if self._filename is not None:
                os.fsync(out.fileno())

    def stop(self) -> None:
        """Write out, sync and close the file (standard output is flushed, not closed)."""
        with self._lock:
            self._stopped = True
            out, self._out = self._out, None
            if out is None:
                return
            out.flush()
            if self._filename is not None:
                os.fsync(out.fileno())
                out.close()


def drop_torn_last_line(out: IO[bytes]) -> int:
    """Truncate ``out`` (a file open for reading and appending) after its last newline.

    Returns:
        How many bytes were removed (0 when the file is empty or ends with a newline).

    """
    fd = out.fileno()
    size = end = os.fstat(fd).st_size
    while end > 0:
        start = max(0, end - _TAIL_STEP)
        chunk = os.pread(fd, end - start, start)
        if end == size and chunk.endswith(b"\n"):
            return 0
        newline = chunk.rfind(b"\n")
        if newline >= 0:
            keep = start + newline + 1
            break
        end = start
    else:
        keep = 0
    os.ftruncate(fd, keep)
    os.fsync(fd)
    return size - keep
