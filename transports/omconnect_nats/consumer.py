"""The consumer: a pull reader per partition it holds, positions in a key/value bucket.

Positions, group membership (the kit's protocol over :mod:`omconnect_nats.groups`, with
a heartbeat thread), rebalance callbacks, ``assign``/``seek``, pause/resume and
``wakeup`` come from :class:`~omconnect.transport.kit.log_consumer.LogConsumer`; this
module supplies the reads. Each partition the consumer reads has a
:class:`~omconnect_nats.pulling.PullReader` on its stream, opened at the consumer's
position (offset ``n`` is stream sequence ``n + 1``) when it is first read; the reader
keeps up to ``nats.fetch.max.messages`` messages buffered ahead of the polls, so a poll
takes what is there and returns, and a poll that finds nothing waits for the readers to
wake it (no polling interval). A partition paused keeps its buffer; a seek, or a
position that is not where the reader stands, opens the reader again there.

A commit stores the group's next offset of each partition in the bucket
``<prefix>-positions`` (key ``<topic>.<partition>.<group>``), one write per partition,
acknowledged by the server before ``commit`` returns: the group's position is what was
committed, and only that; nothing is acknowledged on the stream (its readers are
``AckPolicy.NONE`` consumers), so what was read and not committed is read again by the
partition's next owner.
"""

from __future__ import annotations

import asyncio
import time
import weakref
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from omconnect.records import TopicPartition
from omconnect.transport.kit.grouping import GroupMember, GroupStore
from omconnect.transport.kit.heartbeat import Heartbeat
from omconnect.transport.kit.log_consumer import LogConsumer
from omconnect.transport.messages import Message
from omconnect.transport.spi import RebalanceListener, StartFrom
from omconnect_nats.client import NatsClient, nats_module
from omconnect_nats.codec import decode_fields, to_message
from omconnect_nats.errors import ErrorContext, translated_errors
from omconnect_nats.groups import NatsGroupStore
from omconnect_nats.pulling import Delivery, PullReader
from omconnect_nats.topics import Topology

__all__ = ["NatsConsumer", "ReaderSettings"]

_MISSING_RETRY = 0.5
"""Seconds between attempts to read a partition whose stream does not exist (yet)."""
_WAIT_SLICE = 1.0
"""The longest a waiting poll sleeps before it looks at its readers again."""


class ReaderSettings:
    """How the consumer's readers pull.

    Args:
        batch: ``nats.fetch.max.messages``.
        expires: ``nats.fetch.wait.ms`` in seconds.
        inactive_threshold: ``nats.reader.inactive.threshold.ms`` in seconds.

    """

    __slots__ = ("batch", "expires", "inactive_threshold")

    def __init__(self, batch: int, expires: float, inactive_threshold: float) -> None:
        self.batch = batch
        self.expires = expires
        self.inactive_threshold = inactive_threshold


class NatsConsumer(LogConsumer):
    """Reads JetStream partitions; see the module docstring.

    Args:
        client: The transport's client.
        topology: The transport's topics and buckets.
        group: The group, or ``None`` for a consumer that only assigns.
        start: Where a partition with no committed position starts.
        readers: How readers pull.
        member: The group membership (``None`` without a group).
        heartbeat: The membership's heartbeat thread (``None`` without a group).
        max_poll_interval: Seconds without a poll after which heartbeats stop.
        where: For error messages.

    """

    def __init__(self, client: NatsClient, topology: Topology, *,
                 group: str | None, start: StartFrom, readers: ReaderSettings,
                 member: GroupMember | None, heartbeat: Callable[[Callable[[], bool | None]],
                                                                 Heartbeat] | None,
                 max_poll_interval: float, where: ErrorContext) -> None:
        super().__init__(group=group, start=start, member=member)
        self._client = client
        self._topology = topology
        self._settings = readers
        self._where = where
        self._api = nats_module().js.api
        self._readers: dict[TopicPartition, PullReader] = {}
        self._missing_since: dict[TopicPartition, float] = {}
        self._max_poll_interval = max_poll_interval
        self._polling = False
        self._polled_at = time.monotonic()
        self._heartbeat = heartbeat(_weakly(self._alive)) if heartbeat is not None else None

    # -- the Consumer SPI beyond LogConsumer ------------------------------------------

    def subscribe(self, topics: Sequence[str],
                  listener: RebalanceListener | None = None) -> None:
        """Join the group for ``topics`` and start heart-beating."""
        super().subscribe(topics, listener)
        self._polled_at = time.monotonic()
        if self._heartbeat is not None:
            self._heartbeat.start()

    def _poll_with(self, fetch: Any, max_records: int, timeout: float) -> Any:
        self._polling = True
        try:
            return super()._poll_with(fetch, max_records, timeout)
        finally:
            self._polling = False
            self._polled_at = time.monotonic()

    def _alive(self) -> bool:
        """Whether this consumer counts as alive for its group (its heartbeat asks)."""
        return self._polling or time.monotonic() - self._polled_at <= self._max_poll_interval

    # -- the storage primitives ---------------------------------------------------------

    def _reader(self, tp: TopicPartition, offset: int) -> PullReader | None:
        """The partition's reader standing at ``offset`` (opened there if it is not), or
        ``None`` while its stream does not exist.
        """
        reader = self._readers.get(tp)
        if reader is not None and reader.next_seq == offset + 1 and reader.healthy:
            return reader
        if reader is not None and reader.missing:
            since = self._missing_since.get(tp, 0.0)
            if time.monotonic() - since < _MISSING_RETRY and reader.next_seq == offset + 1:
                return None
        if reader is None:
            reader = self._readers[tp] = PullReader(
                self._topology.names.stream(tp.topic, tp.partition),
                self._topology.names.subject(tp.topic, tp.partition),
                batch=self._settings.batch, expires=self._settings.expires,
                inactive_threshold=self._settings.inactive_threshold,
                wake=self._signal.set)
        with translated_errors(f"reading {tp}", self._where, topic=tp.topic,
                               partition=tp.partition):
            self._client.call(self._open(reader, offset + 1), action=f"reading {tp}")
        if reader.missing:
            self._missing_since[tp] = time.monotonic()
            return None
        self._missing_since.pop(tp, None)
        return reader

    async def _open(self, reader: PullReader, start_seq: int) -> None:
        js = await self._client.jetstream()
        await reader.open(js, start_seq, self._api)

    def _take_from(self, tp: TopicPartition, offset: int, limit: int) -> list[Delivery]:
        reader = self._reader(tp, offset)
        if reader is None:
            return []
        taken = reader.take(limit)
        if reader.wants_more():
            self._client.soon(reader.refill)
        return taken

    def _read(self, partition: TopicPartition, offset: int, limit: int) -> list[Message]:
        topic, number = partition.topic, partition.partition
        return [to_message(topic, number, seq - 1, data, headers, stored)
                for seq, data, headers, stored, _ in self._take_from(partition, offset,
                                                                      limit)]

    def _read_columns(self, partition: TopicPartition, offset: int, limit: int) -> Any:
        """The partition's buffered messages as a consumed Arrow batch, column by column
        from the client's messages (no ``Message`` per record).
        """
        taken = self._take_from(partition, offset, limit)
        if not taken:
            return None
        from omconnect.columnar.columns import consumed_batch

        seqs, datas, headers, stored, _ = zip(*taken, strict=True)
        keys, values, user_headers, stamps = zip(*map(decode_fields, datas, headers, stored),
                                                 strict=True)
        count = len(seqs)
        return consumed_batch([partition.topic] * count, [partition.partition] * count,
                              [seq - 1 for seq in seqs], stamps, keys, values, user_headers)

    def _range(self, partition: TopicPartition) -> tuple[int, int] | None:
        async def stream_range() -> tuple[int, int] | None:
            js = await self._client.jetstream()
            return await self._topology.stream_range(js, partition.topic,
                                                     partition.partition)

        with translated_errors(f"reading the offsets of {partition}", self._where,
                               topic=partition.topic, partition=partition.partition):
            return self._client.call(stream_range(), action=f"reading the offsets of "
                                                            f"{partition}")

    def _store_commit(self, group: str, offsets: Mapping[TopicPartition, int]) -> None:
        async def commit() -> None:
            js = await self._client.jetstream()
            bucket = await self._topology.bucket(js, self._topology.names.positions_bucket)
            names = self._topology.names
            await asyncio.gather(*(
                bucket.put(names.position_key(group, tp.topic, tp.partition),
                           str(offset).encode())
                for tp, offset in offsets.items()))

        with translated_errors(f"committing group {group!r}", self._where):
            self._client.call(commit(), action=f"committing group {group!r}")

    def _load_committed(self, group: str, partitions: Sequence[TopicPartition]
                        ) -> dict[TopicPartition, int | None]:
        async def load() -> list[int | None]:
            js = await self._client.jetstream()
            bucket = await self._topology.bucket(js, self._topology.names.positions_bucket)
            names = self._topology.names

            async def one(tp: TopicPartition) -> int | None:
                try:
                    entry = await bucket.get(names.position_key(group, tp.topic,
                                                                tp.partition))
                except Exception as exc:
                    if type(exc).__name__ in ("KeyNotFoundError", "KeyDeletedError"):
                        return None
                    raise
                return int(entry.value) if entry.value else None

            return list(await asyncio.gather(*(one(tp) for tp in partitions)))

        with translated_errors(f"reading the committed offsets of group {group!r}",
                               self._where):
            found = self._client.call(load(), action="reading committed offsets")
        return dict(zip(partitions, found, strict=True))

    def _wait(self, timeout: float) -> None:
        self._signal.wait(min(timeout, _WAIT_SLICE))

    def _forget(self, partition: TopicPartition) -> None:
        reader = self._readers.pop(partition, None)
        self._missing_since.pop(partition, None)
        if reader is not None:
            self._client.soon(self._close_reader, reader)
        super()._forget(partition)

    def _close_reader(self, reader: PullReader) -> None:
        js = self._client.js
        if js is not None:
            asyncio.get_running_loop().create_task(reader.close(js))

    def reconnected(self) -> None:
        """The connection came back: every reader's consumer may be gone (on the loop)."""
        for reader in list(self._readers.values()):
            reader.mark_broken()
        self._signal.set()

    def _release(self) -> None:
        if self._heartbeat is not None:
            self._heartbeat.stop()
        readers = list(self._readers.values())
        self._readers.clear()

        async def close_all() -> None:
            js = self._client.js
            if js is not None:
                await asyncio.gather(*(reader.close(js) for reader in readers))

        if readers and not self._client.on_loop():
            try:
                self._client.call(close_all(), timeout=self._where.timeout_s,
                                  action="closing the consumer")
            except Exception:  # the consumers expire on the server anyway
                return


def heartbeat_for(client: NatsClient, topology: Topology, group: str, member: str,
                  interval: float, where: ErrorContext
                  ) -> Callable[[Callable[[], bool | None]], Heartbeat]:
    """Builds the heartbeat thread of a group member (given its liveness check)."""
    def opener() -> tuple[GroupStore, Callable[[], None]]:
        return NatsGroupStore(client, topology, group, where), _nothing

    def build(alive: Callable[[], bool | None]) -> Heartbeat:
        return Heartbeat(opener, member=member, interval=interval, alive=alive)

    return build


def _weakly(method: Callable[[], bool]) -> Callable[[], bool | None]:
    """``method`` without keeping its object alive: ``None`` once it was collected (a
    consumer dropped without ``close`` stops heart-beating and leaves its group after the
    session timeout).
    """
    reference = weakref.WeakMethod(method)

    def call() -> bool | None:
        bound = reference()
        return None if bound is None else bound()

    return call


def _nothing() -> None:
    """Nothing to release."""
