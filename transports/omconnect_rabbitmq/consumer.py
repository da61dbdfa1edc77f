"""The consumer: one AMQP channel per partition it reads, positions and commits.

Positions, group membership, rebalance callbacks, pause/resume and ``wakeup`` come from
:class:`~omconnect.transport.kit.log_consumer.LogConsumer`; this module supplies the reads:
each partition the consumer holds has a *reader*, an AMQP channel of the consumer's own
connection with one ``basic.consume`` on it, whose deliveries the I/O thread decodes into
the reader's buffer.

**Classic topics** (not replayable). A reader consumes the group's queue
``omc.q.<group>.<topic>.<p>`` with manual acknowledgements. Offsets are this consumer's
sequence numbers: the n-th delivery of a channel gets offset ``base + n - 1`` and a new
channel continues where the last one stopped, so offsets increase within a partition for
the consumer's lifetime (they are not the broker's and start again at 0 in a new consumer).
``commit({tp: n})`` acknowledges, with one ``basic.ack(multiple=True)``, every delivery of
the partition's current channel below ``n``. AMQP acknowledgements have no reply; the ack
is written to the socket without waiting, and the broker applies it before anything sent
later on the channel, its close included (waiting for a round trip would queue behind
every delivery in flight: ~35 ms a commit, measured). A process that dies right after
``commit`` may therefore get the last commit's messages again. Anything not
acknowledged when the channel closes (the consumer closes, loses its connection, or gives
the partition up) goes back to the queue in its original order and is delivered again:
that is the "no commit, redelivery" guarantee, and why delivery is at-least-once.
Committing while the partition's channel is down raises a retriable error; once a new
channel is open, offsets of the old channel's deliveries are ignored (those messages come
again, with new offsets). Flow control: the channel's prefetch (``basic.qos``, per channel)
is kept at ``uncommitted + rabbitmq.prefetch``, so the broker pushes at most
``rabbitmq.prefetch`` messages beyond what the application has polled; AMQP caps a prefetch
at 65535, so at most ``65535 - prefetch`` polled messages of a partition can be
uncommitted before its deliveries stop (until the next commit).

**Stream topics** (replayable). A reader consumes the partition's stream queue from an
offset (``x-stream-offset``); offsets are the broker's (the ``x-stream-offset`` header).
Deliveries are acknowledged as they are polled (for streams an ack is only flow control,
``basic.qos`` prefetch = ``rabbitmq.prefetch``); the group's positions are committed to the
key/value store ``__omconnect.positions``. ``seek`` restarts the reader at the offset;
deliveries before it (a stream delivers whole chunks) are skipped.

``pause`` keeps a partition's messages in its buffer; prefetch then stops the broker.
"""

from __future__ import annotations

import collections
import json
import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import Future
from functools import partial
from typing import Any

from omconnect.errors import (
    ConnectError,
    IllegalStateError,
    RetriableTransportError,
    TransportError,
    TransportTimeoutError,
    UnsupportedOperationError,
)
from omconnect.records import TopicPartition
from omconnect.transport.kit.grouping import Assignor, GroupMember
from omconnect.transport.kit.log_consumer import LogConsumer
from omconnect.transport.messages import Message, WireHeaders
from omconnect.transport.spi import RebalanceListener, StartFrom
from omconnect_rabbitmq.admin import TopicInfo, Topology
from omconnect_rabbitmq.client import ChannelOps, ConnectionSettings, IoConnection, chain
from omconnect_rabbitmq.codec import STREAM_OFFSET, delivered_fields
from omconnect_rabbitmq.groups import RabbitMQGroupStore
from omconnect_rabbitmq.kv_store import StreamKeyValueStore
from omconnect_rabbitmq.topology import group_queue, stream_queue

__all__ = ["RabbitMQConsumer"]

_log = logging.getLogger(__name__)

_MAX_PREFETCH = 65535
_LATEST = -1
"""Position of a stream partition started at its end, until its first message."""
_RANGE_QUIET = 0.2
"""The shortest quiet window after which a probe of a stream's last chunk stops."""
_PROBE_PREFETCH = 10_000
"""Deliveries a probe takes ahead of its acknowledgements (a stream chunk in one go)."""
_EMPTY_WAIT = 0.3
"""The shortest wait for a first delivery from a stream the broker counts empty."""


_Delivery = tuple[int, int, "bytes | None", "bytes | None", WireHeaders, "int | None"]
"""A buffered delivery: its delivery tag, its offset, and the key, value, headers and
timestamp it carries (decoded on the I/O thread); made into a ``Message`` or a batch row
when polled.
"""


class _Reader:
    """One partition's channel and buffer. ``buffer`` is shared with the loop (deque
    appends and pops are atomic); the rest is loop state unless said otherwise.
    """

    def __init__(self, tp: TopicPartition, stream: bool, queue: str) -> None:
        self.tp = tp
        self.stream = stream
        self.queue = queue
        self.channel: ChannelOps | None = None
        self.consumer_tag: str | None = None
        self.buffer: collections.deque[_Delivery] = collections.deque()
        self.alive = False
        # classic
        self.base = 0
        self.delivered = 0
        self.handed = 0  # consumer thread: deliveries polled on the current channel
        self.acked = 0  # consumer thread
        self.prefetch = 0  # consumer thread: the channel's current basic.qos
        self.prefetch_sent = 0  # loop: the last basic.qos sent on the channel
        self.session = 0  # consumer thread: which channel the buffer belongs to
        self.retry_at = 0.0  # consumer thread: when a closed channel may be re-opened
        # stream
        self.start: int = 0
        self.expected = 0  # consumer thread: the offset the consumer will poll next
        self.skip_below = 0


class RabbitMQConsumer(LogConsumer):
    """Reads classic and stream topics; see the module docstring.

    Args:
        settings: How to connect.
        topology: The transport's topology.
        positions: Returns the store of committed stream positions (opened on first use).
        group: The group, or ``None`` for a consumer that only assigns (stream topics).
        start: Where a partition with no committed position starts.
        prefetch: ``rabbitmq.prefetch``.
        assignor: How the group shares partitions.
        heartbeat_interval: Seconds between group announcements.
        session_timeout_ms: Silence after which other members drop this one.
        member_id: This member's id.

    """

    def __init__(
        self,
        settings: ConnectionSettings,
        topology: Topology,
        positions: Callable[[], StreamKeyValueStore],
        *,
        group: str | None,
        start: StartFrom,
        prefetch: int,
        assignor: Assignor,
        heartbeat_interval: float,
        session_timeout_ms: int,
        member_id: str,
    ) -> None:
        self._topology = topology
        self._positions_store = positions
        self._prefetch = prefetch
        self._readers: dict[TopicPartition, _Reader] = {}
        self._next: dict[TopicPartition, int] = {}
        """Classic partitions: the offset the next channel's first delivery gets."""
        self._infos: dict[str, TopicInfo] = {}
        self._known_end: dict[TopicPartition, int] = {}
        """Stream partitions: the highest end reported so far (ends never move back)."""
        self._lock = threading.Lock()
        self._store: RabbitMQGroupStore | None = None
        self._io = IoConnection(settings, name=f"consumer of group {group!r}",
                                on_connected=self._setup, on_lost=self._lost)
        member = None
        if group is not None:
            self._store = RabbitMQGroupStore(self._io, group,
                                             heartbeat_interval=heartbeat_interval,
                                             partition_counts=self._partition_count)
            member = GroupMember(self._store, member_id, assignor=assignor,
                                 heartbeat_interval=heartbeat_interval,
                                 session_timeout_ms=session_timeout_ms)
        super().__init__(group=group, start=start, member=member)
        self._io.start()

    # -- connection -------------------------------------------------------------------
    def _setup(self, connection: Any) -> Future[Any] | None:
        del connection
        if self._store is not None:
            return self._store.setup()
        return None

    def _lost(self, error: ConnectError) -> None:
        if self._store is not None:
            self._store.connection_lost()
        with self._lock:
            for reader in self._readers.values():
                reader.alive = False
                reader.channel = None
                reader.buffer.clear()
        self._signal.set()
        _log.info("consumer of group %r lost its connection (%s); uncommitted messages "
                  "will be delivered again", self.group, error)

    # -- topics -----------------------------------------------------------------------
    def _info(self, topic: str) -> TopicInfo | None:
        info = self._infos.get(topic)
        if info is None:
            info = self._topology.info(topic)
            if info is not None:
                self._infos[topic] = info
        return info

    def _partition_count(self, topic: str) -> int | None:
        info = self._info(topic)
        return info.partitions if info is not None else None

    def subscribe(self, topics: Sequence[str], listener: RebalanceListener | None = None
                  ) -> None:
        """Join the group for ``topics``; the group's queues on classic topics are declared
        now (missing topics are created), so messages sent from now on are kept for it.
        """
        self._check_open()
        if self.group is not None and not isinstance(topics, str) and topics:
            self._infos.update(self._topology.declare_group(self.group, list(topics)))
        super().subscribe(topics, listener)

    # -- the storage primitives -----------------------------------------------------------
    def _take(self, partitions: Sequence[TopicPartition]) -> None:
        if not partitions:
            return
        infos = {tp: self._info(tp.topic) for tp in partitions}
        streams = [tp for tp in partitions if (info := infos[tp]) is not None and info.stream]
        committed: dict[TopicPartition, int | None] = {}
        if streams and self.group is not None:
            self._positions_store().refresh()
            committed = self._load_committed(self.group, streams)
        for tp in partitions:
            info = infos[tp]
            if info is None or tp.partition >= info.partitions:
                raise TransportError(f"partition {tp} does not exist", topic=tp.topic,
                                     partition=tp.partition)
            if info.stream:
                position = committed.get(tp)
                if position is None:
                    position = 0 if self._start == "earliest" else _LATEST
                reader = _Reader(tp, True, stream_queue(tp.topic, tp.partition))
                reader.start = reader.expected = position
            else:
                if self.group is None:
                    raise UnsupportedOperationError(
                        f"topic {tp.topic!r} is a classic (not replayable) topic: it can only "
                        "be read in a consumer group", topic=tp.topic)
                reader = _Reader(tp, False, group_queue(self.group, tp.topic, tp.partition))
                position = reader.base = self._next.get(tp, 0)
            self._open_reader(reader)
            _log.debug("reading %s from %s", tp, position)
            with self._lock:
                self._readers[tp] = reader
            self._positions[tp] = position
        self._order = sorted(self._positions)

    def _forget(self, partition: TopicPartition) -> None:
        with self._lock:
            reader = self._readers.pop(partition, None)
        if reader is not None:
            _log.debug("no longer reading %s", partition)
            self._close_reader(reader)
        super()._forget(partition)

    def _open_reader(self, reader: _Reader) -> None:
        """Open the reader's channel and start consuming (blocks until the broker agreed)."""
        def work() -> Future[Any]:
            return chain(self._io.channel(f"reading {reader.tp}"),
                         lambda channel: self._consume(reader, channel))

        self._io.call(work, action=f"reading {reader.tp}")
        reader.session += 1
        reader.handed = reader.acked = 0

    def _consume(self, reader: _Reader, channel: ChannelOps) -> Future[Any]:
        reader.channel = channel
        reader.delivered = 0
        channel.on_close(lambda _reason: self._reader_closed(reader, channel))
        if reader.stream:
            start: Any = "next" if reader.start == _LATEST else reader.start
            reader.skip_below = max(reader.start, 0)
            qos = channel.do("basic_qos", prefetch_count=self._prefetch)
            arguments = {"x-stream-offset": start}
        else:
            reader.prefetch = reader.prefetch_sent = self._prefetch
            qos = channel.do("basic_qos", prefetch_count=self._prefetch, global_qos=True)
            arguments = {}

        def on_message(ch: Any, method: Any, properties: Any, body: bytes) -> None:
            self._deliver(reader, channel, ch, method, properties, body)

        def consume(_: Any) -> Future[Any]:
            return channel.do("basic_consume", reader.queue, on_message, arguments=arguments)

        def started(frame: Any) -> None:
            reader.consumer_tag = frame.method.consumer_tag
            reader.alive = True

        return chain(chain(qos, consume), started)

    def _reader_closed(self, reader: _Reader, channel: ChannelOps) -> None:
        if reader.channel is channel:
            reader.alive = False
            reader.channel = None
            with self._lock:
                reader.buffer.clear()
            self._signal.set()

    def _deliver(self, reader: _Reader, channel: ChannelOps, ch: Any, method: Any,
                 properties: Any, body: bytes) -> None:
        if reader.channel is not channel:
            return
        if reader.stream:
            offset = (properties.headers or {}).get(STREAM_OFFSET)
            if method.consumer_tag != reader.consumer_tag or not isinstance(offset, int) \
                    or offset < reader.skip_below:
                ch.basic_ack(method.delivery_tag)
                return
            position = int(offset)
        else:
            reader.delivered = method.delivery_tag
            position = reader.base + method.delivery_tag - 1
        entry = (method.delivery_tag, position, *delivered_fields(properties, body))
        reader.buffer.append(entry)  # deque appends and pops are atomic: no lock needed
        if not self._signal.is_set():
            self._signal.set()

    def _close_reader(self, reader: _Reader) -> None:
        """Close the reader's channel: unacknowledged classic deliveries go back to the
        queue.
        """
        def work() -> None:
            channel, reader.channel = reader.channel, None
            reader.alive = False
            if channel is not None:
                channel.close()

        if self._io.connected.is_set() and not self._io.closed:
            try:
                self._io.call(work, action=f"closing reader of {reader.tp}")
            except TransportError as exc:
                _log.info("closing the reader of %s failed: %s", reader.tp, exc)

    def _read(self, partition: TopicPartition, offset: int, limit: int) -> list[Message]:
        topic, number = partition.topic, partition.partition
        return [Message(topic, key, value, headers, timestamp, number, position)
                for _, position, key, value, headers, timestamp
                in self._pop_deliveries(partition, offset, limit)]

    def _read_columns(self, partition: TopicPartition, offset: int, limit: int) -> Any:
        """:meth:`_read` as a consumed Arrow batch, built from the deliveries' fields with
        no ``Message`` per delivery (``None`` when there are none).
        """
        taken = self._pop_deliveries(partition, offset, limit)
        if not taken:
            return None
        from omconnect.columnar.columns import consumed_batch

        rows = len(taken)
        _, positions, keys, values, headers, timestamps = zip(*taken, strict=True)
        return consumed_batch([partition.topic] * rows, [partition.partition] * rows,
                              positions, timestamps, keys, values, headers)

    def _pop_deliveries(self, partition: TopicPartition, offset: int, limit: int
                        ) -> list[_Delivery]:
        """Up to ``limit`` buffered deliveries of ``partition`` from ``offset``, taken
        from the buffer (acknowledged on a stream; counted for the classic prefetch).
        """
        reader = self._readers.get(partition)
        if reader is None:
            return []
        if reader.stream and (offset != reader.expected or not reader.alive):
            self._restart(reader, offset)  # a seek, or the channel was lost
            return []
        if not reader.alive:
            self._revive(reader)
            return []
        taken: list[_Delivery] = []
        buffer = reader.buffer
        pop = buffer.popleft
        try:
            for _ in range(min(limit, len(buffer))):
                taken.append(pop())
        except IndexError:  # cleared by the I/O thread meanwhile (channel lost)
            pass
        if not taken:
            return []
        last_tag = taken[-1][0]
        if reader.stream:
            reader.expected = taken[-1][1] + 1
            channel = reader.channel
            if channel is not None:
                self._io.post(lambda: _ack(channel, last_tag))
        else:
            reader.handed = last_tag
            self._next[partition] = reader.base + last_tag
            self._adjust_prefetch(reader)
        return taken

    def _revive(self, reader: _Reader) -> None:
        """Re-open a classic reader whose channel the broker closed (its queue's
        ``consumer_timeout``, say) while this member still holds the partition's lock; at
        most once a second. After a lost connection the lock is gone too, and the group's
        next rebalance hands the partition out again instead.
        """
        now = time.monotonic()
        if now < reader.retry_at or not self._io.connected.is_set():
            return
        reader.retry_at = now + 1.0
        try:
            if self._store is not None and not self._store.holds(reader.tp):
                return
            reader.base = self._next.get(reader.tp, 0)
            self._open_reader(reader)
        except TransportError as exc:
            _log.info("re-opening the reader of %s failed: %s", reader.tp, exc)

    def _restart(self, reader: _Reader, offset: int) -> None:
        """Read a stream partition from ``offset`` on a fresh channel."""
        _log.debug("restarting %s at %s", reader.tp, offset)
        self._close_reader(reader)
        with self._lock:
            reader.buffer.clear()
        reader.start = reader.expected = offset
        if self._io.connected.is_set():
            try:
                self._open_reader(reader)
            except TransportError as exc:
                _log.info("restarting the reader of %s failed: %s", reader.tp, exc)

    def _adjust_prefetch(self, reader: _Reader) -> None:
        wanted = min(_MAX_PREFETCH, reader.handed - reader.acked + self._prefetch)
        if abs(wanted - reader.prefetch) * 4 < self._prefetch and wanted < _MAX_PREFETCH:
            return
        reader.prefetch = wanted
        channel = reader.channel
        if channel is None:
            return

        def work() -> None:
            if channel.closed is None and wanted != reader.prefetch_sent:
                reader.prefetch_sent = wanted
                channel.do("basic_qos", prefetch_count=wanted, global_qos=True)

        self._io.post(work)

    def _range(self, partition: TopicPartition) -> tuple[int, int] | None:
        info = self._info(partition.topic)
        if info is None or not 0 <= partition.partition < info.partitions:
            return None
        if not info.stream:
            raise UnsupportedOperationError(
                f"topic {partition.topic!r} is a classic queue topic: it has no offset range "
                "(declare it a stream with rabbitmq.streams or rabbitmq.stream.topics)",
                topic=partition.topic)
        queue = stream_queue(partition.topic, partition.partition)
        first = self._probe(queue, "first", stop_after_first=True)
        if first is None:
            end = self._known_end.get(partition, 0)
            return end, end
        last = self._probe(queue, "last", stop_after_first=False)
        assert last is not None  # the last chunk must deliver: _probe raises otherwise
        # A stream only grows at its end: never report an end before one seen earlier.
        end = max(last + 1, self._known_end.get(partition, 0))
        self._known_end[partition] = end
        return first, end

    def _probe(self, queue: str, start: str, *, stop_after_first: bool) -> int | None:
        """The first offset a consumer from ``start`` receives, or (``stop_after_first``
        false) the highest offset of what the broker sends from there: the stream's last
        chunk, for ``start="last"``. ``None``: the stream holds nothing.

        AMQP 0-9-1 cannot ask a stream where it ends, so the probe reads the last chunk,
        which the broker sends at once and then nothing more. The clocks start once the
        broker registered the probe's consumer, never before. A stream the broker counts
        messages in (its statistics lag by some seconds), and every probe of the last
        chunk, wait for a first delivery for the whole connection timeout and fail with a
        :class:`~omconnect.errors.TransportTimeoutError` when none came; only a stream
        the broker counts empty gets a short window, closed by a second question on the
        probe's channel (anything the broker sent before its answer is read first, and its
        count may have caught up). After the first delivery the chunk
        is taken as complete once no delivery came for a quiet window that grows with
        how slow the first one was (at least 0.2 s): a loaded machine or a slow broker
        makes the probe wait longer, never answer short.
        """
        seen: list[int] = []
        counted = [0]
        first_seen = threading.Event()
        done = threading.Event()
        last_seen = [0.0]

        def work() -> Future[Any]:
            def consume(channel: ChannelOps) -> Future[Any]:
                def on_message(ch: Any, method: Any, properties: Any, _body: bytes) -> None:
                    offset = (properties.headers or {}).get(STREAM_OFFSET)
                    if isinstance(offset, int):
                        seen.append(offset)
                        last_seen[0] = time.monotonic()
                        first_seen.set()
                        if stop_after_first:
                            done.set()
                    ch.basic_ack(method.delivery_tag)

                def declared(frame: Any) -> Future[Any]:
                    counted[0] = int(getattr(frame.method, "message_count", 0) or 0)
                    return chain(channel.do("basic_qos", prefetch_count=_PROBE_PREFETCH),
                                 lambda _: channel.do("basic_consume", queue, on_message,
                                                      arguments={"x-stream-offset": start}))

                probe_channel[0] = channel
                return chain(channel.do("queue_declare", queue, passive=True), declared)

            return chain(self._io.channel(f"probing {queue}"), consume)

        probe_channel: list[ChannelOps | None] = [None]
        timeout = self._io.settings.timeout
        asked = time.monotonic()
        try:
            self._io.call(work, action=f"probing stream {queue}")
            registered = time.monotonic()
            must_deliver = start == "last" or counted[0] > 0
            first_wait = timeout if must_deliver else \
                min(timeout, max(_EMPTY_WAIT, 10 * (registered - asked)))
            if not first_seen.wait(first_wait) and not must_deliver:
                # The broker's count lags its stream by up to its statistics interval, and
                # a starved process reads late what the broker sent at once: ask again on
                # the probe's channel. Frames arrive in order, so a delivery sent before
                # this reply has been seen when it returns; a count grown since says the
                # stream holds messages after all.
                probe = probe_channel[0]
                assert probe is not None
                frame = self._io.call(partial(probe.do, "queue_declare", queue, passive=True),
                                      action=f"probing stream {queue}")
                must_deliver = int(getattr(frame.method, "message_count", 0) or 0) > 0
                if not first_seen.is_set() and not must_deliver:
                    return None
            if not first_seen.wait(timeout - (time.monotonic() - registered)):
                raise TransportTimeoutError(
                    f"reading the {start} offset of stream {queue!r}: no message arrived "
                    f"within {timeout:g} s (rabbitmq.connection.timeout.ms) although the "
                    "stream holds some; the broker or this machine is too slow to answer")
            quiet = min(max(_RANGE_QUIET, 2 * (last_seen[0] - registered)), timeout / 2)
            deadline = registered + timeout
            while not done.is_set():
                now = time.monotonic()
                if now - last_seen[0] > quiet:
                    break
                if now > deadline:
                    raise TransportTimeoutError(
                        f"reading where stream {queue!r} ends: its last chunk was still "
                        f"arriving after {timeout:g} s (rabbitmq.connection.timeout.ms)")
                done.wait(quiet / 4)
        finally:
            channel = probe_channel[0]
            if channel is not None:
                self._io.post(channel.close)
        return seen[0] if stop_after_first else max(seen)

    def _store_commit(self, group: str, offsets: Mapping[TopicPartition, int]) -> None:
        streams: dict[str, bytes | None] = {}
        for tp, offset in offsets.items():
            info = self._info(tp.topic)
            if info is None:
                raise TransportError(f"cannot commit {tp}: the topic does not exist",
                                     topic=tp.topic, partition=tp.partition)
            if info.stream:
                streams[_position_key(group, tp)] = str(offset).encode()
            else:
                self._acknowledge(tp, offset)
        if streams:
            self._positions_store().put_many(streams)

    def _acknowledge(self, tp: TopicPartition, offset: int) -> None:
        reader = self._readers.get(tp)
        if reader is None:
            raise IllegalStateError(f"cannot commit {tp}: it is not assigned to this consumer",
                                    topic=tp.topic, partition=tp.partition)
        tag = min(offset - reader.base, reader.handed)
        if tag <= reader.acked:
            return  # nothing new; offsets of an earlier channel are delivered again anyway
        channel = reader.channel
        if channel is None or not reader.alive:
            raise RetriableTransportError(
                f"cannot commit offset {offset} of {tp}: the connection was lost; the "
                "uncommitted messages are delivered again", topic=tp.topic,
                partition=tp.partition, offset=offset)
        wanted = min(_MAX_PREFETCH, reader.handed - tag + self._prefetch)

        def work() -> None:
            if channel.closed is not None:
                return  # the channel died meanwhile: its deliveries come back anyway
            channel.channel.basic_ack(tag, multiple=True)
            if wanted != reader.prefetch_sent:
                reader.prefetch_sent = wanted
                channel.do("basic_qos", prefetch_count=wanted, global_qos=True)

        # Not waited for: frames of a channel are processed in order, so the broker applies
        # the ack before anything sent later on the channel (its close included); waiting
        # for a reply would queue behind every delivery in flight (measured: ~35 ms).
        self._io.post(work)
        reader.acked = tag
        reader.prefetch = wanted

    def _load_committed(self, group: str, partitions: Sequence[TopicPartition]
                        ) -> dict[TopicPartition, int | None]:
        result: dict[TopicPartition, int | None] = {}
        store = None
        for tp in partitions:
            info = self._info(tp.topic)
            if info is None or not info.stream:
                result[tp] = None
                continue
            store = store or self._positions_store()
            value = store.get(_position_key(group, tp))
            result[tp] = int(value) if value is not None else None
        return result

    def _wait(self, timeout: float) -> None:
        self._signal.wait(timeout)

    def _prepare(self) -> None:
        if self._io.closed:
            raise IllegalStateError("the consumer is closed")

    def _release(self) -> None:
        self._io.close()

    # -- the Consumer SPI beyond LogConsumer ------------------------------------------------
    def assign(self, partitions: Iterable[TopicPartition]) -> None:
        """Read exactly ``partitions`` of stream topics, outside group membership.

        Raises:
            UnsupportedOperationError: A partition belongs to a classic topic (those are
                read through a group's queues only).

        """
        wanted = list(partitions)
        for tp in wanted:
            info = self._info(tp.topic)
            if info is not None and not info.stream:
                raise UnsupportedOperationError(
                    f"cannot assign {tp}: topic {tp.topic!r} is a classic (not replayable) "
                    "topic; subscribe in a group instead", topic=tp.topic)
        super().assign(wanted)

    def seek(self, partition: TopicPartition, offset: int) -> None:
        """Read a stream partition from ``offset`` on the next poll.

        Raises:
            UnsupportedOperationError: The partition belongs to a classic topic.

        """
        info = self._info(partition.topic)
        if info is not None and not info.stream:
            raise UnsupportedOperationError(
                f"cannot seek {partition}: topic {partition.topic!r} is a classic (not "
                "replayable) topic", topic=partition.topic, partition=partition.partition)
        super().seek(partition, offset)

    def close(self) -> None:
        """Leave the group (the listener's ``on_partitions_revoked`` first), close every
        channel (unacknowledged classic deliveries go back to their queues) and the
        connection. Idempotent.
        """
        try:
            super().close()
        finally:
            self._io.close()


def _ack(channel: ChannelOps, tag: int) -> None:
    if channel.closed is None:
        channel.channel.basic_ack(tag, multiple=True)


def _position_key(group: str, tp: TopicPartition) -> str:
    return json.dumps([group, tp.topic, tp.partition])


