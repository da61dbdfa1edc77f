"""The ``confluent`` driver: confluent-kafka on librdkafka (extra ``confluent``).

Producer: one ``Producer.produce`` per message with a delivery callback that reports
to the batch's :class:`~omconnect_kafka.client.base.BatchAck`; one daemon thread per
producer serves delivery reports (``Producer.poll``). A full local queue
(``BufferError``) is waited out by serving reports, up to ``kafka.connect.timeout.ms``.
Keys are placed by librdkafka's ``murmur2_random`` partitioner, which is Kafka's
default partitioner (librdkafka's own default, ``consistent_random``, is CRC32 and
would not match Java producers).

Consumer: ``Consumer.consume`` returns batches; rebalance callbacks run inside it, on
the polling thread, and errors a listener raises are re-raised from that poll.
librdkafka's log goes to the Python logger ``omconnect_kafka.librdkafka``.
"""

from __future__ import annotations

import functools
import itertools
import logging
import operator
import re
import threading
import time
import uuid
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from omconnect import plugins
from omconnect.errors import ConfigError
from omconnect.records import RecordMetadata, TopicPartition, build_record_metadata
from omconnect.transport.messages import Message, TopicSpec, build_message
from omconnect.transport.spi import RebalanceListener, StartFrom
from omconnect_kafka.client.base import (
    AdminClient,
    BatchAck,
    ClientSettings,
    ColumnAck,
    ConsumerClient,
    Driver,
    ProducerClient,
)
from omconnect_kafka.client.options import check_native_options, reveal
from omconnect_kafka.errors import ListenerFailed
from omconnect_kafka.partitioner import CONFLUENT_PARTITIONER

__all__ = ["ConfluentDriver"]

_rdlog = logging.getLogger("omconnect_kafka.librdkafka")

_SECURITY = frozenset({
    "security.protocol", "ssl.ca.location", "ssl.certificate.location", "ssl.key.location",
    "ssl.key.password", "ssl.crl.location", "ssl.cipher.suites",
    "ssl.endpoint.identification.algorithm", "sasl.mechanism", "sasl.username",
    "sasl.password",
})
_COMMON_MANAGED = {
    "bootstrap.servers": "set kafka.bootstrap.servers",
    "logger": "librdkafka logs to the Python logger omconnect_kafka.librdkafka",
}
_PRODUCER_MANAGED = {
    **_COMMON_MANAGED,
    "message.max.bytes": "set kafka.max.request.size (the transport checks sizes against it)",
    "partitioner": "the transport uses Kafka's default partitioner (murmur2_random), as "
                   "Java does",
    "on_delivery": "the transport reports deliveries through the send future",
}
_CONSUMER_MANAGED = {
    **_COMMON_MANAGED,
    "group.id": "the group is the consumer's (Transport.consumer(group))",
    "enable.auto.commit": "the transport commits only when asked (Consumer.commit)",
}
_TOPIC = operator.attrgetter("topic")
_KEY = operator.attrgetter("key")
_VALUE = operator.attrgetter("value")
_TIMESTAMP = operator.attrgetter("timestamp")
_HEADERS = operator.attrgetter("headers")
_PARTITION = operator.attrgetter("partition")
_ERROR = operator.methodcaller("error")
_STAMP = operator.methodcaller("timestamp")
_HEADERS_OF = operator.methodcaller("headers")
_TOPIC_OF = operator.methodcaller("topic")
_KEY_OF = operator.methodcaller("key")
_VALUE_OF = operator.methodcaller("value")
_PARTITION_OF = operator.methodcaller("partition")
_OFFSET_OF = operator.methodcaller("offset")
_FIRST = operator.itemgetter(0)
_SECOND = operator.itemgetter(1)
_PROPERTY = re.compile(r'property[^"]*"([^"]+)"')
_PARTITION_EOF = -191
_UNKNOWN_TOPIC = (3, -188)  # UNKNOWN_TOPIC_OR_PART, _UNKNOWN_TOPIC
_OFFSET_INVALID = -1001
_STATE = -172


def _keep(key: str) -> str:
    return key


class ConfluentDriver(Driver):
    """Builds confluent-kafka clients.

    Raises:
        MissingExtraError: confluent-kafka is not installed (extra ``confluent``).
        ConfigError: A native option is set by the transport.

    """

    name = "confluent"
    extra = "confluent"

    def __init__(self, settings: ClientSettings) -> None:
        super().__init__(settings)
        self._ck = plugins.require("confluent_kafka",
                                   plugin="kafka transport (confluent driver)",
                                   extra="confluent")
        self._admin_module = plugins.require("confluent_kafka.admin",
                                             plugin="kafka transport (confluent driver)",
                                             extra="confluent")
        self._producer_options = self._native(settings.producer, "producer")
        self._consumer_options = self._native(settings.consumer, "consumer")
        self._admin_options = self._native(settings.admin, "admin")

    @staticmethod
    def _native(options: Mapping[str, Any], kind: str) -> dict[str, Any]:
        managed = {"producer": _PRODUCER_MANAGED, "consumer": _CONSUMER_MANAGED,
                   "admin": _COMMON_MANAGED}[kind]
        return check_native_options(options, prefix=f"kafka.{kind}.", spell=_keep,
                                    known=None, managed=managed)

    def _construct(self, kind: str, factory: Any, config: dict[str, Any]) -> Any:
        """``factory(config)``; librdkafka's refusal of an option becomes a ConfigError
        naming it as the user wrote it (``kafka.<kind>.<option>``).
        """
        try:
            return factory(config)
        except (self._ck.KafkaException, ValueError, TypeError) as exc:
            text = str(exc.args[0].str() if exc.args and hasattr(exc.args[0], "str")
                       else exc)
            match = _PROPERTY.search(text)
            option = match.group(1) if match else None
            key = f"kafka.{kind}.{option}" if option else None
            raise ConfigError(f"{key or 'a native ' + kind + ' option'}: librdkafka refused "
                              f"it: {text}", key=key) from exc

    def _common(self, kind: str) -> dict[str, Any]:
        settings = self.settings
        config: dict[str, Any] = {
            "bootstrap.servers": settings.bootstrap_servers,
            "client.id": f"{settings.client_id}-{kind}",
            "socket.connection.setup.timeout.ms": settings.connect_timeout_ms,
            "logger": _rdlog,
        }
        for key, value in settings.security.items():
            if key in _SECURITY:
                config[key] = reveal(value)
        return config

    def producer(self, options: Mapping[str, Any]) -> ConfluentProducer:
        """A ``Producer`` with acks=all, murmur2 partitioning and the transport's
        limits.
        """
        settings = self.settings
        config = self._common("producer")
        config.update({
            "acks": "all",
            "partitioner": CONFLUENT_PARTITIONER,
            "message.max.bytes": settings.max_request_size,
            "request.timeout.ms": settings.request_timeout_ms,
            "message.timeout.ms": settings.delivery_timeout_ms,
        })
        config.update(self._producer_options)
        config.update(self._native(options, "producer"))
        return ConfluentProducer(self._ck, self._construct("producer", self._ck.Producer, config),
                                 block_seconds=settings.connect_timeout_ms / 1000,
                                 metadata_timeout=settings.connect_timeout_ms / 1000)

    def consumer(self, group: str | None, start: StartFrom,
                 options: Mapping[str, Any]) -> ConfluentConsumer:
        """A ``Consumer`` with auto-commit off. A consumer without a group gets a
        private group id librdkafka needs but never uses (it cannot commit).
        """
        config = self._common("consumer")
        config.update({
            "group.id": group if group is not None else f"omconnect-assign-{uuid.uuid4().hex}",
            "enable.auto.commit": False,
            "auto.offset.reset": start,
        })
        config.update(self._consumer_options)
        config.update(self._native(options, "consumer"))
        return ConfluentConsumer(self._ck, self._construct("consumer", self._ck.Consumer, config),
                                 timeout=self.settings.request_timeout_ms / 1000)

    def admin(self) -> ConfluentAdmin:
        """An ``AdminClient``."""
        config = self._common("admin")
        config.update(self._admin_options)
        return ConfluentAdmin(self._ck, self._admin_module,
                              self._construct("admin", self._admin_module.AdminClient, config),
                              timeout=self.settings.request_timeout_ms / 1000,
                              metadata_timeout=self.settings.connect_timeout_ms / 1000)


class ConfluentProducer(ProducerClient):
    """Hands batches to one ``Producer``; a daemon thread serves delivery reports.

    Args:
        ck: The confluent_kafka module.
        producer: The client.
        block_seconds: How long ``send`` waits for room in a full local queue.
        metadata_timeout: How long a metadata request may take.

    """

    def __init__(self, ck: Any, producer: Any, *, block_seconds: float,
                 metadata_timeout: float) -> None:
        self._ck = ck
        self._producer = producer
        self._block = block_seconds
        self._metadata_timeout = metadata_timeout
        self._closed = threading.Event()
        self._poller = threading.Thread(target=self._serve, name="omconnect-kafka-deliveries",
                                        daemon=True)
        self._poller.start()

    def _serve(self) -> None:
        poll = self._producer.poll
        while not self._closed.is_set():
            poll(0.1)

    def send(self, messages: Sequence[Message], ack: BatchAck) -> None:
        """Produce each message with a delivery callback reporting to ``ack``.

        Batches without explicit partitions and headers (the usual case) take a loop
        that reads the messages' fields column by column at C speed.
        """
        produce = self._producer.produce
        partial = functools.partial
        report = ack.report
        if not any(map(_HEADERS, messages)) and set(map(_PARTITION, messages)) == {None}:
            columns = zip(itertools.count(), map(_TOPIC, messages), map(_VALUE, messages),
                          map(_KEY, messages), map(_TIMESTAMP, messages))
            for index, topic, value, key, timestamp in columns:
                callback = partial(report, index)
                try:
                    produce(topic, value, key, on_delivery=callback, timestamp=timestamp or 0)
                except BufferError:
                    try:
                        self._produce_when_room(messages[index], callback)
                    except Exception as exc:
                        ack.abandon(index, exc)
                        return
                except Exception as exc:
                    ack.abandon(index, exc)
                    return
            self._producer.poll(0)  # serve ready reports here, not across threads
            return
        for index, message in enumerate(messages):
            callback = partial(report, index)
            try:
                try:
                    self._produce(message, callback)
                except BufferError:
                    self._produce_when_room(message, callback)
            except Exception as exc:
                ack.abandon(index, exc)
                return

    sends_columns = True

    def send_columns(self, topic: str, keys: list[bytes | None], values: list[bytes | None],
                     timestamps: list[int | None] | None, ack: ColumnAck) -> None:
        """Produce each row with a delivery callback reporting to ``ack``: the client's
        ``produce`` per row (its API takes one message at a time), no ``Message`` built.
        """
        produce = self._producer.produce
        partial = functools.partial
        report = ack.report
        stamps: Iterable[int | None] = itertools.repeat(None) if timestamps is None \
            else timestamps
        for index, key, value, timestamp in zip(itertools.count(), keys, values, stamps):
            callback = partial(report, index)
            try:
                produce(topic, value, key, on_delivery=callback, timestamp=timestamp or 0)
            except BufferError:
                try:
                    self._produce_when_room(
                        build_message(topic, key, value, (), timestamp, None, None), callback)
                except Exception as exc:
                    ack.abandon(index, exc)
                    return
            except Exception as exc:
                ack.abandon(index, exc)
                return
        self._producer.poll(0)

    def whole_acknowledgement(self, topic: str, reports: list[Any]) -> Any:
        """Partitions, offsets and timestamps of every row, as Arrow arrays."""
        import pyarrow as pa

        from omconnect.columnar.metadata import BatchMetadata

        stamps = [r.timestamp() for r in reports]
        return BatchMetadata(
            topic, pa.array([r.partition() for r in reports], pa.int32()),
            pa.array([r.offset() for r in reports], pa.int64()),
            pa.array([t if kind else None for kind, t in stamps], pa.int64()))

    def _produce(self, message: Message, callback: Any) -> None:
        partition, headers = message.partition, message.headers
        self._producer.produce(message.topic, message.value, message.key,
                               -1 if partition is None else partition, on_delivery=callback,
                               timestamp=message.timestamp or 0,
                               headers=list(headers) if headers else None)

    def _produce_when_room(self, message: Message, callback: Any) -> None:
        """Serve delivery reports until the full queue takes ``message``."""
        deadline = time.monotonic() + self._block
        while True:
            self._producer.poll(0.05)
            try:
                self._produce(message, callback)
                return
            except BufferError:
                if time.monotonic() >= deadline:
                    raise

    def acknowledgements(self, messages: Sequence[Message], reports: list[Any]
                         ) -> list[RecordMetadata]:
        """The delivered messages' partition, offset and timestamp as omconnect's
        acknowledgements.
        """
        result: list[RecordMetadata] = []
        append = result.append
        for m, r in zip(messages, reports, strict=True):
            kind, timestamp = r.timestamp()
            append(build_record_metadata(m.topic, r.partition(), r.offset(),
                                  timestamp if kind else None))
        return result

    def partition_count(self, topic: str) -> int | None:
        """Partitions of ``topic`` from a metadata request."""
        metadata = self._producer.list_topics(topic, timeout=self._metadata_timeout)
        found = metadata.topics.get(topic)
        if found is None or found.error is not None or not found.partitions:
            return None
        return len(found.partitions)

    def flush(self, timeout: float) -> bool:
        """``Producer.flush``; False when messages remain."""
        return int(self._producer.flush(max(timeout, 0.0))) == 0

    def close(self, timeout: float) -> None:
        """Stop serving reports; release the client."""
        self._closed.set()
        self._poller.join(max(timeout, 1.0))
        close = getattr(self._producer, "close", None)
        if close is not None:
            close()


class ConfluentConsumer(ConsumerClient):
    """One ``Consumer``.

    Args:
        ck: The confluent_kafka module.
        consumer: The client.
        timeout: How long a blocking call (commit, committed, offsets) may take.

    """

    def __init__(self, ck: Any, consumer: Any, *, timeout: float) -> None:
        self._ck = ck
        self._consumer = consumer
        self._timeout = timeout
        self._listener: RebalanceListener | None = None
        self._listener_error: BaseException | None = None
        self._manual: dict[TopicPartition, int] = {}

    def _tp(self, partition: TopicPartition, offset: int | None = None) -> Any:
        if offset is None:
            return self._ck.TopicPartition(partition.topic, partition.partition)
        return self._ck.TopicPartition(partition.topic, partition.partition, offset)

    def _call_listener(self, method: str, partitions: Any) -> None:
        listener = self._listener
        if listener is None:
            return
        tps = frozenset(TopicPartition(p.topic, p.partition) for p in partitions)
        if not tps:
            return
        try:
            getattr(listener, method)(tps)
        except BaseException as exc:
            if self._listener_error is None:
                self._listener_error = exc

    def subscribe(self, topics: Sequence[str], listener: RebalanceListener) -> None:
        """``Consumer.subscribe`` with the listener on assign, revoke and lost."""
        self._listener = listener
        self._consumer.subscribe(
            list(topics),
            on_assign=lambda _c, ps: self._call_listener("on_partitions_assigned", ps),
            on_revoke=lambda _c, ps: self._call_listener("on_partitions_revoked", ps),
            on_lost=lambda _c, ps: self._call_listener("on_partitions_revoked", ps))

    def assign(self, partitions: Sequence[TopicPartition]) -> None:
        """``Consumer.assign`` (positions from the committed offset, else the reset)."""
        self._manual = {tp: _OFFSET_INVALID for tp in partitions}
        self._consumer.assign([self._tp(tp) for tp in partitions])

    def poll(self, max_records: int, timeout: float) -> list[Message]:
        """``Consumer.consume``, messages turned into omconnect messages."""
        fetched = self._consumer.consume(num_messages=max_records, timeout=max(timeout, 0.0))
        if self._listener_error is not None:
            error, self._listener_error = self._listener_error, None
            raise ListenerFailed(error)
        if not fetched:
            return []
        if any(map(_ERROR, fetched)):
            fetched = self._without_events(fetched)
        # Field by field at C speed, messages made by the fast positional builder.
        stamps = list(map(_STAMP, fetched))
        timestamps: Iterable[int | None] = (
            map(_SECOND, stamps) if all(map(_FIRST, stamps))
            else [t if kind else None for kind, t in stamps])
        headers: Iterable[tuple[tuple[str, bytes | None], ...]] = (
            [tuple(h) if h else () for h in map(_HEADERS_OF, fetched)]
            if any(map(_HEADERS_OF, fetched)) else itertools.repeat(()))
        return list(map(build_message, map(_TOPIC_OF, fetched), map(_KEY_OF, fetched),
                        map(_VALUE_OF, fetched), headers, timestamps,
                        map(_PARTITION_OF, fetched), map(_OFFSET_OF, fetched)))

    polls_columns = True

    def poll_columns(self, max_records: int, timeout: float) -> Any:
        """``Consumer.consume`` as a consumed Arrow batch: each field read from the
        client's messages at C speed into a column (the client makes its own object per
        message; omconnect makes none).
        """
        fetched = self._consumer.consume(num_messages=max_records, timeout=max(timeout, 0.0))
        if self._listener_error is not None:
            error, self._listener_error = self._listener_error, None
            raise ListenerFailed(error)
        if not fetched:
            return None
        if any(map(_ERROR, fetched)):
            fetched = self._without_events(fetched)
            if not fetched:
                return None
        from omconnect.columnar.columns import consumed_batch

        stamps = list(map(_STAMP, fetched))
        timestamps = list(map(_SECOND, stamps)) if all(map(_FIRST, stamps)) \
            else [t if kind else None for kind, t in stamps]
        return consumed_batch(list(map(_TOPIC_OF, fetched)), list(map(_PARTITION_OF, fetched)),
                              list(map(_OFFSET_OF, fetched)), timestamps,
                              list(map(_KEY_OF, fetched)), list(map(_VALUE_OF, fetched)),
                              list(map(_HEADERS_OF, fetched)))

    def _without_events(self, fetched: list[Any]) -> list[Any]:
        """``fetched`` without the informational events librdkafka mixes in (end of
        partition, a subscribed topic not created yet); raise for a real error.
        """
        kept = []
        for m in fetched:
            error = m.error()
            if error is None:
                kept.append(m)
                continue
            code = error.code()
            if code != _PARTITION_EOF and code not in _UNKNOWN_TOPIC:
                raise self._ck.KafkaException(error)
        return kept

    def commit(self, offsets: Mapping[TopicPartition, int]) -> None:
        """``Consumer.commit``, synchronous; a per-partition error is raised."""
        results = self._consumer.commit(
            offsets=[self._tp(tp, offset) for tp, offset in offsets.items()],
            asynchronous=False)
        for result in results or ():
            if result.error is not None:
                raise self._ck.KafkaException(result.error)

    def committed(self, partitions: Sequence[TopicPartition]
                  ) -> dict[TopicPartition, int | None]:
        """``Consumer.committed``."""
        if not partitions:
            return {}
        found = self._consumer.committed([self._tp(tp) for tp in partitions],
                                         timeout=self._timeout)
        result: dict[TopicPartition, int | None] = {tp: None for tp in partitions}
        for tp in found:
            if tp.error is not None:
                raise self._ck.KafkaException(tp.error)
            if tp.offset >= 0:
                result[TopicPartition(tp.topic, tp.partition)] = int(tp.offset)
        return result

    def assignment(self) -> frozenset[TopicPartition]:
        """``Consumer.assignment``."""
        return frozenset(TopicPartition(tp.topic, tp.partition)
                         for tp in self._consumer.assignment())

    def seek(self, partition: TopicPartition, offset: int) -> None:
        """``Consumer.seek``; a manually assigned partition not fetched yet is assigned
        again at ``offset`` (librdkafka refuses to seek it).
        """
        try:
            self._consumer.seek(self._tp(partition, offset))
        except self._ck.KafkaException as exc:
            code = exc.args[0].code() if exc.args else None
            if code != _STATE or partition not in self._manual:
                raise
            self._manual[partition] = offset
            self._consumer.assign([self._tp(tp, position)
                                   for tp, position in self._manual.items()])

    def offset_range(self, partition: TopicPartition) -> tuple[int, int]:
        """``get_watermark_offsets`` from the broker (its ListOffsets)."""
        low, high = self._consumer.get_watermark_offsets(self._tp(partition),
                                                         timeout=self._timeout, cached=False)
        return int(low), int(high)

    def pause(self, partitions: Sequence[TopicPartition]) -> None:
        """``Consumer.pause``."""
        self._consumer.pause([self._tp(tp) for tp in partitions])

    def resume(self, partitions: Sequence[TopicPartition]) -> None:
        """``Consumer.resume``."""
        self._consumer.resume([self._tp(tp) for tp in partitions])

    def close(self) -> None:
        """``Consumer.close`` (leaves the group, the listener sees the revocation;
        auto-commit is off); a listener error is raised after.
        """
        self._consumer.close()
        if self._listener_error is not None:
            error, self._listener_error = self._listener_error, None
            raise ListenerFailed(error)


class ConfluentAdmin(AdminClient):
    """One ``AdminClient``.

    Args:
        ck: The confluent_kafka module.
        admin_module: ``confluent_kafka.admin``.
        admin: The client.
        timeout: How long a topic operation may take.
        metadata_timeout: How long a metadata request may take.

    """

    def __init__(self, ck: Any, admin_module: Any, admin: Any, *, timeout: float,
                 metadata_timeout: float) -> None:
        self._ck = ck
        self._module = admin_module
        self._admin = admin
        self._timeout = timeout
        self._metadata_timeout = metadata_timeout

    def _wait(self, futures: Mapping[str, Any], ignore: tuple[int, ...]) -> None:
        for future in futures.values():
            try:
                future.result(timeout=self._timeout)
            except self._ck.KafkaException as exc:
                error = exc.args[0] if exc.args else None
                if error is not None and error.code() in ignore:
                    continue
                raise

    def create_topics(self, topics: Sequence[TopicSpec]) -> None:
        """``create_topics``; "already exists" is not an error."""
        if not topics:
            return
        new = [self._module.NewTopic(spec.name, num_partitions=spec.partitions,
                                     replication_factor=-1,
                                     config={k: str(v) for k, v in spec.config.items()})
               for spec in topics]
        futures = self._admin.create_topics(new, operation_timeout=self._timeout,
                                            request_timeout=self._timeout)
        self._wait(futures, ignore=(36,))  # TOPIC_ALREADY_EXISTS

    def list_topics(self) -> dict[str, TopicSpec]:
        """Every non-internal topic with its partition count."""
        metadata = self._admin.list_topics(timeout=self._metadata_timeout)
        return {name: TopicSpec(name, len(topic.partitions))
                for name, topic in metadata.topics.items()
                if topic.error is None and not name.startswith("__")}

    def delete_topics(self, names: Sequence[str]) -> None:
        """``delete_topics``; unknown names are ignored."""
        if not names:
            return
        futures = self._admin.delete_topics(list(names), operation_timeout=self._timeout,
                                            request_timeout=self._timeout)
        self._wait(futures, ignore=_UNKNOWN_TOPIC)

    def close(self) -> None:
        """Nothing to release (the client has no close)."""
