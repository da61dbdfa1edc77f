"""Topics: the catalog of their partition counts, their exchanges and queues, the admin.

:class:`Topology` is the transport's one place that declares and deletes exchanges and
queues (see :mod:`omconnect_rabbitmq.topology` for the mapping). It records every topic in
the catalog, the key/value store ``__omconnect.topics``: ``t<NUL><topic>`` holds the
partition count, whether the topic is a stream and its queue arguments;
``g<NUL><topic><NUL><group>`` records that a group declared queues on a classic topic, so
deleting the topic deletes them too. Producers, consumers and admins of one transport
share its :class:`Topology`.

Creating a topic is create-if-absent, atomic across processes: the creator declares the
topic's exchange, writes its layout to the catalog with
:meth:`~omconnect_rabbitmq.kv_store.StreamKeyValueStore.put_if_absent`, and declares the
queues of the layout that won. Two creators of one topic at once (a source with
``topic.creation.default.partitions=4`` and another with 1, in one process or two) both
end with the first layout written, and every partition of it has its queue; a creator
that lost logs the layout it adopted.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future
from typing import Any

import attrs

from omconnect.errors import IllegalStateError, TransportError
from omconnect.transport.kit.checks import check_topic_spec
from omconnect.transport.messages import TopicSpec
from omconnect.transport.spi import Admin
from omconnect_rabbitmq.client import (
    ChannelOps,
    ConnectionSettings,
    IoConnection,
    chain,
    gather,
)
from omconnect_rabbitmq.kv_store import StreamKeyValueStore
from omconnect_rabbitmq.topology import (
    CATALOG_NAMESPACE,
    STREAM_ARGUMENTS,
    group_queue,
    routing_key,
    stream_queue,
    topic_exchange,
)

__all__ = ["RabbitMQAdmin", "TopicInfo", "Topology", "queue_arguments"]

_log = logging.getLogger(__name__)

STREAM_CONFIG = "rabbitmq.stream"
"""A topic's ``TopicSpec.config`` key that makes it a stream (``"true"``)."""


@attrs.frozen(kw_only=True)
class TopicInfo:
    """What the catalog holds about a topic.

    Attributes:
        partitions: The partition count.
        stream: Whether its partitions are stream queues (replayable).
        arguments: The ``x-...`` arguments of its stream queues (retention).

    """

    partitions: int
    stream: bool
    arguments: dict[str, Any] = attrs.field(factory=dict, eq=False)

    def encode(self) -> bytes:
        """The catalog value."""
        data: dict[str, Any] = {"partitions": self.partitions, "stream": self.stream}
        if self.arguments:
            data["arguments"] = self.arguments
        return json.dumps(data, sort_keys=True).encode()

    @classmethod
    def decode(cls, value: bytes) -> TopicInfo:
        """A catalog value read back."""
        data = json.loads(value)
        return cls(partitions=int(data["partitions"]), stream=bool(data["stream"]),
                   arguments=dict(data.get("arguments") or {}))


def queue_arguments(spec: TopicSpec) -> dict[str, Any]:
    """The RabbitMQ queue arguments in a topic's config (keys starting with ``x-``, e.g.
    ``x-max-age: 7D`` or ``x-max-length-bytes: 10000000000`` for a stream's retention);
    numbers given as strings become integers.

    Raises:
        ValueError: ``x-queue-type`` is given (the transport chooses it).

    """
    arguments: dict[str, Any] = {}
    for key, value in spec.config.items():
        if not key.startswith("x-"):
            continue
        if key == "x-queue-type":
            raise ValueError(f"topic {spec.name!r}: x-queue-type cannot be set; use "
                             f"{STREAM_CONFIG}=true for a stream")
        text = str(value).strip()
        arguments[key] = int(text) if text.lstrip("-").isdigit() else value
    return arguments


def _topic_key(topic: str) -> str:
    return f"t\x00{topic}"


def _group_key(topic: str, group: str) -> str:
    return f"g\x00{topic}\x00{group}"


class Topology:
    """Declares and deletes the broker objects of topics and groups; thread-safe.

    Args:
        settings: How to connect.
        default_partitions: Partitions of a topic created implicitly.
        all_streams: Every topic is a stream.
        stream_topics: Topics that are streams even when ``all_streams`` is off.
        declare_groups: Groups whose queues are declared with every classic topic.

    """

    def __init__(
        self,
        settings: ConnectionSettings,
        *,
        default_partitions: int,
        all_streams: bool,
        stream_topics: Iterable[str] = (),
        declare_groups: Iterable[str] = (),
    ) -> None:
        self.settings = settings
        self.default_partitions = default_partitions
        self.all_streams = all_streams
        self.stream_topics = frozenset(stream_topics)
        self.declare_groups = tuple(declare_groups)
        self._lock = threading.Lock()
        self._catalog: StreamKeyValueStore | None = None
        self._io: IoConnection | None = None
        self._closed = False

    # -- connections ------------------------------------------------------------------
    @property
    def catalog(self) -> StreamKeyValueStore:
        """The topic catalog (opened on first use)."""
        with self._lock:
            self._check_open()
            if self._catalog is None:
                self._catalog = StreamKeyValueStore(self.settings, CATALOG_NAMESPACE)
            return self._catalog

    def _connection(self) -> IoConnection:
        with self._lock:
            self._check_open()
            if self._io is None:
                self._io = IoConnection(self.settings, name="topic administration").start()
            return self._io

    def _check_open(self) -> None:
        if self._closed:
            raise IllegalStateError("the rabbitmq transport is closed")

    def close(self) -> None:
        """Close the catalog and the administration connection. Idempotent."""
        with self._lock:
            self._closed = True
            catalog, self._catalog = self._catalog, None
            io, self._io = self._io, None
        if catalog is not None:
            catalog.close()
        if io is not None:
            io.close()

    def _run(self, action: str, ops: Callable[[ChannelOps], list[Future[Any]]]) -> None:
        """Open a channel, issue ``ops`` on it (pika queues them in order), wait for all,
        close the channel.
        """
        io = self._connection()

        def work() -> Future[Any]:
            def issue(channel: ChannelOps) -> Future[Any]:
                done = gather(ops(channel))
                done.add_done_callback(lambda _: channel.close())
                return done

            return chain(io.channel(action), issue)

        io.call(work, action=action)

    # -- topics -----------------------------------------------------------------------
    def is_stream(self, spec: TopicSpec) -> bool:
        """Whether a topic created from ``spec`` is a stream."""
        flag = str(spec.config.get(STREAM_CONFIG, "")).strip().lower()
        if flag in ("true", "false"):
            return flag == "true"
        return self.all_streams or spec.name in self.stream_topics

    def topics(self, *, refresh: bool = True) -> dict[str, TopicInfo]:
        """Every topic in the catalog."""
        if refresh:
            self.catalog.refresh()
        return {key[2:]: TopicInfo.decode(value) for key, value in self.catalog.scan("t\x00")}

    def info(self, topic: str) -> TopicInfo | None:
        """What the catalog holds about ``topic`` (re-reading it once when absent)."""
        catalog = self.catalog
        value = catalog.get(_topic_key(topic))
        if value is None:
            catalog.refresh()
            value = catalog.get(_topic_key(topic))
        return TopicInfo.decode(value) if value is not None else None

    def ensure(self, topic: str) -> TopicInfo:
        """The topic's info, creating it with the default partition count if missing."""
        info = self.info(topic)
        if info is None:
            self.create([TopicSpec(topic, self.default_partitions)])
            info = self.info(topic)
            if info is None:  # pragma: no cover - the catalog lost a confirmed write
                raise TransportError(f"topic {topic!r} was created but is not in the catalog",
                                     topic=topic)
        return info

    def create(self, specs: Sequence[TopicSpec]) -> None:
        """Create topics that do not exist; existing ones are left as they are. Atomic
        per topic across processes (see the module docstring).
        """
        for spec in specs:
            check_topic_spec(spec)
        existing = self.topics()
        wanted = {spec.name: spec for spec in specs if spec.name not in existing}
        if not wanted:
            return
        self._run(f"declaring the exchanges of {sorted(wanted)}", lambda channel: [
            channel.do("exchange_declare", topic_exchange(name), exchange_type="direct",
                       durable=True) for name in wanted])
        infos: dict[str, TopicInfo] = {}
        for name, spec in wanted.items():
            asked = TopicInfo(partitions=spec.partitions, stream=self.is_stream(spec),
                              arguments=queue_arguments(spec) if self.is_stream(spec) else {})
            won = TopicInfo.decode(self.catalog.put_if_absent(_topic_key(name), asked.encode()))
            if won != asked or won.arguments != asked.arguments:
                _log.info("topic %r was created at the same moment by another client with "
                          "%d partition(s)%s; using that layout", name, won.partitions,
                          " (stream)" if won.stream else "")
            infos[name] = won

        def ops(channel: ChannelOps) -> list[Future[Any]]:
            futures = []
            for name, info in infos.items():
                exchange = topic_exchange(name)
                if info.stream:
                    arguments = {**STREAM_ARGUMENTS, **info.arguments}
                    for partition in range(info.partitions):
                        queue = stream_queue(name, partition)
                        futures.append(channel.do("queue_declare", queue, durable=True,
                                                  arguments=arguments))
                        futures.append(channel.do("queue_bind", queue, exchange,
                                                  routing_key=routing_key(partition)))
                else:
                    for group in self.declare_groups:
                        futures += _declare_group_queues(channel, group, name, info)
            return futures

        self._run(f"creating topics {sorted(infos)}", ops)
        groups: dict[str, bytes | None] = {
            _group_key(name, group): b"1" for name, info in infos.items() if not info.stream
            for group in self.declare_groups}
        if groups:
            self.catalog.put_many(groups)

    def declare_group(self, group: str, topics: Iterable[str]) -> dict[str, TopicInfo]:
        """Make sure ``group`` has its queues on every classic topic of ``topics``
        (creating missing topics); the topics' infos.
        """
        infos = {topic: self.ensure(topic) for topic in topics}
        classic = {t: i for t, i in infos.items() if not i.stream
                   and self.catalog.get(_group_key(t, group)) is None}
        if classic:
            self._run(f"declaring queues of group {group!r}",
                      lambda channel: [f for t, i in classic.items()
                                       for f in _declare_group_queues(channel, group, t, i)])
            self.catalog.put_many({_group_key(t, group): b"1" for t in classic})
        return infos

    def delete(self, names: Sequence[str]) -> None:
        """Delete topics with their exchanges, streams and group queues; unknown names are
        ignored.
        """
        existing = self.topics()
        doomed = {name: existing[name] for name in names if name in existing}
        if not doomed:
            return
        groups = {name: [key.split("\x00")[2] for key, _ in self.catalog.scan(f"g\x00{name}\x00")]
                  for name in doomed}

        def ops(channel: ChannelOps) -> list[Future[Any]]:
            futures = []
            for name, info in doomed.items():
                futures.append(channel.do("exchange_delete", topic_exchange(name)))
                for partition in range(info.partitions):
                    if info.stream:
                        futures.append(channel.do("queue_delete", stream_queue(name, partition)))
                    for group in groups[name]:
                        futures.append(channel.do("queue_delete",
                                                  group_queue(group, name, partition)))
            return futures

        self._run(f"deleting topics {sorted(doomed)}", ops)
        removed: dict[str, bytes | None] = {_topic_key(name): None for name in doomed}
        for name, members in groups.items():
            removed.update({_group_key(name, group): None for group in members})
        self.catalog.put_many(removed)


def _declare_group_queues(channel: ChannelOps, group: str, topic: str, info: TopicInfo
                          ) -> list[Future[Any]]:
    exchange = topic_exchange(topic)
    futures = []
    for partition in range(info.partitions):
        queue = group_queue(group, topic, partition)
        futures.append(channel.do("queue_declare", queue, durable=True))
        futures.append(channel.do("queue_bind", queue, exchange,
                                  routing_key=routing_key(partition)))
    return futures


class RabbitMQAdmin(Admin):
    """Creates, lists and deletes topics through the transport's :class:`Topology`.

    Args:
        topology: The transport's topology.

    """

    def __init__(self, topology: Topology) -> None:
        self._topology = topology
        self._closed = False

    def _open_topology(self) -> Topology:
        self._check_open()
        return self._topology

    def create_topics(self, topics: Sequence[TopicSpec]) -> None:
        """Create topics (their exchange, and stream queues for stream topics); a topic
        that exists is left as it is. ``TopicSpec.config["rabbitmq.stream"]`` = ``"true"``
        makes one topic a stream; ``x-...`` keys are passed to its stream queues as
        arguments (retention: ``x-max-age``, ``x-max-length-bytes``,
        ``x-stream-max-segment-size-bytes``).

        Raises:
            ValueError: A spec has no name or a partition count outside 1 to 1024.
            TransportError: The broker refused a declaration or cannot be reached.

        """
        self._open_topology().create(topics)

    def list_topics(self) -> dict[str, TopicSpec]:
        """Every topic, by name (``config`` says whether it is a stream)."""
        return {name: TopicSpec(name, info.partitions,
                                {STREAM_CONFIG: "true" if info.stream else "false"})
                for name, info in self._open_topology().topics().items()}

    def delete_topics(self, names: Sequence[str]) -> None:
        """Delete topics, their messages and every group's queues; unknown names are
        ignored.
        """
        self._open_topology().delete(names)

    def close(self) -> None:
        """Release the admin (the transport keeps the shared connection). Idempotent."""
        self._closed = True
