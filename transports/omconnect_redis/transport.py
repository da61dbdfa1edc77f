"""The ``redis`` transport: Redis Streams, on the kit's log-transport base.

See the package docstring (:mod:`omconnect_redis`) for features, the connection and the
options, and ``docs/transports/redis.md`` for the whole story.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any, ClassVar

from omconnect.config import ConfigDef, ConfigType, Importance, NonEmptyString, Password, Range
from omconnect.errors import ConfigError
from omconnect.transport.capabilities import Capabilities
from omconnect.transport.kit.checks import MAX_PARTITIONS, check_consumer_args
from omconnect.transport.kit.log_transport import LOG_CONFIG_DEF, LogTransport
from omconnect.transport.spi import Producer, StartFrom
from omconnect_redis.client import Keys, open_pool, public_url, redis_client, redis_module
from omconnect_redis.consumer import RedisConsumer
from omconnect_redis.errors import ErrorContext, translated_errors
from omconnect_redis.store import RedisLogStore

__all__ = ["CONFIG_DEF", "RedisTransport"]

_CONNECTION = "Connection"

CONFIG_DEF = LOG_CONFIG_DEF.merge(
    ConfigDef()
    .define("url", ConfigType.STRING, "redis://127.0.0.1:6379/0", importance=Importance.HIGH,
            validators=[NonEmptyString()], group=_CONNECTION,
            documentation="The server: redis://[user:password@]host:port/db, rediss:// for "
                          "TLS (TLS settings such as ssl_ca_certs in the query string), or "
                          "unix:///path/to/socket?db=0.")
    .define("password", ConfigType.PASSWORD, None, group=_CONNECTION,
            documentation="The password (overrides one in url; keeps it out of the URL).")
    .define("key.prefix", ConfigType.STRING, "omc:", validators=[NonEmptyString()],
            group=_CONNECTION,
            documentation="What every key the transport writes starts with; transports with "
                          "different prefixes share a database without seeing each other.")
    .define("operation.timeout.ms", ConfigType.INT, 10_000,
            validators=[Range(min=1, max=3_600_000)], importance=Importance.HIGH,
            group=_CONNECTION,
            documentation="How long a command may wait for the server's answer; an "
                          "unreachable server fails within it with a TransportTimeoutError.")
    .define("connection.timeout.ms", ConfigType.INT, 5_000, validators=[Range(min=1)],
            group=_CONNECTION, documentation="How long opening a connection may take.")
    .define("max.length", ConfigType.LONG, 0, validators=[Range(min=0)],
            documentation="Entries each partition's stream keeps, trimmed approximately "
                          "(XTRIM MAXLEN ~) after each append; older records are gone "
                          "whether or not a group read them. 0 keeps everything.")
)
"""The options of the ``redis`` transport (written ``redis.<key>`` in worker configs): its
own and the log-transport options (``default.partitions``, ``max.message.bytes``,
``session.timeout.ms``, ...)."""


class RedisTransport(LogTransport):
    """Redis Streams: a stream per partition, offsets as entry ids, groups and committed
    positions in hashes, the key/value store in a hash per namespace.

    Args:
        config: Options without the ``redis.`` prefix, e.g.
            ``{"url": "redis://127.0.0.1:6379/0"}``.

    Raises:
        ConfigError: An option is unknown or invalid, naming it as ``redis.<key>``.
        MissingExtraError: redis-py is not installed (``omconnect[redis]``).

    """

    name: ClassVar[str] = "redis"
    config_def: ClassVar[ConfigDef] = CONFIG_DEF
    client_loggers: ClassVar[tuple[str, ...]] = ("redis",)
    cross_process: ClassVar[bool] = True

    def __init__(self, config: Mapping[str, Any] | None = None) -> None:
        super().__init__(config)
        redis_module()
        c = self.config
        self.keys = Keys(c["key.prefix"])
        self.where = ErrorContext(public_url(c["url"]), c["operation.timeout.ms"] / 1000)
        password = c["password"]
        with translated_errors("reading redis.url", self.where):
            self._pool = open_pool(
                c["url"], password=password.value() if isinstance(password, Password)
                else password, operation_timeout_s=c["operation.timeout.ms"] / 1000,
                connection_timeout_s=c["connection.timeout.ms"] / 1000)
        self._persistent: bool | None = None
        self._lock = threading.Lock()

    @property
    def capabilities(self) -> Capabilities:
        """Ordered per key, groups, replay, pause, headers, cross-process; ``persistent``
        as the server is configured (:meth:`server_persists`).

        Raises:
            TransportError: The server cannot be asked (asked once per transport).

        """
        return Capabilities(
            ordered_per_key=True, consumer_groups=True, replayable=True,
            persistent=self.server_persists(), new_subscriber_receives_old_messages=True,
            pause=True, cross_process=True, headers=True,
            max_message_bytes=self.config["max.message.bytes"], max_partitions=MAX_PARTITIONS)

    def server_persists(self) -> bool:
        """Whether the server keeps acknowledged records across a restart: its
        append-only file is on (``CONFIG GET appendonly``, or ``INFO persistence``'s
        ``aof_enabled`` where ``CONFIG`` is not allowed). RDB snapshots alone (``save``)
        lose what came after the last one, so they do not count. Asked once.

        Raises:
            TransportError: The server cannot be asked.

        """
        with self._lock:
            if self._persistent is None:
                client = redis_client(self._pool)
                with translated_errors("reading the server's persistence settings",
                                       self.where):
                    try:
                        reply = client.config_get("appendonly")
                        answer = reply.get("appendonly", reply.get(b"appendonly"))
                        persistent = answer in ("yes", b"yes")
                    except redis_module().ResponseError:  # CONFIG refused (ACL, renamed)
                        info = client.info("persistence")
                        persistent = int(info.get("aof_enabled", 0)) == 1
                self._persistent = persistent
            return self._persistent

    def open_store(self) -> RedisLogStore:
        """A store on the transport's connection pool."""
        self._check_open()
        return RedisLogStore(redis_client(self._pool), self.keys, self.where,
                             max_length=self.config["max.length"])

    def producer(self, options: Mapping[str, Any] | None = None) -> Producer:
        """A producer on the transport's writer thread (``options`` must be empty: every
        producer shares the transport's connections).
        """
        _no_client_options(options, "producer")
        return super().producer()

    def consumer(self, group: str | None = None, *, start: StartFrom = "earliest",
                 options: Mapping[str, Any] | None = None) -> RedisConsumer:
        """A consumer in ``group`` (``None``: one that only assigns), woken by the server
        when records arrive (``options`` must be empty).
        """
        self._check_open()
        _no_client_options(options, "consumer")
        check_consumer_args(group, start)
        consumer = RedisConsumer(self, group=group, start=start)
        self._keep(consumer)
        return consumer

    def close(self) -> None:
        """Store what producers sent, close every client, then the connections.
        Idempotent.
        """
        try:
            super().close()
        finally:
            self._pool.disconnect()


def _no_client_options(options: Mapping[str, Any] | None, what: str) -> None:
    """Raise if ``options`` is not empty: redis-py has no settings per producer or
    consumer; the connection's are the transport's options.

    Raises:
        ConfigError: Naming the options to remove.

    """
    if options:
        keys = ", ".join(sorted(options))
        raise ConfigError(f"the redis transport takes no {what} options of its client "
                          f"(connections are set with the transport's redis.* options); "
                          f"remove: {keys}", key=next(iter(sorted(options))))
