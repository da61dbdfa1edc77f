"""The ``pulsar`` transport: the factory for its producers, consumers, stores and admin.

See the package docstring (:mod:`omconnect_pulsar`) for features, the connection and the
options, and ``docs/transports/pulsar.md`` for the full story.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Mapping
from typing import Any, ClassVar

from omconnect.config import (
    ConfigDef,
    ConfigType,
    Importance,
    NonEmptyString,
    OneOf,
    Password,
    Range,
)
from omconnect.errors import ConfigError, IllegalStateError
from omconnect.transport.capabilities import Capabilities
from omconnect.transport.kit.checks import check_consumer_args
from omconnect.transport.spi import Admin, KeyValueStore, Producer, StartFrom, Transport
from omconnect_pulsar.admin import PulsarAdmin
from omconnect_pulsar.client import (
    CLIENT_LOGGER,
    TopicNames,
    native_options,
    pulsar_module,
    release_client,
    split_prefixed,
)
from omconnect_pulsar.consumer import SUBSCRIPTION_TYPES, PulsarConsumer
from omconnect_pulsar.errors import ErrorContext, translated_errors
from omconnect_pulsar.kv_store import PulsarKeyValueStore
from omconnect_pulsar.producer import PulsarProducer

__all__ = ["CONFIG_DEF", "PulsarTransport"]

_CONNECTION = "Connection"
_PRODUCER = "Producer"
_CONSUMER = "Consumer"
_SECURITY = "Security"
_PASS_THROUGH = ("client.", "producer.", "consumer.", "reader.")

CONFIG_DEF = (
    ConfigDef()
    .define("service.url", ConfigType.STRING, "pulsar://127.0.0.1:6650",
            importance=Importance.HIGH, validators=[NonEmptyString()], group=_CONNECTION,
            documentation="The broker's service URL: pulsar://host:6650, or "
                          "pulsar+ssl://host:6651 for TLS.")
    .define("tenant", ConfigType.STRING, "public", validators=[NonEmptyString()],
            group=_CONNECTION,
            documentation="Tenant of the topics: topic t is persistent://tenant/namespace/t "
                          "(a topic name that holds :// is used as given).")
    .define("namespace", ConfigType.STRING, "default", validators=[NonEmptyString()],
            group=_CONNECTION, documentation="Namespace of the topics (see tenant).")
    .define("admin.url", ConfigType.STRING, None, group=_CONNECTION,
            documentation="The admin REST API, e.g. http://host:8080. With it, topics are "
                          "created with the partitions asked for, listed and deleted. "
                          "Without it, a topic is created by its first producer with the "
                          "broker's default partitioning, and listing or deleting topics "
                          "is not supported.")
    .define("default.partitions", ConfigType.INT, 1, validators=[Range(min=1, max=10_000)],
            group=_CONNECTION,
            documentation="Partitions of the topics the runtime creates (with admin.url).")
    .define("operation.timeout.ms", ConfigType.INT, 30_000,
            validators=[Range(min=1, max=3_600_000)], importance=Importance.HIGH,
            group=_CONNECTION,
            documentation="How long creating a producer or consumer, a lookup or a close "
                          "may take; an unreachable broker fails within it with a "
                          "TransportTimeoutError. Whole seconds (rounded up).")
    .define("connection.timeout.ms", ConfigType.INT, 10_000, validators=[Range(min=1)],
            group=_CONNECTION, documentation="How long a TCP connection may take.")
    .define("max.message.bytes", ConfigType.INT, 5 * 1024 * 1024,
            validators=[Range(min=1)], group=_PRODUCER,
            documentation="Largest message sent (key + value + headers); larger ones fail "
                          "before anything of their batch is sent. Keep it at or below the "
                          "broker's maxMessageSize (5 MiB by default), which also counts "
                          "metadata.")
    .define("send.timeout.ms", ConfigType.INT, 30_000, validators=[Range(min=0)],
            group=_PRODUCER,
            documentation="A send not acknowledged within this fails (0: never).")
    .define("batching.enabled", ConfigType.BOOLEAN, True, group=_PRODUCER,
            documentation="Group messages into batches on the wire (more throughput).")
    .define("batching.max.messages", ConfigType.INT, 1000, validators=[Range(min=1)],
            group=_PRODUCER, documentation="Most messages in one wire batch.")
    .define("batching.max.bytes", ConfigType.INT, 128 * 1024, validators=[Range(min=1)],
            group=_PRODUCER, documentation="Most bytes in one wire batch.")
    .define("batching.max.publish.delay.ms", ConfigType.INT, 10, validators=[Range(min=0)],
            group=_PRODUCER,
            documentation="How long a wire batch may wait to fill up before it is sent.")
    .define("max.pending.messages", ConfigType.INT, 10_000, validators=[Range(min=1)],
            group=_PRODUCER,
            documentation="Sends in flight per producer; beyond it send() blocks "
                          "(block_if_queue_full), so a send never fails for a full queue.")
    .define("subscription.type", ConfigType.STRING, "Failover",
            validators=[OneOf(SUBSCRIPTION_TYPES)], importance=Importance.HIGH,
            group=_CONSUMER,
            documentation="How a group's consumers share a topic. Failover: one active "
                          "consumer per partition, order per key kept. Shared: messages "
                          "spread over all consumers, more throughput, no order. "
                          "Key_Shared: spread by key, order per key kept.")
    .define("receiver.queue.size", ConfigType.INT, 1000, validators=[Range(min=1)],
            group=_CONSUMER,
            documentation="Messages a consumer prefetches per partition.")
    .define("auth.token", ConfigType.PASSWORD, None, group=_SECURITY,
            documentation="A JWT for token authentication.")
    .define("auth.plugin", ConfigType.STRING, None, group=_SECURITY,
            documentation="Another authentication plugin (its class or library name, as "
                          "pulsar.Authentication takes it), with auth.params.")
    .define("auth.params", ConfigType.PASSWORD, None, group=_SECURITY,
            documentation="The parameters string of auth.plugin.")
)
"""The options of the ``pulsar`` transport (written ``pulsar.<key>`` in worker configs).

Besides these, ``client.*``, ``producer.*``, ``consumer.*`` and ``reader.*`` pass keyword
arguments through to pulsar-client (e.g. ``pulsar.client.tls_trust_certs_file_path``).
"""


class PulsarTransport(Transport):
    """Apache Pulsar through pulsar-client: persistent topics, partitioned topics,
    subscriptions as groups, a key/value store on a compacted topic.

    Args:
        config: Options without the ``pulsar.`` prefix, e.g.
            ``{"service.url": "pulsar://127.0.0.1:6650"}``.

    Raises:
        ConfigError: An option is unknown or invalid, naming it as ``pulsar.<key>``.
        MissingExtraError: pulsar-client is not installed (``omconnect[pulsar]``).

    """

    name: ClassVar[str] = "pulsar"
    client_loggers: ClassVar[tuple[str, ...]] = ("omconnect_pulsar.client",)
    config_def: ClassVar[ConfigDef] = CONFIG_DEF
    native_option_prefixes: ClassVar[tuple[str, ...]] = _PASS_THROUGH
    native_option_hint: ClassVar[str | None] = (
        "options are pulsar.<" + "|".join(CONFIG_DEF.names()) + "> and pass-through "
        "pulsar.client.*, pulsar.producer.*, pulsar.consumer.*, pulsar.reader.*")

    def __init__(self, config: Mapping[str, Any] | None = None) -> None:
        given = dict(config or {})
        super().__init__(given)
        pulsar_module()
        c = self.config
        self.names = TopicNames(c["tenant"], c["namespace"])
        self.subscription_type: str = c["subscription.type"]
        self._timeout_s = math.ceil(c["operation.timeout.ms"] / 1000)
        self.where = ErrorContext(c["service.url"], self._timeout_s, c["max.message.bytes"])
        self._native = {kind.rstrip("."): native_options(
            kind.rstrip("."), split_prefixed(given, kind), prefix=f"pulsar.{kind}")
            for kind in _PASS_THROUGH}
        self._client: Any = None
        self._partitions: dict[str, int] = {}
        self._lock = threading.Lock()
        self._closed = False
        self._capabilities = Capabilities(
            ordered_per_key=self.subscription_type != "Shared",
            consumer_groups=True,
            replayable=False,
            persistent=True,
            new_subscriber_receives_old_messages=True,
            transactions=False,
            pause=False,
            cross_process=True,
            headers=True,
            max_message_bytes=c["max.message.bytes"],
            max_partitions=10_000 if c["admin.url"] else 1,
        )

    @property
    def capabilities(self) -> Capabilities:
        """Persistent, cross-process, with groups; ordered per key unless Shared."""
        return self._capabilities

    def producer(self, options: Mapping[str, Any] | None = None) -> Producer:
        """A producer; ``options`` are ``create_producer`` keywords, passed through."""
        return PulsarProducer(
            self.client(), self.names, self._producer_options(options),
            max_message_bytes=self.config["max.message.bytes"], where=self.where,
            partitions_of=self.partitions_of)

    def consumer(
        self,
        group: str | None = None,
        *,
        start: StartFrom = "earliest",
        options: Mapping[str, Any] | None = None,
    ) -> PulsarConsumer:
        """A consumer of subscription ``group`` (``None``: a private subscription)."""
        check_consumer_args(group, start)
        settings = {
            "receiver_queue_size": self.config["receiver.queue.size"],
            "negative_ack_redelivery_delay_ms": 1000,
            # Acknowledge single messages of a wire batch, so a commit that covers part of
            # a batch is not undone by a redelivery of the whole batch (brokers without
            # batch-index acks fall back to whole batches: duplicates, never loss).
            "batch_index_ack_enabled": True,
            **self._native["consumer"],
            **native_options("consumer", options or {}, prefix="consumer option "),
        }
        return PulsarConsumer(
            self.client(), self.names, group=group, start=start,
            subscription_type=self.subscription_type, consumer_options=settings,
            where=self.where, partitions_of=self.partitions_of)

    def kv_store(self, namespace: str) -> KeyValueStore:
        """The durable store ``namespace`` on topic ``omc-kv-<namespace>``."""
        if not isinstance(namespace, str) or not namespace:
            raise ValueError(f"a key/value store needs a non-empty namespace, got {namespace!r}")
        client = self.client()
        producer = PulsarProducer(
            client, self.names, self._producer_options(None),
            max_message_bytes=self.config["max.message.bytes"], where=self.where,
            partitions_of=self.partitions_of)
        reader = {"receiver_queue_size": self.config["receiver.queue.size"],
                  **self._native["reader"]}
        return PulsarKeyValueStore(client, self.names, namespace, producer=producer,
                                   reader_options=reader, where=self.where)

    def admin(self) -> Admin:
        """An admin client (see ``pulsar.admin.url``)."""
        return PulsarAdmin(self.client(), self.names, admin_url=self.config["admin.url"],
                           token=_secret(self.config["auth.token"]), where=self.where,
                           forget=self._forget_partitions)

    def client(self) -> Any:
        """The shared ``pulsar.Client`` (created on first use; connects lazily)."""
        with self._lock:
            if self._closed:
                raise IllegalStateError("the pulsar transport is closed")
            if self._client is None:
                self._client = self._new_client()
            return self._client

    def partitions_of(self, topic: str) -> int:
        """How many partitions ``topic`` has (1 when it is not partitioned); asks the
        broker once per topic (which creates a missing topic when auto-creation is on).
        """
        found = self._partitions.get(topic)
        if found is None:
            with translated_errors(f"looking up topic {topic!r}", self.where, topic=topic):
                names = self.client().get_topic_partitions(self.names.full(topic))
            found = self._partitions[topic] = max(1, len(names))
        return found

    def _forget_partitions(self, topic: str) -> None:
        self._partitions.pop(topic, None)

    def close(self) -> None:
        """Close the client and with it every producer, consumer and store. Idempotent.

        The client is also released at once, its C++ threads ending now: ``pulsar.Client``
        and its consumers reference each other, so without this the client lived until a
        garbage collection, possibly the interpreter's last, and its threads, ending then,
        called back into the Python logger of a finalizing interpreter (``terminate
        called without an active exception``, exit 134, seen after a worker restarted
        from a SIGKILL).
        """
        with self._lock:
            self._closed = True
            client, self._client = self._client, None
        if client is not None:
            try:
                client.close()
            except Exception as exc:  # closing against a dead broker times out
                if type(exc).__name__ != "AlreadyClosed":
                    CLIENT_LOGGER.warning("pulsar: closing the client failed: %s", exc)
            finally:
                release_client(client)

    def _new_client(self) -> Any:
        pulsar = pulsar_module()
        c = self.config
        settings: dict[str, Any] = {
            "operation_timeout_seconds": self._timeout_s,
            "connection_timeout_ms": c["connection.timeout.ms"],
            "logger": CLIENT_LOGGER,
            **self._native["client"],
        }
        token, plugin = _secret(c["auth.token"]), c["auth.plugin"]
        if token and plugin:
            raise ConfigError("pulsar.auth.token and pulsar.auth.plugin both set; use one",
                              key="pulsar.auth.plugin")
        if token:
            settings["authentication"] = pulsar.AuthenticationToken(token)
        elif plugin:
            settings["authentication"] = pulsar.Authentication(
                plugin, _secret(c["auth.params"]) or "")
        with translated_errors("creating the client", self.where):
            return pulsar.Client(c["service.url"], **settings)

    def _producer_options(self, options: Mapping[str, Any] | None) -> dict[str, Any]:
        c = self.config
        return {
            "block_if_queue_full": True,
            "send_timeout_millis": c["send.timeout.ms"],
            "batching_enabled": c["batching.enabled"],
            "batching_max_messages": c["batching.max.messages"],
            "batching_max_allowed_size_in_bytes": c["batching.max.bytes"],
            "batching_max_publish_delay_ms": c["batching.max.publish.delay.ms"],
            "max_pending_messages": c["max.pending.messages"],
            "max_pending_messages_across_partitions": max(50_000,
                                                          c["max.pending.messages"]),
            **self._native["producer"],
            **native_options("producer", options or {}, prefix="producer option "),
        }


def _secret(value: Any) -> str | None:
    """The clear text of a PASSWORD option (or ``None``)."""
    if value is None:
        return None
    return value.value() if isinstance(value, Password) else str(value)
