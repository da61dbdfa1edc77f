"""The ``embedded`` transport: the factory for its producers, consumers, stores and admin.

See the package docstring (:mod:`omconnect.transport.embedded`) for features, the
connection and the options.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

from omconnect.config import ConfigDef, ConfigType, Importance, NonEmptyString, OneOf, Range
from omconnect.transport.embedded.client import Database
from omconnect.transport.embedded.store import EmbeddedStore
from omconnect.transport.kit.checks import MAX_PARTITIONS
from omconnect.transport.kit.grouping import ASSIGNORS
from omconnect.transport.kit.log_transport import LogTransport

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


class EmbeddedTransport(LogTransport):
    """A durable partitioned log on SQLite in a local directory: the kit's
    :class:`~omconnect.transport.kit.log_transport.LogTransport` on an
    :class:`~omconnect.transport.embedded.store.EmbeddedStore`.

    Args:
        config: Options without the ``embedded.`` prefix, e.g. ``{"path": "/var/data"}``.

    Raises:
        ConfigError: An option is unknown or invalid, or ``embedded.path`` cannot be used
            (each named as ``embedded.<key>``).
        TransportError: The database file cannot be opened.

    """

    name: ClassVar[str] = "embedded"
    config_def: ClassVar[ConfigDef] = CONFIG_DEF
    persistent: ClassVar[bool] = True
    cross_process: ClassVar[bool] = True

    def __init__(self, config: Mapping[str, Any] | None = None) -> None:
        super().__init__(config)
        self.path = Path(self.config["path"]).expanduser()
        self.database = Database(self.path, synchronous=self.config["synchronous"],
                                 busy_timeout_ms=self.config["busy.timeout.ms"])

    def open_store(self) -> EmbeddedStore:
        """A store on a connection of its own."""
        return EmbeddedStore(self.database)

    @property
    def send_timeout(self) -> float:
        """A send blocks on a full queue for at most ``busy.timeout.ms``."""
        return float(self.config["busy.timeout.ms"]) / 1000

    def notify(self) -> None:
        """Wake the consumers of this database in this process, whichever transport
        object opened them.
        """
        self.database.notify()

    def listen(self, signal: threading.Event, *, stop: bool = False) -> None:
        """Have writes to this database in this process set ``signal``."""
        (self.database.signals.discard if stop else self.database.signals.add)(signal)
