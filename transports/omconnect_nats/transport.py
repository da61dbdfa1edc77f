"""The ``nats`` transport: the factory for its producers, consumers, stores and admin.

See the package docstring (:mod:`omconnect_nats`) for features, the connection, the
options and the mapping onto JetStream, and ``docs/transports/nats.md`` for the full
story.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import socket
import ssl
import uuid
import weakref
from collections.abc import Mapping
from typing import Any, ClassVar

from omconnect.config import (
    ConfigDef,
    ConfigType,
    Importance,
    OneOf,
    Password,
    Range,
    Regex,
)
from omconnect.errors import ConfigError
from omconnect.transport.capabilities import Capabilities
from omconnect.transport.kit.checks import MAX_PARTITIONS, check_consumer_args
from omconnect.transport.kit.grouping import ASSIGNORS, GroupMember
from omconnect.transport.kit.partitioning import Partitioner
from omconnect.transport.spi import Admin, KeyValueStore, Producer, StartFrom, Transport
from omconnect_nats.admin import NatsAdmin
from omconnect_nats.client import CLIENT_LOGGER, NatsClient, nats_module
from omconnect_nats.consumer import NatsConsumer, ReaderSettings, heartbeat_for
from omconnect_nats.errors import ErrorContext
from omconnect_nats.groups import NatsGroupStore
from omconnect_nats.kv_store import NatsKeyValueStore
from omconnect_nats.naming import Names
from omconnect_nats.producer import NatsProducer, PartitionCounts
from omconnect_nats.pulling import Mailbox
from omconnect_nats.topics import Topology

__all__ = ["CONFIG_DEF", "NatsTransport"]

_CONNECTION = "Connection"
_SECURITY = "Security"
_TOPICS = "Topics"
_PRODUCER = "Producer"
_CONSUMER = "Consumer"
_PASS_THROUGH = ("client.",)

CONFIG_DEF = (
    ConfigDef()
    .define("servers", ConfigType.LIST, ["nats://127.0.0.1:4222"], importance=Importance.HIGH,
            group=_CONNECTION,
            documentation="The NATS servers (comma-separated URLs, nats:// or tls://); the "
                          "client connects to one and fails over to the others. The "
                          "server needs JetStream (nats-server -js).")
    .define("connection.timeout.ms", ConfigType.INT, 5_000, validators=[Range(min=100)],
            group=_CONNECTION,
            documentation="How long one attempt to connect to a server may take.")
    .define("request.timeout.ms", ConfigType.INT, 10_000, validators=[Range(min=100)],
            importance=Importance.HIGH, group=_CONNECTION,
            documentation="How long a JetStream API call (creating a topic, a commit, a "
                          "key/value read) may take; an unreachable server fails within "
                          "it (plus the connection timeout) with a TransportTimeoutError.")
    .define("reconnect.wait.ms", ConfigType.INT, 500, validators=[Range(min=1)],
            group=_CONNECTION,
            documentation="Wait between two attempts to reconnect a lost connection "
                          "(the client reconnects for as long as the transport is open).")
    .define("prefix", ConfigType.STRING, "omc", validators=[Regex(r"[A-Za-z0-9-]+")],
            group=_CONNECTION,
            documentation="Prefix of every stream, subject and bucket the transport uses "
                          "(letters, digits and '-'): topic t's partition p is stream "
                          "<prefix>_t_p on subject <prefix>.t.p.")
    .define("user", ConfigType.STRING, None, group=_SECURITY,
            documentation="User name (with nats.password).")
    .define("password", ConfigType.PASSWORD, None, group=_SECURITY,
            documentation="Password of nats.user.")
    .define("token", ConfigType.PASSWORD, None, group=_SECURITY,
            documentation="An authentication token.")
    .define("creds.file", ConfigType.STRING, None, group=_SECURITY,
            documentation="A credentials file (JWT and NKey seed), as NATS accounts use.")
    .define("tls.ca.file", ConfigType.STRING, None, group=_SECURITY,
            documentation="CA bundle to verify the server's certificate (turns TLS on).")
    .define("tls.cert.file", ConfigType.STRING, None, group=_SECURITY,
            documentation="Client certificate (PEM) for mutual TLS.")
    .define("tls.key.file", ConfigType.STRING, None, group=_SECURITY,
            documentation="Private key of the client certificate.")
    .define("storage", ConfigType.STRING, "file", validators=[OneOf(("file", "memory"))],
            importance=Importance.HIGH, group=_TOPICS,
            documentation="Where streams the transport creates keep their messages: file "
                          "(they survive a server restart) or memory (they do not: the "
                          "transport then declares persistent=false).")
    .define("replicas", ConfigType.INT, 1, validators=[Range(min=1, max=5)], group=_TOPICS,
            documentation="Replicas of each stream and bucket (a JetStream cluster).")
    .define("default.partitions", ConfigType.INT, 1,
            validators=[Range(min=1, max=MAX_PARTITIONS)], group=_TOPICS,
            documentation="Partitions of a topic created by its first message.")
    .define("max.message.bytes", ConfigType.INT, 1_000_000, validators=[Range(min=1)],
            group=_PRODUCER,
            documentation="Largest message accepted (key + value + headers), checked "
                          "before sending. The server's max_payload (1 MiB by default) "
                          "bounds the message as sent, NATS headers included: a message "
                          "over it fails too.")
    .define("send.timeout.ms", ConfigType.INT, 30_000, validators=[Range(min=1)],
            group=_PRODUCER,
            documentation="A message not acknowledged (PubAck) within this fails, "
                          "retriably; and the longest a send blocks for room.")
    .define("max.pending.messages", ConfigType.INT, 20_000, validators=[Range(min=1)],
            group=_PRODUCER,
            documentation="Messages a producer may have awaiting their acknowledgements; "
                          "beyond it send blocks (back-pressure).")
    .define("fetch.max.messages", ConfigType.INT, 1000, validators=[Range(min=1)],
            group=_CONSUMER,
            documentation="Messages each partition's reader asks the server for at once: "
                          "the most it buffers ahead of the polls.")
    .define("fetch.wait.ms", ConfigType.INT, 5_000, validators=[Range(min=100)],
            group=_CONSUMER,
            documentation="How long a reader's pull request waits on the server for "
                          "messages before it is renewed.")
    .define("reader.inactive.threshold.ms", ConfigType.INT, 300_000,
            validators=[Range(min=1000)], group=_CONSUMER,
            documentation="The server deletes a reader's consumer unused for this long "
                          "(a reader of a killed process, or of a long-paused partition; "
                          "a paused reader opens again where it stood).")
    .define("session.timeout.ms", ConfigType.INT, 10_000, validators=[Range(min=1)],
            group=_CONSUMER,
            documentation="A group member not heard from for this long (its process died) "
                          "is evicted; its partitions move to the others.")
    .define("heartbeat.interval.ms", ConfigType.INT, 500, validators=[Range(min=1)],
            group=_CONSUMER,
            documentation="How often a group member heartbeats and looks for group "
                          "changes.")
    .define("max.poll.interval.ms", ConfigType.INT, 300_000, validators=[Range(min=1)],
            group=_CONSUMER,
            documentation="A group member that does not poll for this long stops "
                          "heart-beating, so its partitions move after session.timeout.ms.")
    .define("group.assignment", ConfigType.STRING, "range",
            validators=[OneOf(tuple(ASSIGNORS))], group=_CONSUMER,
            documentation="How a group shares partitions: range or roundrobin.")
)
"""The options of the ``nats`` transport (written ``nats.<key>`` in worker configs).

Besides these, ``client.*`` passes keyword arguments through to ``nats.connect`` (e.g.
``nats.client.ping_interval=20``; numbers and booleans are parsed).
"""


_open_transports: weakref.WeakSet[NatsTransport] = weakref.WeakSet()


def _flush_at_exit() -> None:
    """Wait (briefly) for the acknowledgements of what open transports' producers sent:
    a process that sent and exits without closing still gets its messages stored. Runs
    before the clients' own exit hook closes their connections.
    """
    for transport in list(_open_transports):
        for producer in list(transport._producers):
            with contextlib.suppress(Exception):
                producer.flush(5.0)


atexit.register(_flush_at_exit)


class NatsTransport(Transport):
    """NATS JetStream through nats-py: a stream per partition, groups over key/value
    buckets, a key/value store per bucket.

    Args:
        config: Options without the ``nats.`` prefix, e.g.
            ``{"servers": "nats://127.0.0.1:4222"}``.

    Raises:
        ConfigError: An option is unknown or invalid, naming it as ``nats.<key>``.
        MissingExtraError: nats-py is not installed (``omconnect[nats]``).

    """

    name: ClassVar[str] = "nats"
    client_loggers: ClassVar[tuple[str, ...]] = ("nats", "omconnect_nats.client")
    config_def: ClassVar[ConfigDef] = CONFIG_DEF
    native_option_prefixes: ClassVar[tuple[str, ...]] = _PASS_THROUGH
    native_option_hint: ClassVar[str | None] = (
        "options are nats.<" + "|".join(CONFIG_DEF.names()) + "> and pass-through "
        "nats.client.* (keyword arguments of nats.connect)")

    def __init__(self, config: Mapping[str, Any] | None = None) -> None:
        given = dict(config or {})
        super().__init__(given)
        nats = nats_module()
        c = self.config
        servers = [s.strip() for s in c["servers"] if s.strip()]
        if not servers:
            raise ConfigError("nats.servers: give at least one server URL",
                              key="nats.servers")
        self.where = ErrorContext(", ".join(servers), c["request.timeout.ms"] / 1000,
                                  c["max.message.bytes"])
        self.topology = Topology(Names(c["prefix"]), storage=c["storage"],
                                 replicas=c["replicas"], nats_api=nats.js.api)
        self._producers: weakref.WeakSet[NatsProducer] = weakref.WeakSet()
        self._consumers: weakref.WeakSet[NatsConsumer] = weakref.WeakSet()
        self.client = NatsClient(
            servers, self._connect_options(given), request_timeout=self.where.timeout_s,
            name=f"{c['prefix']}-{os.getpid()}", on_disconnected=self._disconnected,
            on_reconnected=self._reconnected)
        self.mailbox = Mailbox()
        self._counts = PartitionCounts(self.topology, c["default.partitions"])
        self._partitioner = Partitioner()
        self._capabilities = Capabilities(
            ordered_per_key=True, consumer_groups=True, replayable=True,
            persistent=c["storage"] == "file", new_subscriber_receives_old_messages=True,
            transactions=False, pause=True, cross_process=True, headers=True,
            max_message_bytes=c["max.message.bytes"], max_partitions=MAX_PARTITIONS)
        _open_transports.add(self)

    @property
    def capabilities(self) -> Capabilities:
        """Ordered per key, groups, replay, pause, headers, cross-process; persistent with
        file storage.
        """
        return self._capabilities

    def producer(self, options: Mapping[str, Any] | None = None) -> Producer:
        """A producer (``options`` are not used: the connection is the transport's)."""
        self._check_open()
        _no_options(options, "producer")
        c = self.config
        producer = NatsProducer(
            self.client, self.topology, self.mailbox, self._counts, self._partitioner,
            max_message_bytes=c["max.message.bytes"], max_pending=c["max.pending.messages"],
            send_timeout=c["send.timeout.ms"] / 1000, where=self.where)
        self._producers.add(producer)
        return producer

    def consumer(self, group: str | None = None, *, start: StartFrom = "earliest",
                 options: Mapping[str, Any] | None = None) -> NatsConsumer:
        """A consumer in ``group`` (``None``: one that only assigns)."""
        self._check_open()
        _no_options(options, "consumer")
        check_consumer_args(group, start)
        c = self.config
        member = heartbeat = None
        if group is not None:
            member_id = f"nats-{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
            interval = c["heartbeat.interval.ms"] / 1000
            member = GroupMember(NatsGroupStore(self.client, self.topology, group, self.where),
                                 member_id, assignor=ASSIGNORS[c["group.assignment"]],
                                 heartbeat_interval=interval,
                                 session_timeout_ms=c["session.timeout.ms"])
            heartbeat = heartbeat_for(self.client, self.topology, group, member_id, interval,
                                      self.where)
        consumer = NatsConsumer(
            self.client, self.topology, group=group, start=start,
            readers=ReaderSettings(c["fetch.max.messages"], c["fetch.wait.ms"] / 1000,
                                   c["reader.inactive.threshold.ms"] / 1000),
            member=member, heartbeat=heartbeat,
            max_poll_interval=c["max.poll.interval.ms"] / 1000, where=self.where)
        self._consumers.add(consumer)
        return consumer

    def kv_store(self, namespace: str) -> KeyValueStore:
        """The durable store ``namespace`` on bucket ``<prefix>-kv-<namespace>``."""
        self._check_open()
        if not isinstance(namespace, str) or not namespace:
            raise ValueError(f"a key/value store needs a non-empty namespace, got {namespace!r}")
        return NatsKeyValueStore(self.client, self.topology, namespace, self.where)

    def admin(self) -> Admin:
        """Topic administration."""
        self._check_open()
        return NatsAdmin(self.client, self.topology, where=self.where,
                         forget=self._counts.forget)

    def close(self) -> None:
        """Close every consumer, wait briefly for what producers sent, then close the
        connection and stop its loop. Idempotent.
        """
        if self._closed:
            return
        self._closed = True
        _open_transports.discard(self)
        for producer in list(self._producers):
            try:
                producer.close(self.where.timeout_s)
            except Exception as exc:
                CLIENT_LOGGER.info("nats: closing a producer: %s", exc)
        for consumer in list(self._consumers):
            try:
                consumer.close()
            except Exception as exc:
                CLIENT_LOGGER.info("nats: closing a consumer: %s", exc)
        self.client.close(timeout=self.where.timeout_s)

    # -- connection events (on the loop) -------------------------------------------------

    def _disconnected(self) -> None:
        for producer in list(self._producers):
            producer.connection_lost()

    def _reconnected(self) -> None:
        for consumer in list(self._consumers):
            consumer.reconnected()

    # -- options -------------------------------------------------------------------------

    def _connect_options(self, given: Mapping[str, Any]) -> dict[str, Any]:
        c = self.config
        options: dict[str, Any] = {
            "connect_timeout": max(1, c["connection.timeout.ms"] // 1000),
            "reconnect_time_wait": c["reconnect.wait.ms"] / 1000,
            "max_reconnect_attempts": -1,
            "allow_reconnect": True,
            "pending_size": 64 * 1024 * 1024,
        }
        if c["user"]:
            options["user"] = c["user"]
            options["password"] = _secret(c["password"])
        if c["token"] is not None:
            options["token"] = _secret(c["token"])
        if c["creds.file"]:
            options["user_credentials"] = c["creds.file"]
        if c["tls.ca.file"] or c["tls.cert.file"]:
            context = ssl.create_default_context(cafile=c["tls.ca.file"])
            if c["tls.cert.file"]:
                context.load_cert_chain(c["tls.cert.file"], c["tls.key.file"])
            options["tls"] = context
        options.update(_native(given))
        return options


def _native(given: Mapping[str, Any]) -> dict[str, Any]:
    """The ``client.*`` options as ``nats.connect`` keywords (numbers and booleans
    parsed).

    Raises:
        ConfigError: An option names no keyword of ``nats.connect``.

    """
    import inspect

    found = {key[len("client."):]: value for key, value in given.items()
             if key.startswith("client.")}
    if not found:
        return {}
    nats = nats_module()
    parameters = inspect.signature(nats.aio.client.Client.connect).parameters
    owned = {"servers", "disconnected_cb", "reconnected_cb", "error_cb", "name"}
    options: dict[str, Any] = {}
    for name, value in found.items():
        if name not in parameters or name in owned:
            raise ConfigError(f"nats.client.{name}: not a keyword argument of nats.connect "
                              "the transport lets through", key=f"nats.client.{name}")
        options[name] = _parsed(value, parameters[name].default)
    return options


def _parsed(value: Any, default: Any) -> Any:
    if not isinstance(value, str):
        return value
    if isinstance(default, bool):
        return value.strip().lower() in ("true", "1", "yes", "on")
    for kind in (int, float):
        if isinstance(default, kind):
            try:
                return kind(value)
            except ValueError:
                return value
    return value


def _no_options(options: Mapping[str, Any] | None, what: str) -> None:
    if options:
        raise ConfigError(f"the nats transport takes no {what} options (the connection is "
                          f"the transport's: set nats.client.* instead); remove: "
                          f"{', '.join(sorted(options))}", key=next(iter(sorted(options))))


def _secret(value: Any) -> str | None:
    """The clear text of a PASSWORD option (or ``None``)."""
    if value is None:
        return None
    return value.value() if isinstance(value, Password) else str(value)
