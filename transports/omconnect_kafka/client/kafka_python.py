"""The ``kafka-python`` driver (the default; extra ``kafka``).

Producer: one ``KafkaProducer.send`` per message; the per-record futures report to the
batch's :class:`~omconnect_kafka.client.base.BatchAck` through one callback each (no
thread per record). Keys are placed by :class:`~omconnect_kafka.partitioner.
KeyPartitioner` (Kafka's default partitioner). An Arrow batch (``send_batch``) goes
row by row from its columns to ``send``, and a poll's records become columns
(``poll_batch``), with no ``Message`` per record: kafka-python's own objects per
record are all that is left.

Consumer: ``KafkaConsumer`` with auto-commit off. kafka-python 3 runs group
coordination on its own IO thread and calls rebalance listeners there, where a blocking
call such as ``commit`` is refused; the driver therefore runs the omconnect listener on
a short-lived thread of its own while the IO loop awaits it (as kafka-python's docs
advise), and while the consumer's thread is still inside ``poll``. Listener errors are
re-raised from that ``poll``.

Known client limitation: kafka-python refuses a header whose value is null (its
``send`` insists on ``(str, bytes)`` pairs and its batch bookkeeping takes ``len`` of
every header value), so such a message fails with an
:class:`~omconnect.errors.UnsupportedOperationError` naming the header; the
``confluent`` driver sends it.
"""

from __future__ import annotations

import functools
import itertools
import operator
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from omconnect import plugins
from omconnect.errors import UnsupportedOperationError
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
from omconnect_kafka.partitioner import KeyPartitioner

__all__ = ["KafkaPythonDriver"]

_KEY = operator.attrgetter("key")
_VALUE = operator.attrgetter("value")
_HEADERS = operator.attrgetter("headers")
_TIMESTAMP = operator.attrgetter("timestamp")
_OFFSET = operator.attrgetter("offset")
_PARTITION = operator.attrgetter("partition")

_SECURITY = {
    "security.protocol": "security_protocol",
    "ssl.ca.location": "ssl_cafile",
    "ssl.certificate.location": "ssl_certfile",
    "ssl.key.location": "ssl_keyfile",
    "ssl.key.password": "ssl_password",
    "ssl.crl.location": "ssl_crlfile",
    "ssl.cipher.suites": "ssl_ciphers",
    "sasl.mechanism": "sasl_mechanism",
    "sasl.username": "sasl_plain_username",
    "sasl.password": "sasl_plain_password",
}
_COMMON_MANAGED = {
    "bootstrap_servers": "set kafka.bootstrap.servers",
    "key_serializer": "the transport sends bytes",
    "value_serializer": "the transport sends bytes",
    "key_deserializer": "the transport returns bytes",
    "value_deserializer": "the transport returns bytes",
}
_PRODUCER_MANAGED = {
    **_COMMON_MANAGED,
    "max_request_size": "set kafka.max.request.size (the transport checks sizes against it)",
    "partitioner": "the transport uses Kafka's default partitioner (murmur2), as Java does",
}
_CONSUMER_MANAGED = {
    **_COMMON_MANAGED,
    "group_id": "the group is the consumer's (Transport.consumer(group))",
    "enable_auto_commit": "the transport commits only when asked (Consumer.commit)",
}
_ADMIN_MANAGED = {"bootstrap_servers": "set kafka.bootstrap.servers"}


def _spell(key: str) -> str:
    return key.replace(".", "_")


class KafkaPythonDriver(Driver):
    """Builds kafka-python clients.

    Raises:
        MissingExtraError: kafka-python is not installed (extra ``kafka``).
        ConfigError: A native option is unknown to kafka-python or set by the transport.

    """

    name = "kafka-python"
    extra = "kafka"

    def __init__(self, settings: ClientSettings) -> None:
        super().__init__(settings)
        self._kafka = plugins.require("kafka", plugin="kafka transport (kafka-python driver)",
                                      extra="kafka")
        self._producer_options = self._native(settings.producer, "producer")
        self._consumer_options = self._native(settings.consumer, "consumer")
        self._admin_options = self._native(settings.admin, "admin")
        self._partitioner = _partitioner_class(self._kafka)(KeyPartitioner())

    def _native(self, options: Mapping[str, Any], kind: str) -> dict[str, Any]:
        kafka = self._kafka
        known, managed = {
            "producer": (kafka.KafkaProducer.DEFAULT_CONFIG, _PRODUCER_MANAGED),
            "consumer": (kafka.KafkaConsumer.DEFAULT_CONFIG, _CONSUMER_MANAGED),
            "admin": (kafka.KafkaAdminClient.DEFAULT_CONFIG, _ADMIN_MANAGED),
        }[kind]
        return check_native_options(options, prefix=f"kafka.{kind}.", spell=_spell,
                                    known=known, managed=managed)

    def _common(self, kind: str) -> dict[str, Any]:
        settings = self.settings
        config: dict[str, Any] = {
            "bootstrap_servers": [s.strip() for s in settings.bootstrap_servers.split(",")],
            "client_id": f"{settings.client_id}-{kind}",
            "request_timeout_ms": settings.request_timeout_ms,
            "bootstrap_timeout_ms": settings.connect_timeout_ms,
        }
        for key, value in settings.security.items():
            if key == "ssl.endpoint.identification.algorithm":
                config["ssl_check_hostname"] = str(value).lower() == "https"
            elif key in _SECURITY:
                config[_SECURITY[key]] = reveal(value)
        return config

    def producer(self, options: Mapping[str, Any]) -> KafkaPythonProducer:
        """A ``KafkaProducer`` with acks=all and the transport's limits."""
        settings = self.settings
        config = self._common("producer")
        config.update(acks="all", max_request_size=settings.max_request_size,
                      max_block_ms=settings.connect_timeout_ms,
                      delivery_timeout_ms=settings.delivery_timeout_ms,
                      partitioner=self._partitioner)
        config.update(self._producer_options)
        config.update(self._native(options, "producer"))
        return KafkaPythonProducer(self._kafka.KafkaProducer(**config))

    def consumer(self, group: str | None, start: StartFrom,
                 options: Mapping[str, Any]) -> KafkaPythonConsumer:
        """A ``KafkaConsumer`` with auto-commit off."""
        config = self._common("consumer")
        config.update(group_id=group, enable_auto_commit=False, auto_offset_reset=start)
        config.update(self._consumer_options)
        config.update(self._native(options, "consumer"))
        return KafkaPythonConsumer(self._kafka, self._kafka.KafkaConsumer(**config),
                                   timeout_ms=self.settings.request_timeout_ms)

    def admin(self) -> KafkaPythonAdmin:
        """A ``KafkaAdminClient``."""
        config = self._common("admin")
        config.update(self._admin_options)
        return KafkaPythonAdmin(self._kafka, self._kafka.KafkaAdminClient(**config),
                                timeout_ms=self.settings.request_timeout_ms)


@functools.cache
def _partitioner_class(kafka: Any) -> Callable[[KeyPartitioner], Any]:
    """A ``kafka.partitioner.Partitioner`` subclass over :class:`KeyPartitioner` (built
    on first use, so this module imports without kafka-python).
    """
    base = kafka.partitioner.Partitioner

    class _KeyPartitioner(base):  # type: ignore[misc, valid-type]
        def __init__(self, partitioner: KeyPartitioner) -> None:
            self._partitioner = partitioner

        def partition(self, topic: str, key: Any, serialized_key: bytes | None,
                      value: Any, serialized_value: Any, cluster: Any) -> int:
            partitions = cluster.partitions_for_topic(topic)
            if not partitions:
                raise ValueError(f"Topic {topic} not found in ClusterMetadata")
            if serialized_key is not None:  # the hot path: no sorting, a memoised hash
                return self._partitioner.keyed(serialized_key, len(partitions))
            current = self._partitioner.sticky(topic)
            if current is not None and current in partitions:
                return current
            return self._partitioner.partition(
                topic, None, sorted(partitions),
                sorted(cluster.available_partitions_for_topic(topic) or ()))

        def on_new_batch(self, topic: str, cluster: Any, prev_partition: int) -> None:
            partitions = sorted(cluster.partitions_for_topic(topic) or ())
            if partitions:
                self._partitioner.on_new_batch(
                    topic, partitions,
                    sorted(cluster.available_partitions_for_topic(topic) or ()),
                    prev_partition)

    return _KeyPartitioner


def _null_header(message: Message) -> str | None:
    for name, value in message.headers:
        if value is None:
            return name
    return None


class KafkaPythonProducer(ProducerClient):
    """Hands batches to one ``KafkaProducer``.

    Args:
        producer: The client.

    """

    def __init__(self, producer: Any) -> None:
        self._producer = producer

    def send(self, messages: Sequence[Message], ack: BatchAck) -> None:
        """Send each message; its future reports to ``ack`` (the callback stores
        kafka-python's RecordMetadata, the errback the exception).
        """
        send = self._producer.send
        partial = functools.partial
        report, failed = ack.report, ack.failed
        for index, message in enumerate(messages):
            headers = message.headers
            if headers:
                null = _null_header(message)
                if null is not None:
                    ack.abandon(index, UnsupportedOperationError(
                        f"the kafka-python driver cannot send header {null!r} with a null "
                        "value (kafka-python refuses null header values); send an empty "
                        "value or use kafka.client.driver=confluent",
                        topic=message.topic))
                    return
            try:
                future = send(message.topic, message.value, message.key,
                              list(headers) if headers else None, message.partition,
                              message.timestamp)
            except Exception as exc:
                ack.abandon(index, exc)
                return
            future.add_callback(partial(report, index, None))
            future.add_errback(partial(failed, index))

    sends_columns = True

    def send_columns(self, topic: str, keys: list[bytes | None], values: list[bytes | None],
                     timestamps: list[int | None] | None, ack: ColumnAck) -> None:
        """One ``KafkaProducer.send`` per row, straight from the columns; its future
        reports to ``ack`` as :meth:`send`'s do.
        """
        send = self._producer.send
        partial = functools.partial
        report, failed = ack.report, ack.failed
        stamps: Iterable[int | None] = itertools.repeat(None) if timestamps is None \
            else timestamps
        for index, key, value, timestamp in zip(itertools.count(), keys, values, stamps):
            try:
                future = send(topic, value, key, None, None, timestamp)
            except Exception as exc:
                ack.abandon(index, exc)
                return
            future.add_callback(partial(report, index, None))
            future.add_errback(partial(failed, index))

    def whole_acknowledgement(self, topic: str, reports: list[Any]) -> Any:
        """Partitions, offsets and timestamps of every row (kafka-python's
        RecordMetadata), as Arrow arrays.
        """
        import pyarrow as pa

        from omconnect.columnar.metadata import BatchMetadata

        stamps = list(map(_TIMESTAMP, reports))
        if None in stamps or min(stamps, default=0) < 0:
            stamps = [None if t is None or t < 0 else t for t in stamps]
        return BatchMetadata(topic, pa.array(list(map(_PARTITION, reports)), pa.int32()),
                             pa.array(list(map(_OFFSET, reports)), pa.int64()),
                             pa.array(stamps, pa.int64()))

    def acknowledgements(self, messages: Sequence[Message], reports: list[Any]
                         ) -> list[RecordMetadata]:
        """kafka-python's RecordMetadata (partition, offset, timestamp) as omconnect's."""
        return [build_record_metadata(m.topic, r.partition, r.offset,
                               None if r.timestamp is None or r.timestamp < 0 else r.timestamp)
                for m, r in zip(messages, reports, strict=True)]

    def partition_count(self, topic: str) -> int | None:
        """Partitions of ``topic`` from the producer's metadata."""
        partitions = self._producer.partitions_for(topic)
        return len(partitions) if partitions else None

    def flush(self, timeout: float) -> bool:
        """``KafkaProducer.flush``; False when it timed out."""
        try:
            self._producer.flush(timeout=max(timeout, 0.0))
        except Exception as exc:
            if type(exc).__name__ == "KafkaTimeoutError":
                return False
            raise
        return True

    def close(self, timeout: float) -> None:
        """``KafkaProducer.close``."""
        self._producer.close(timeout=max(timeout, 0.0))


class _ListenerBridge:
    """Runs an omconnect :class:`RebalanceListener` for kafka-python's IO loop.

    kafka-python awaits the ``async`` methods on its IO thread; each runs the listener
    on a fresh thread (where blocking calls such as ``commit`` are allowed) and awaits
    its end, completing the awaited future through the loop's thread-safe hand-over.
    The first error a listener raises is kept for the consumer's ``poll`` to re-raise.
    """

    def __init__(self, kafka: Any, net: Any, listener: RebalanceListener) -> None:
        self._kafka = kafka
        self._net = net
        self.listener = listener
        self.error: BaseException | None = None

    def as_kafka_listener(self) -> Any:
        """An ``AsyncConsumerRebalanceListener`` that calls this bridge."""
        base = getattr(self._kafka, "AsyncConsumerRebalanceListener", None)
        if base is None:  # pragma: no cover - kafka-python < 3
            from kafka.consumer.subscription_state import AsyncConsumerRebalanceListener

            base = AsyncConsumerRebalanceListener
        bridge = self

        class _Listener(base):  # type: ignore[misc, valid-type]
            async def on_partitions_revoked(self, revoked: Any) -> None:
                await bridge.call("on_partitions_revoked", revoked)

            async def on_partitions_assigned(self, assigned: Any) -> None:
                await bridge.call("on_partitions_assigned", assigned)

            async def on_partitions_lost(self, lost: Any) -> None:
                await bridge.call("on_partitions_revoked", lost)

        return _Listener()

    def call(self, method: str, partitions: Any) -> Any:
        """Run ``listener.<method>`` on a helper thread; an awaitable for its end."""
        done = self._kafka.future.Future()
        tps = frozenset(TopicPartition(tp.topic, tp.partition) for tp in partitions)
        if not tps:  # kafka-python announces empty revocations; omconnect does not
            return done.success(None)
        net = self._net

        def run() -> None:
            try:
                getattr(self.listener, method)(tps)
            except BaseException as exc:
                if self.error is None:
                    self.error = exc
            finally:
                net.call_soon_threadsafe(lambda: done.success(None))

        threading.Thread(target=run, name=f"omconnect-kafka-{method}", daemon=True).start()
        return done


class KafkaPythonConsumer(ConsumerClient):
    """One ``KafkaConsumer``.

    Args:
        kafka: The kafka-python module.
        consumer: The client.
        timeout_ms: How long a blocking call (commit, committed, offsets) may take.

    """

    def __init__(self, kafka: Any, consumer: Any, *, timeout_ms: int) -> None:
        self._kafka = kafka
        self._consumer = consumer
        self._timeout_ms = timeout_ms
        self._bridge: _ListenerBridge | None = None

    def _tp(self, partition: TopicPartition) -> Any:
        return self._kafka.TopicPartition(partition.topic, partition.partition)

    def subscribe(self, topics: Sequence[str], listener: RebalanceListener) -> None:
        """``KafkaConsumer.subscribe`` with the listener bridged to the IO loop."""
        self._bridge = _ListenerBridge(self._kafka, self._consumer._net, listener)
        self._consumer.subscribe(topics=list(topics),
                                 listener=self._bridge.as_kafka_listener())

    def assign(self, partitions: Sequence[TopicPartition]) -> None:
        """``KafkaConsumer.assign``."""
        self._consumer.assign([self._tp(tp) for tp in partitions])

    def _fetch(self, max_records: int, timeout: float) -> Any:
        """``KafkaConsumer.poll``: its records per partition; a listener's error raised."""
        fetched = self._consumer.poll(timeout_ms=max(0, int(timeout * 1000)),
                                      max_records=max_records)
        bridge = self._bridge
        if bridge is not None and bridge.error is not None:
            error, bridge.error = bridge.error, None
            raise ListenerFailed(error)
        return fetched

    polls_columns = True

    def poll_columns(self, max_records: int, timeout: float) -> Any:
        """``KafkaConsumer.poll`` as a consumed Arrow batch: each field of kafka-python's
        records read at C speed into a column, no ``Message`` per record; ``None`` when
        nothing came.
        """
        fetched = self._fetch(max_records, timeout)
        if not fetched:
            return None
        from omconnect.columnar.columns import consumed_batch

        records = [record for batch in fetched.values() for record in batch]
        if not records:
            return None
        topics: list[str] = []
        partitions: list[int] = []
        for tp, batch in fetched.items():
            topics += itertools.repeat(tp.topic, len(batch))
            partitions += itertools.repeat(tp.partition, len(batch))
        stamps = list(map(_TIMESTAMP, records))
        if None in stamps or min(stamps) < 0:
            stamps = [None if t is None or t < 0 else t for t in stamps]
        return consumed_batch(topics, partitions, list(map(_OFFSET, records)), stamps,
                              list(map(_KEY, records)), list(map(_VALUE, records)),
                              list(map(_HEADERS, records)))

    def poll(self, max_records: int, timeout: float) -> list[Message]:
        """``KafkaConsumer.poll``, records turned into messages."""
        fetched = self._fetch(max_records, timeout)
        messages: list[Message] = []
        for tp, records in fetched.items():
            # Field by field at C speed, messages made by the fast positional builder.
            count = len(records)
            stamps = list(map(_TIMESTAMP, records))
            timestamps: Iterable[int | None] = (
                stamps if None not in stamps and min(stamps, default=0) >= 0
                else [None if t is None or t < 0 else t for t in stamps])
            headers: Iterable[tuple[tuple[str, bytes | None], ...]] = (
                [tuple(h) if h else () for h in map(_HEADERS, records)]
                if any(map(_HEADERS, records)) else itertools.repeat((), count))
            messages += map(build_message, itertools.repeat(tp.topic, count), map(_KEY, records),
                            map(_VALUE, records), headers, timestamps,
                            itertools.repeat(tp.partition, count), map(_OFFSET, records))
        return messages

    def commit(self, offsets: Mapping[TopicPartition, int]) -> None:
        """``KafkaConsumer.commit``, synchronous."""
        oam = self._kafka.OffsetAndMetadata
        self._consumer.commit({self._tp(tp): oam(offset, "", -1)
                               for tp, offset in offsets.items()},
                              timeout_ms=self._timeout_ms)

    def committed(self, partitions: Sequence[TopicPartition]
                  ) -> dict[TopicPartition, int | None]:
        """``KafkaConsumer.committed`` for each partition."""
        result: dict[TopicPartition, int | None] = {}
        for tp in partitions:
            offset = self._consumer.committed(self._tp(tp), timeout_ms=self._timeout_ms)
            result[tp] = None if offset is None or offset < 0 else int(offset)
        return result

    def assignment(self) -> frozenset[TopicPartition]:
        """``KafkaConsumer.assignment``."""
        return frozenset(TopicPartition(tp.topic, tp.partition)
                         for tp in self._consumer.assignment() or ())

    def seek(self, partition: TopicPartition, offset: int) -> None:
        """``KafkaConsumer.seek``."""
        self._consumer.seek(self._tp(partition), offset)

    def offset_range(self, partition: TopicPartition) -> tuple[int, int]:
        """``beginning_offsets`` and ``end_offsets`` (the broker's ListOffsets)."""
        tp = self._tp(partition)
        first = self._consumer.beginning_offsets([tp], timeout_ms=self._timeout_ms)[tp]
        end = self._consumer.end_offsets([tp], timeout_ms=self._timeout_ms)[tp]
        return int(first), int(end)

    def pause(self, partitions: Sequence[TopicPartition]) -> None:
        """``KafkaConsumer.pause``."""
        self._consumer.pause(*[self._tp(tp) for tp in partitions])

    def resume(self, partitions: Sequence[TopicPartition]) -> None:
        """``KafkaConsumer.resume``."""
        self._consumer.resume(*[self._tp(tp) for tp in partitions])

    def close(self) -> None:
        """``KafkaConsumer.close`` without auto-commit (the listener sees the
        revocation); a listener error is raised after.
        """
        self._consumer.close(autocommit=False)
        bridge = self._bridge
        if bridge is not None and bridge.error is not None:
            error, bridge.error = bridge.error, None
            raise ListenerFailed(error)


class KafkaPythonAdmin(AdminClient):
    """One ``KafkaAdminClient``.

    Args:
        kafka: The kafka-python module.
        admin: The client.
        timeout_ms: How long a topic operation may take.

    """

    def __init__(self, kafka: Any, admin: Any, *, timeout_ms: int) -> None:
        self._kafka = kafka
        self._admin = admin
        self._timeout_ms = timeout_ms

    def create_topics(self, topics: Sequence[TopicSpec]) -> None:
        """``create_topics``; "already exists" is not an error."""
        if not topics:
            return
        wanted = {spec.name: {"num_partitions": spec.partitions, "replication_factor": -1,
                              "configs": {k: str(v) for k, v in spec.config.items()}}
                  for spec in topics}
        response = self._admin.create_topics(wanted, timeout_ms=self._timeout_ms,
                                             raise_errors=False)
        _raise_topic_errors(self._kafka, response, ignore=("TopicAlreadyExistsError",))

    def list_topics(self) -> dict[str, TopicSpec]:
        """Every non-internal topic with its partition count (one metadata request)."""
        described = self._admin.describe_topics()
        return {d["name"]: TopicSpec(d["name"], len(d.get("partitions") or ()))
                for d in described
                if not d.get("is_internal") and d.get("error_code", 0) == 0
                and not str(d["name"]).startswith("__")}

    def delete_topics(self, names: Sequence[str]) -> None:
        """``delete_topics``; unknown names are ignored."""
        if not names:
            return
        response = self._admin.delete_topics(list(names), timeout_ms=self._timeout_ms,
                                             raise_errors=False)
        _raise_topic_errors(self._kafka, response, ignore=("UnknownTopicOrPartitionError",))

    def close(self) -> None:
        """``KafkaAdminClient.close``."""
        self._admin.close()


def _raise_topic_errors(kafka: Any, response: Mapping[str, Any], *,
                        ignore: tuple[str, ...]) -> None:
    """Raise the first per-topic error of a create/delete response not in ``ignore``."""
    for topic in response.get("topics") or ():
        code = topic.get("error_code", 0)
        if not code:
            continue
        error_class = kafka.errors.for_code(code)
        if error_class.__name__ in ignore:
            continue
        detail = topic.get("error_message") or error_class.__name__
        raise error_class(f"topic {topic.get('name')!r}: {detail}")
