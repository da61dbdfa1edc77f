"""The ``kafka`` transport: the factory for its producers, consumers, stores and admin.

See the package docstring (:mod:`omconnect_kafka`) for features, the connection and the
options, and docs/transports/kafka.md for the guide.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from typing import Any, ClassVar

from omconnect.config import ConfigDef, ConfigType, Importance, NonEmptyString, OneOf, Range
from omconnect.transport.capabilities import Capabilities
from omconnect.transport.kit.checks import check_consumer_args
from omconnect.transport.spi import StartFrom, Transport
from omconnect_kafka.admin import MAX_PARTITIONS, KafkaAdmin, TopicCreator
from omconnect_kafka.client import (
    AUTO,
    DRIVERS,
    ClientSettings,
    Driver,
    ProducerClient,
    load_driver,
    resolve_driver_name,
)
from omconnect_kafka.consumer import KafkaConsumer
from omconnect_kafka.errors import translated_errors
from omconnect_kafka.kv_store import KafkaKeyValueStore, kv_topic
from omconnect_kafka.producer import KafkaProducer, SizeLimit

__all__ = ["CONFIG_DEF", "PASS_THROUGH_PREFIXES", "KafkaTransport"]

_log = logging.getLogger(__name__)

_CONNECTION = "Connection"
_SECURITY = "Security"
_CLIENT = "Client"

PASS_THROUGH_PREFIXES = ("producer.", "consumer.", "admin.")
"""Option prefixes whose keys go to the native clients unchanged (see the docs)."""

CONFIG_DEF = (
    ConfigDef()
    .define("bootstrap.servers", ConfigType.STRING, "localhost:9092",
            importance=Importance.HIGH, validators=[NonEmptyString()], group=_CONNECTION,
            documentation="Brokers to bootstrap from, host:port[,host:port...].")
    .define("client.driver", ConfigType.STRING, AUTO,
            validators=[OneOf((AUTO, *DRIVERS), case_sensitive=True)],
            importance=Importance.HIGH, group=_CLIENT,
            documentation="The client library: confluent (extra confluent, librdkafka; "
                          "several times faster), kafka-python (extra kafka, pure Python), "
                          "or auto: confluent when confluent-kafka is installed, else "
                          "kafka-python (the choice is logged).")
    .define("client.id", ConfigType.STRING, "omconnect", validators=[NonEmptyString()],
            group=_CLIENT,
            documentation="Client id the broker sees (suffixed -producer, -consumer, "
                          "-admin).")
    .define("default.partitions", ConfigType.INT, 1, validators=[Range(min=1)],
            group=_CLIENT,
            documentation="Partitions of a topic the transport creates on first use.")
    .define("auto.create.topics", ConfigType.BOOLEAN, True, group=_CLIENT,
            documentation="Create a missing topic (with default.partitions partitions) "
                          "when a producer first sends to it or a consumer subscribes to "
                          "it. Off: leave it to the broker's auto.create.topics.enable.")
    .define("max.request.size", ConfigType.INT, 1_048_576, validators=[Range(min=1024)],
            group=_CLIENT,
            documentation="The producer's largest request, in bytes. A message larger than "
                          "this less 512 bytes of framing is refused before anything of "
                          "its batch is sent. Keep it at most the broker's "
                          "message.max.bytes.")
    .define("request.timeout.ms", ConfigType.INT, 30_000, validators=[Range(min=1)],
            group=_CLIENT,
            documentation="How long one request (commit, offsets, topic admin, a key/value "
                          "write) may take.")
    .define("connect.timeout.ms", ConfigType.INT, 10_000, validators=[Range(min=1)],
            importance=Importance.HIGH, group=_CONNECTION,
            documentation="How long reaching the cluster may take (bootstrap, metadata, "
                          "a send blocked on metadata or a full queue): an unreachable "
                          "broker fails with a TransportTimeoutError within it.")
    .define("delivery.timeout.ms", ConfigType.INT, 120_000, validators=[Range(min=1)],
            group=_CLIENT,
            documentation="How long a sent message may wait for its acknowledgement, "
                          "retries included, before its send fails.")
    .define("kv.topic.prefix", ConfigType.STRING, "omconnect-kv-",
            validators=[NonEmptyString()], group=_CLIENT,
            documentation="Prefix of the compacted topic that holds a key/value store "
                          "namespace.")
    .define("security.protocol", ConfigType.STRING, None,
            validators=[OneOf(("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"))],
            group=_SECURITY, documentation="PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL.")
    .define("ssl.ca.location", ConfigType.STRING, None, group=_SECURITY,
            documentation="CA certificate file (PEM) to verify the brokers with.")
    .define("ssl.certificate.location", ConfigType.STRING, None, group=_SECURITY,
            documentation="Client certificate file (PEM), for mutual TLS.")
    .define("ssl.key.location", ConfigType.STRING, None, group=_SECURITY,
            documentation="Client private key file (PEM), for mutual TLS.")
    .define("ssl.key.password", ConfigType.PASSWORD, None, group=_SECURITY,
            documentation="Password of the client private key.")
    .define("ssl.crl.location", ConfigType.STRING, None, group=_SECURITY,
            documentation="Certificate revocation list file (PEM).")
    .define("ssl.cipher.suites", ConfigType.STRING, None, group=_SECURITY,
            documentation="Allowed TLS cipher suites (OpenSSL cipher list).")
    .define("ssl.endpoint.identification.algorithm", ConfigType.STRING, None,
            validators=[OneOf(("https", "none"))], group=_SECURITY,
            documentation="https: check that the broker's certificate names its host; "
                          "none: do not.")
    .define("sasl.mechanism", ConfigType.STRING, None,
            validators=[OneOf(("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER",
                               "GSSAPI"))],
            group=_SECURITY, documentation="SASL mechanism.")
    .define("sasl.username", ConfigType.STRING, None, group=_SECURITY,
            documentation="SASL user name (PLAIN, SCRAM).")
    .define("sasl.password", ConfigType.PASSWORD, None, group=_SECURITY,
            documentation="SASL password (PLAIN, SCRAM).")
)

_SECURITY_KEYS = tuple(k.name for k in CONFIG_DEF if k.group == _SECURITY)


def _prefixed(config: Mapping[str, Any], prefix: str) -> dict[str, Any]:
    return {k[len(prefix):]: v for k, v in config.items() if k.startswith(prefix)}


class KafkaTransport(Transport):
    """Apache Kafka (or any broker speaking its protocol) through kafka-python or
    confluent-kafka.

    Args:
        config: Options without the ``kafka.`` prefix, e.g.
            ``{"bootstrap.servers": "broker:9092", "client.driver": "confluent"}``.

    Raises:
        ConfigError: An option is unknown or invalid (named as ``kafka.<key>``).
        MissingExtraError: The chosen driver's client library is not installed.

    """

    name: ClassVar[str] = "kafka"
    client_loggers: ClassVar[tuple[str, ...]] = ("kafka", "omconnect_kafka.librdkafka")
    config_def: ClassVar[ConfigDef] = CONFIG_DEF
    native_option_prefixes: ClassVar[tuple[str, ...]] = PASS_THROUGH_PREFIXES
    native_option_hint: ClassVar[str | None] = (
        "native client options go under kafka.producer., kafka.consumer. or kafka.admin.")

    def __init__(self, config: Mapping[str, Any] | None = None) -> None:
        super().__init__(config)
        config = self.config
        security = {k: config[k] for k in _SECURITY_KEYS if config.get(k) is not None}
        for key in ("security.protocol", "sasl.mechanism"):
            if key in security:
                security[key] = str(security[key]).upper()
        self.settings = ClientSettings(
            bootstrap_servers=config["bootstrap.servers"],
            client_id=config["client.id"],
            request_timeout_ms=config["request.timeout.ms"],
            connect_timeout_ms=config["connect.timeout.ms"],
            delivery_timeout_ms=config["delivery.timeout.ms"],
            max_request_size=config["max.request.size"],
            security=security,
            producer=_prefixed(config, "producer."),
            consumer=_prefixed(config, "consumer."),
            admin=_prefixed(config, "admin."),
        )
        self.driver_name = resolve_driver_name(config["client.driver"])
        """The client driver in use (``auto`` resolved)."""
        if config["client.driver"] == AUTO:
            _log.info("kafka transport: client driver %s (kafka.client.driver=auto: "
                      "confluent-kafka is %sinstalled)", self.driver_name,
                      "" if self.driver_name == "confluent" else "not ")
        self.driver: Driver = load_driver(self.driver_name, self.settings)
        self._limit = SizeLimit(config["max.request.size"])
        self._cluster = (f"{self.settings.bootstrap_servers} (kafka.connect.timeout.ms="
                         f"{self.settings.connect_timeout_ms})")
        self._topics = TopicCreator(
            self._open_admin_client, default_partitions=config["default.partitions"],
            enabled=config["auto.create.topics"], where=self._cluster)
        self._kv_producer: ProducerClient | None = None
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
            max_message_bytes=self._limit.limit,
            max_partitions=MAX_PARTITIONS,
        )

    @property
    def capabilities(self) -> Capabilities:
        """Replayable, persistent, ordered per key, with groups; the message limit is
        ``kafka.max.request.size`` less 512 bytes of framing.
        """
        return self._capabilities

    def _where(self) -> str:
        return f"reaching the cluster at {self._cluster}"

    def _open_admin_client(self) -> Any:
        with translated_errors(self._where()):
            return self.driver.admin()

    def producer(self, options: Mapping[str, Any] | None = None) -> KafkaProducer:
        """A producer; ``options`` are native producer settings, over
        ``kafka.producer.*``.
        """
        self._check_open()
        with translated_errors(self._where()):
            client = self.driver.producer(options or {})
        return KafkaProducer(client, topics=self._topics, limit=self._limit)

    def consumer(
        self,
        group: str | None = None,
        *,
        start: StartFrom = "earliest",
        options: Mapping[str, Any] | None = None,
    ) -> KafkaConsumer:
        """A consumer in ``group`` (``None`` for one that only assigns); ``options`` are
        native consumer settings, over ``kafka.consumer.*``.
        """
        self._check_open()
        check_consumer_args(group, start)
        with translated_errors(self._where()):
            client = self.driver.consumer(group, start, options or {})
        return KafkaConsumer(client, group=group, topics=self._topics)

    def kv_store(self, namespace: str) -> KafkaKeyValueStore:
        """The store ``namespace`` on its compacted topic, read to its end now.

        Raises:
            ValueError: ``namespace`` is empty.
            TransportError: The topic cannot be created or read.

        """
        self._check_open()
        if not isinstance(namespace, str) or not namespace:
            raise ValueError(f"a key/value store needs a non-empty namespace, got {namespace!r}")
        return KafkaKeyValueStore(
            topic=kv_topic(self.config["kv.topic.prefix"], namespace),
            producer=self._shared_producer(),
            reader=lambda: self.consumer(None, start="earliest"),
            topics=self._topics,
            timeout=self.settings.request_timeout_ms / 1000,
        )

    def admin(self) -> KafkaAdmin:
        """An admin client."""
        self._check_open()
        return KafkaAdmin(self._open_admin_client(), self._topics, where=self._cluster)

    def close(self) -> None:
        """Release the clients the transport itself opened (the key/value stores'
        producer, the admin that creates topics). Idempotent. Producers, consumers,
        stores and admins handed out stay usable until closed themselves (stores until
        the transport closes).
        """
        with self._lock:
            if self._closed:
                return
            self._closed = True
            producer, self._kv_producer = self._kv_producer, None
        try:
            if producer is not None:
                with translated_errors("closing the key/value producer"):
                    producer.flush(self.settings.request_timeout_ms / 1000)
                    producer.close(5.0)
        finally:
            self._topics.close()


    def _shared_producer(self) -> ProducerClient:
        with self._lock:
            self._check_open()
            if self._kv_producer is None:
                with translated_errors(self._where()):
                    self._kv_producer = self.driver.producer({})
            return self._kv_producer
