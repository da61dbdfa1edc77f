"""The console sink: one line per record on standard output, for looking at a topic.

Each record prints as tab-separated fields, like Kafka's console consumer::

    orders	0	41	key=41	value=Struct{ordertime=..., orderid=41, ...}

(topic, partition, offset, then ``key=`` and ``value=`` with the values' ``repr``; the
timestamp and headers too when ``print.timestamp`` / ``print.headers`` are true). Lines are
written per batch and flushed on ``flush``; standard output is not made durable, so this
sink is for people, not for keeping data.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Mapping, Sequence
from typing import IO, Any

from omconnect import __version__
from omconnect.config import ConfigDef, ConfigType, Importance
from omconnect.connector import SinkConnector, SinkTask
from omconnect.records import SinkRecord, TopicPartition

__all__ = ["ConsoleSinkConnector", "ConsoleSinkTask", "format_record"]

PRINT_KEY = "print.key"
PRINT_TIMESTAMP = "print.timestamp"
PRINT_HEADERS = "print.headers"

CONFIG_DEF = (
    ConfigDef()
    .define(PRINT_KEY, ConfigType.BOOLEAN, True, importance=Importance.LOW,
            documentation="Print each record's key.")
    .define(PRINT_TIMESTAMP, ConfigType.BOOLEAN, False, importance=Importance.LOW,
            documentation="Print each record's timestamp (ms since the epoch).")
    .define(PRINT_HEADERS, ConfigType.BOOLEAN, False, importance=Importance.LOW,
            documentation="Print each record's headers.")
)
"""The console sink's settings."""


def format_record(record: SinkRecord, *, key: bool = True, timestamp: bool = False,
                  headers: bool = False) -> str:
    """The line (without newline) the console sink prints for ``record``."""
    fields = [record.topic, str(record.partition), str(record.offset)]
    if timestamp:
        fields.append(f"timestamp={record.timestamp}")
    if key:
        fields.append(f"key={record.key!r}")
    fields.append(f"value={record.value!r}")
    if headers:
        fields.append("headers=" + ",".join(f"{h.key}={h.value!r}" for h in record.headers))
    return "\t".join(fields)


class ConsoleSinkConnector(SinkConnector):
    """Prints records to standard output (entry point ``console``), in one task."""

    def __init__(self) -> None:
        super().__init__()
        self._config: dict[str, Any] = {}

    def version(self) -> str:
        """The omconnect version."""
        return __version__

    def config_def(self) -> ConfigDef:
        """``print.key``, ``print.timestamp``, ``print.headers``."""
        return CONFIG_DEF

    def start(self, config: Mapping[str, Any]) -> None:
        """Keep the parsed config for the task."""
        self._config = CONFIG_DEF.parse(config, what="console sink configuration")

    def task_class(self) -> type[SinkTask]:
        """:class:`ConsoleSinkTask`."""
        return ConsoleSinkTask

    def task_configs(self, max_tasks: int) -> list[dict[str, Any]]:
        """One task (lines of several tasks would interleave on one terminal)."""
        return [{k: self._config[k] for k in CONFIG_DEF.names()}]

    def stop(self) -> None:
        """Nothing to release."""


class ConsoleSinkTask(SinkTask):
    """Prints each batch; ``flush`` flushes standard output."""

    def __init__(self, out: IO[str] | None = None) -> None:
        super().__init__()
        self._out = out
        self._lock = threading.Lock()

    def version(self) -> str:
        """The omconnect version."""
        return __version__

    def start(self, config: Mapping[str, Any]) -> None:
        """Read the config."""
        values = CONFIG_DEF.parse(config, what="console sink configuration")
        self._key = bool(values[PRINT_KEY])
        self._timestamp = bool(values[PRINT_TIMESTAMP])
        self._headers = bool(values[PRINT_HEADERS])

    @property
    def out(self) -> IO[str]:
        """Where lines go (standard output unless given to the constructor)."""
        return self._out if self._out is not None else sys.stdout

    def put(self, records: Sequence[SinkRecord]) -> None:
        """Print one line per record."""
        if not records:
            return
        text = "".join(format_record(r, key=self._key, timestamp=self._timestamp,
                                     headers=self._headers) + "\n" for r in records)
        with self._lock:
            self.out.write(text)

    def flush(self, offsets: Mapping[TopicPartition, int]) -> None:
        """Flush standard output."""
        with self._lock:
            self.out.flush()

    def stop(self) -> None:
        """Flush standard output."""
        with self._lock:
            self.out.flush()
