"""The ``embedded`` transport: the factory for its producers, consumers, stores and admin.

See the package docstring (:mod:`omconnect.transport.embedded`) for features, the
connection and the options.
"""

from __future__ import annotations

import os
import socket
import threading
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

from omconnect.config import ConfigDef, ConfigType, Importance, NonEmptyString, OneOf, Range
from omconnect.transport.capabilities import Capabilities
from omconnect.transport.embedded.admin import EmbeddedAdmin
from omconnect.transport.embedded.client import Database
from omconnect.transport.embedded.consumer import EmbeddedConsumer
from omconnect.transport.embedded.kv_store import EmbeddedKeyValueStore
from omconnect.transport.embedded.producer import EmbeddedProducer, LogWriter
from omconnect.transport.kit.checks import (
    MAX_PARTITIONS,
    check_consumer_args,
    no_native_options,
)
from omconnect.transport.kit.grouping import ASSIGNORS
from omconnect.transport.kit.partitioning import Partitioner
from omconnect.transport.spi import Admin, KeyValueStore, Producer, StartFrom, Transport

__all__ = ["EmbeddedTransport"]

_CONNECTION = "Connection"
_DURABILITY = "Durability"
_GROUPS = "Consumer groups"

CONFIG_DEF = (
    ConfigDef()
    .define("path", ConfigType.STRING, "./omconnect-data", importance=Importance.HIGH,
            validators=[NonEmptyString()], group=_CONNECTION,
            documentation="The data directory; it holds the database file omconnect.db. "
                          "Processes that use the same directory share topics, groups "
                          "and stores. Must be on a local filesystem.")
    .define("default.partitions", ConfigType.INT, 1,
            validators=[Range(min=1, max=MAX_PARTITIONS)], group=_CONNECTION,
            documentation="Partitions of a topic created by its first send.")
    .define("max.message.bytes", ConfigType.INT, 8 * 1024 * 1024,
            validators=[Range(min=1, max=512 * 1024 * 1024)], group=_CONNECTION,
            documentation="Largest message accepted (key + value + headers), in bytes.")
    .define("synchronous", ConfigType.STRING, "full", validators=[OneOf(("full", "normal"))],
            importance=Importance.HIGH, group=_DURABILITY,
            documentation="SQLite's synchronous setting. full: every acknowledged write "
                          "is fsync'ed, surviving a crash of the process or of the "
                          "machine. normal: acknowledged writes survive a crash of the "
                          "process, but the last ones may be lost if the machine loses "
                          "power.")
    .define("busy.timeout.ms", ConfigType.INT, 30_000, validators=[Range(min=0)],
            group=_DURABILITY,
            documentation="How long a write waits for another process's write to finish "
                          "before failing with a retriable error.")
    .define("max.pending.records", ConfigType.INT, 100_000, validators=[Range(min=1)],
            group=_DURABILITY,
            documentation="Records queued for writing beyond which send() blocks "
                          "(back-pressure), for at most busy.timeout.ms.")
    .define("session.timeout.ms", ConfigType.INT, 10_000, validators=[Range(min=1)],
            group=_GROUPS,
            documentation="A group member that has not heartbeated for this long (its "
                          "process died) is evicted; its partitions move to the others.")
    .define("heartbeat.interval.ms", ConfigType.INT, 1_000, validators=[Range(min=1)],
            group=_GROUPS,
            documentation="How often a member heartbeats and checks for group changes; "
                          "keep it well below session.timeout.ms.")
    .define("max.poll.interval.ms", ConfigType.INT, 300_000, validators=[Range(min=1)],
            group=_GROUPS,
            documentation="A member that does not poll for this long stops heart-beating, "
                          "so its partitions move after session.timeout.ms.")
    .define("poll.interval.ms", ConfigType.INT, 20, validators=[Range(min=1)],
            group=_GROUPS,
            documentation="How often an idle poll checks for messages written by other "
                          "processes (this process's writes wake it at once).")
    .define("group.assignment", ConfigType.STRING, "range",
            validators=[OneOf(tuple(ASSIGNORS))], group=_GROUPS,
            documentation="How a group shares partitions: range or roundrobin.")
)


class EmbeddedTransport(Transport):
    """A durable partitioned log on SQLite in a local directory.

    Args:
        config: Options without the ``embedded.`` prefix, e.g. ``{"path": "/var/data"}``.

    Raises:
        ConfigError: An option is unknown or invalid, or ``embedded.path`` cannot be used
            (each named as ``embedded.<key>``).
        TransportError: The database file cannot be opened.

    """

    name: ClassVar[str] = "embedded"
    config_def: ClassVar[ConfigDef] = CONFIG_DEF

    def __init__(self, config: Mapping[str, Any] | None = None) -> None:
        super().__init__(config)
        self.path = Path(self.config["path"]).expanduser()
        self.database = Database(self.path, synchronous=self.config["synchronous"],
                                 busy_timeout_ms=self.config["busy.timeout.ms"])
        self._partitioner = Partitioner()
        self._writer: LogWriter | None = None
        self._lock = threading.Lock()
        self._closed = False
        self._capabilities = Capabilities(
            ordered_per_key=True,
            consumer_groups=True,
            replayable=True,
            persistent=True,
            new_subscriber_receives_old_messages=True,
            transactions=False,
            pause=True,
            cross_process=True,
            headers=True,
            max_message_bytes=self.config["max.message.bytes"],
            max_partitions=MAX_PARTITIONS,
        )

    @property
    def capabilities(self) -> Capabilities:
        """Replayable, persistent, cross-process, ordered per key, with groups."""
        return self._capabilities

    def producer(self, options: Mapping[str, Any] | None = None) -> Producer:
        """A producer; its acknowledgements mean "committed to the database file"."""
        no_native_options(options, "producer")
        return EmbeddedProducer(self._log_writer(),
                                max_message_bytes=self.config["max.message.bytes"])

    def consumer(
        self,
        group: str | None = None,
        *,
        start: StartFrom = "earliest",
        options: Mapping[str, Any] | None = None,
    ) -> EmbeddedConsumer:
        """A consumer in ``group`` (``None`` for one that only assigns)."""
        self._check_open()
        no_native_options(options, "consumer")
        check_consumer_args(group, start)
        config = self.config
        return EmbeddedConsumer(
            self.database,
            group=group,
            start=start,
            member_id=f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:8]}",
            assignor=ASSIGNORS[config["group.assignment"]],
            session_timeout_ms=config["session.timeout.ms"],
            heartbeat_interval_ms=config["heartbeat.interval.ms"],
            max_poll_interval_ms=config["max.poll.interval.ms"],
            poll_interval_ms=config["poll.interval.ms"],
        )

    def kv_store(self, namespace: str) -> KeyValueStore:
        """The durable store ``namespace`` (created if missing)."""
        self._check_open()
        if not isinstance(namespace, str) or not namespace:
            raise ValueError(f"a key/value store needs a non-empty namespace, got {namespace!r}")
        return EmbeddedKeyValueStore(self.database, namespace)

    def admin(self) -> Admin:
        """An admin client."""
        self._check_open()
        return EmbeddedAdmin(self.database)

    def close(self) -> None:
        """Write what producers queued, then stop the writer thread. Idempotent.

        Consumers, stores and admins opened from this transport stay usable until closed
        themselves.
        """
        with self._lock:
            self._closed = True
            writer, self._writer = self._writer, None
        if writer is not None:
            writer.close()


    def _log_writer(self) -> LogWriter:
        with self._lock:
            self._check_open()
            if self._writer is None:
                self._writer = LogWriter(self.database, self._partitioner,
                                         default_partitions=self.config["default.partitions"],
                                         max_pending_records=self.config["max.pending.records"])
            return self._writer
