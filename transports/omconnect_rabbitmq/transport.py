"""The ``rabbitmq`` transport: the factory for its producers, consumers, stores and admin.

See the package docstring (:mod:`omconnect_rabbitmq`) for features, the connection, the
options and the mapping onto exchanges and queues.
"""

from __future__ import annotations

import os
import socket
import threading
import uuid
from collections.abc import Mapping
from typing import Any, ClassVar

from omconnect.config import ConfigDef, ConfigType, Importance, OneOf, Range
from omconnect.errors import ConfigError
from omconnect.transport.capabilities import Capabilities
from omconnect.transport.kit.checks import MAX_PARTITIONS, check_consumer_args
from omconnect.transport.kit.grouping import ASSIGNORS
from omconnect.transport.kit.partitioning import Partitioner
from omconnect.transport.spi import Admin, KeyValueStore, Producer, StartFrom, Transport
from omconnect_rabbitmq.admin import RabbitMQAdmin, Topology
from omconnect_rabbitmq.client import ConnectionSettings
from omconnect_rabbitmq.consumer import RabbitMQConsumer
from omconnect_rabbitmq.kv_store import StreamKeyValueStore
from omconnect_rabbitmq.producer import RabbitMQProducer
from omconnect_rabbitmq.topology import POSITIONS_NAMESPACE

__all__ = ["CONFIG_DEF", "RabbitMQTransport"]

_CONNECTION = "Connection"
_TOPICS = "Topics"
_GROUPS = "Consumer groups"
_TLS = "TLS"

CONFIG_DEF = (
    ConfigDef()
    .define("url", ConfigType.PASSWORD, "amqp://guest:guest@127.0.0.1:5672/%2F",
            importance=Importance.HIGH, group=_CONNECTION,
            documentation="AMQP URL of the broker and vhost: amqp://user:password@host:port/"
                          "vhost (vhost percent-encoded; %2F is '/'); amqps:// for TLS. "
                          "pika's URL query options (heartbeat, channel_max, ...) apply.")
    .define("connection.timeout.ms", ConfigType.INT, 10_000, validators=[Range(min=100)],
            importance=Importance.HIGH, group=_CONNECTION,
            documentation="How long opening a connection (TCP, TLS, AMQP handshake) and each "
                          "broker round trip may take before a TransportTimeoutError.")
    .define("reconnect.backoff.ms", ConfigType.INT, 100, validators=[Range(min=1)],
            group=_CONNECTION,
            documentation="Wait before the first attempt to re-open a lost connection; it "
                          "doubles after each failed attempt.")
    .define("reconnect.backoff.max.ms", ConfigType.INT, 5_000, validators=[Range(min=1)],
            group=_CONNECTION,
            documentation="The longest wait between two reconnection attempts.")
    .define("heartbeat.s", ConfigType.INT, None, validators=[Range(min=0)], group=_CONNECTION,
            documentation="AMQP heartbeat in seconds (0 turns it off); unset: the broker's.")
    .define("tls.ca.file", ConfigType.STRING, None, group=_TLS,
            documentation="CA bundle to verify the broker's certificate (amqps:// URLs).")
    .define("tls.cert.file", ConfigType.STRING, None, group=_TLS,
            documentation="Client certificate (PEM) for mutual TLS.")
    .define("tls.key.file", ConfigType.STRING, None, group=_TLS,
            documentation="Private key of the client certificate.")
    .define("tls.verify", ConfigType.BOOLEAN, True, group=_TLS,
            documentation="Verify the broker's certificate and host name.")
    .define("tls.server.name", ConfigType.STRING, None, group=_TLS,
            documentation="Host name to verify and send as SNI (default: the URL's host).")
    .define("default.partitions", ConfigType.INT, 1,
            validators=[Range(min=1, max=MAX_PARTITIONS)], group=_TOPICS,
            documentation="Partitions of a topic created by its first send or subscribe.")
    .define("max.message.bytes", ConfigType.INT, 8 * 1024 * 1024,
            validators=[Range(min=1, max=512 * 1024 * 1024)], group=_TOPICS,
            documentation="Largest message accepted (key + value + headers), checked before "
                          "sending; keep it at or below the broker's max_message_size "
                          "(RabbitMQ's default is 128 MiB).")
    .define("streams", ConfigType.BOOLEAN, True, importance=Importance.HIGH, group=_TOPICS,
            documentation="Make every topic a stream (RabbitMQ 3.9+): replayable (offsets, "
                          "seek, assign) and a new group reads what was sent before it "
                          "existed, as on Kafka. false: classic queues per group, which keep "
                          "only what is sent after a group's queues exist (a send no queue "
                          "takes fails, retriably).")
    .define("stream.topics", ConfigType.LIST, [], group=_TOPICS,
            documentation="Topics that are streams even with streams=false.")
    .define("declare.groups", ConfigType.LIST, [], group=_TOPICS,
            documentation="Groups whose queues are declared whenever a classic topic is "
                          "created, so they keep messages sent before their first consumer "
                          "subscribes.")
    .define("prefetch", ConfigType.INT, 1000, validators=[Range(min=1, max=30_000)],
            importance=Importance.MEDIUM, group=_GROUPS,
            documentation="How many messages per partition the broker may push to a consumer "
                          "ahead of its polls (basic.qos).")
    .define("session.timeout.ms", ConfigType.INT, 10_000, validators=[Range(min=100)],
            group=_GROUPS,
            documentation="A group member not heard from for this long (its process died) is "
                          "dropped; its partitions move to the others.")
    .define("heartbeat.interval.ms", ConfigType.INT, 1_000, validators=[Range(min=10)],
            group=_GROUPS,
            documentation="How often members announce themselves and re-check the "
                          "assignment; keep it well below session.timeout.ms.")
    .define("group.assignment", ConfigType.STRING, "range", validators=[OneOf(tuple(ASSIGNORS))],
            group=_GROUPS, documentation="How a group shares partitions: range or roundrobin.")
)

_CLIENT_OPTIONS = frozenset({
    "channel_max", "frame_max", "heartbeat", "blocked_connection_timeout", "client_properties",
    "locale", "tcp_options", "socket_timeout", "stack_timeout",
})
"""pika ConnectionParameters attributes a producer or consumer may set (native options)."""


class RabbitMQTransport(Transport):
    """Topics on RabbitMQ exchanges and queues; see :mod:`omconnect_rabbitmq`.

    Args:
        config: Options without the ``rabbitmq.`` prefix, e.g. ``{"url": "amqp://..."}``.

    Raises:
        ConfigError: An option is unknown or invalid (named as ``rabbitmq.<key>``).

    """

    name: ClassVar[str] = "rabbitmq"
    client_loggers: ClassVar[tuple[str, ...]] = ("pika",)
    config_def: ClassVar[ConfigDef] = CONFIG_DEF

    def __init__(self, config: Mapping[str, Any] | None = None) -> None:
        super().__init__(config)
        config = self.config
        url = config["url"]
        url = url.value() if hasattr(url, "value") else str(url)
        if not url.startswith(("amqp://", "amqps://")):
            raise ConfigError("rabbitmq.url must be an amqp:// or amqps:// URL, got "
                              f"{url.split('@')[-1]!r}", key="rabbitmq.url")
        tls = {key[4:]: config[key] for key in ("tls.ca.file", "tls.cert.file", "tls.key.file",
                                                "tls.server.name") if config[key]}
        if tls or not config["tls.verify"]:
            tls["verify"] = config["tls.verify"]
        self.settings = ConnectionSettings(
            url=url,
            timeout=config["connection.timeout.ms"] / 1000,
            backoff=config["reconnect.backoff.ms"] / 1000,
            backoff_max=config["reconnect.backoff.max.ms"] / 1000,
            heartbeat=config["heartbeat.s"],
            tls=tls,
        )
        self.topology = Topology(
            self.settings,
            default_partitions=config["default.partitions"],
            all_streams=config["streams"],
            stream_topics=config["stream.topics"],
            declare_groups=config["declare.groups"],
        )
        self._partitioner = Partitioner()
        self._positions: StreamKeyValueStore | None = None
        self._lock = threading.Lock()
        self._closed = False
        streams = bool(config["streams"])
        self._capabilities = Capabilities(
            ordered_per_key=True,
            consumer_groups=True,
            replayable=streams,
            persistent=True,
            new_subscriber_receives_old_messages=streams,
            transactions=False,
            pause=True,
            cross_process=True,
            headers=True,
            max_message_bytes=config["max.message.bytes"],
            max_partitions=MAX_PARTITIONS,
        )

    @property
    def capabilities(self) -> Capabilities:
        """Persistent, ordered per key, with groups; replayable (and new groups read old
        messages) with ``rabbitmq.streams=true`` (the default), which makes every topic a
        stream.
        """
        return self._capabilities

    def _settings_with(self, options: Mapping[str, Any] | None, what: str) -> ConnectionSettings:
        if not options:
            return self.settings
        unknown = sorted(set(options) - _CLIENT_OPTIONS)
        if unknown:
            raise ConfigError(
                f"unknown native rabbitmq {what} option(s) {unknown}; the pika connection "
                f"settings allowed are: {', '.join(sorted(_CLIENT_OPTIONS))}", key=unknown[0])
        import attrs

        return attrs.evolve(self.settings, client=dict(options))

    def producer(self, options: Mapping[str, Any] | None = None) -> Producer:
        """A producer with its own connection; acknowledgements are publisher confirms."""
        self._check_open()
        return RabbitMQProducer(self._settings_with(options, "producer"), self.topology,
                                max_message_bytes=self.config["max.message.bytes"],
                                partitioner=self._partitioner)

    def consumer(
        self,
        group: str | None = None,
        *,
        start: StartFrom = "earliest",
        options: Mapping[str, Any] | None = None,
    ) -> RabbitMQConsumer:
        """A consumer with its own connection, in ``group`` (``None``: stream topics only,
        through ``assign``).
        """
        self._check_open()
        check_consumer_args(group, start)
        config = self.config
        return RabbitMQConsumer(
            self._settings_with(options, "consumer"),
            self.topology,
            self._positions_store,
            group=group,
            start=start,
            prefetch=config["prefetch"],
            assignor=ASSIGNORS[config["group.assignment"]],
            heartbeat_interval=config["heartbeat.interval.ms"] / 1000,
            session_timeout_ms=config["session.timeout.ms"],
            member_id=f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:8]}",
        )

    def _positions_store(self) -> StreamKeyValueStore:
        with self._lock:
            self._check_open()
            if self._positions is None:
                self._positions = StreamKeyValueStore(self.settings, POSITIONS_NAMESPACE)
            return self._positions

    def kv_store(self, namespace: str) -> KeyValueStore:
        """The durable store ``namespace`` (a stream queue; created if missing)."""
        self._check_open()
        return StreamKeyValueStore(self.settings, namespace)

    def admin(self) -> Admin:
        """An admin over the transport's shared administration connection."""
        self._check_open()
        return RabbitMQAdmin(self.topology)

    def close(self) -> None:
        """Close the shared connections (catalog, positions, administration). Idempotent.

        Producers, consumers and stores opened from this transport have connections of
        their own and stay usable until closed themselves.
        """
        with self._lock:
            self._closed = True
            positions, self._positions = self._positions, None
        self.topology.close()
        if positions is not None:
            positions.close()

