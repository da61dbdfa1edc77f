"""The storage primitives of the ``redis`` transport: :class:`RedisLogStore`.

The kit's :class:`~omconnect.transport.kit.log_transport.LogTransport` derives the
producer, the consumer, the key/value store and the admin from these; each client of the
transport opens a store of its own over the transport's connection pool. Where each piece
lives is :class:`~omconnect_redis.client.Keys`:

* **topics**: a hash, topic -> partition count; creating a topic is ``HSETNX`` (the
  first creator's layout wins, every later one adopts it: TRANSPORT-19);
* **records**: a stream per partition, each entry's id ``<offset>-0``. One Lua script
  (:data:`~omconnect_redis.scripts.APPEND`) stores a whole append: it checks every
  partition exists, takes each run's offsets from the topic's counter (``HINCRBY``) and
  adds its entries with those ids, and Redis runs no other command meanwhile, so offsets
  are dense, in order, and never given twice, whatever number of writers (TRANSPORT-74).
  A read is ``XRANGE <stream> <offset>-0 + COUNT <n>``, so offset ``n`` can be read
  again as long as the stream keeps it (``redis.max.length`` trims the oldest);
* **committed positions**: a hash per topic, ``<group>:<partition>`` -> the next offset
  to read; written only by ``commit``, with what the consumer hands it;
* **groups**: :class:`~omconnect_redis.groups.RedisGroupStore`;
* **key/value stores**: a hash per namespace, written in one ``MULTI``/``EXEC``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from itertools import groupby
from operator import itemgetter
from typing import Any

from omconnect.errors import RetriableTransportError, TransportError
from omconnect.records import TopicPartition
from omconnect.transport.kit.grouping import GroupStore
from omconnect.transport.kit.log_store import LogRun, LogStore
from omconnect.transport.messages import Message
from omconnect_redis.client import Keys, committed_field
from omconnect_redis.codec import (
    column_args,
    decode_entries,
    entry_columns,
    entry_offset,
    message_args,
)
from omconnect_redis.errors import ErrorContext, translated_errors
from omconnect_redis.groups import RedisGroupStore
from omconnect_redis.scripts import APPEND, FOREIGN_ENTRY, NO_PARTITION

__all__ = ["RedisLogStore"]

_GLOB_SPECIALS = frozenset("*?[]\\")


class RedisLogStore(LogStore):
    """A log store on one Redis server, through ``client`` (a ``redis.Redis`` on the
    transport's pool, see :func:`~omconnect_redis.client.redis_client`).

    Args:
        client: The redis-py client.
        keys: Where the data lives.
        where: For error messages.
        max_length: Entries a partition's stream keeps (approximately, ``MAXLEN ~``);
            0 keeps everything.

    """

    def __init__(self, client: Any, keys: Keys, where: ErrorContext, *,
                 max_length: int = 0) -> None:
        self.client = client
        self.keys = keys
        self.where = where
        self._max_length = max_length
        self._append = client.register_script(APPEND)

    # -- topics ------------------------------------------------------------------------

    def create_topic(self, name: str, partitions: int) -> int:
        """Create ``name`` unless it exists (``HSETNX``); its partition count."""
        with translated_errors(f"creating topic {name!r}", self.where, topic=name):
            pipe = self.client.pipeline(transaction=True)
            pipe.hsetnx(self.keys.topics, name, partitions)
            pipe.hget(self.keys.topics, name)
            _, count = pipe.execute()
        return int(count)

    def topics(self) -> dict[str, int]:
        """Every topic's partition count."""
        with translated_errors("listing topics", self.where):
            found = self.client.hgetall(self.keys.topics)
        return {name.decode(): int(count) for name, count in found.items()}

    def delete_topics(self, names: Sequence[str]) -> None:
        """Delete topics with their streams, offset counters and committed positions."""
        keys = self.keys
        for name in names:
            with translated_errors(f"deleting topic {name!r}", self.where, topic=name):
                count = self.client.hget(keys.topics, name)
                if count is None:
                    continue
                pipe = self.client.pipeline(transaction=True)
                pipe.hdel(keys.topics, name)
                pipe.delete(*(keys.stream(name, p) for p in range(int(count))),
                            keys.next_offsets(name), keys.committed(name))
                pipe.execute()

    # -- the log -------------------------------------------------------------------------

    def append(self, messages: Sequence[tuple[TopicPartition, Message]]) -> list[int]:
        """Store ``messages`` (each with its partition and timestamp set) in one script,
        consecutive messages of a partition as one run.

        Raises:
            RetriableTransportError: A partition does not exist (the topic was deleted or
                recreated meanwhile): nothing was stored.
            TransportError: The server failed (see :mod:`~omconnect_redis.errors`).

        """
        runs: list[LogRun] = []
        for tp, partition_messages in groupby(messages, key=itemgetter(0)):
            placed = [m for _, m in partition_messages]
            runs.append(LogRun(tp, messages=placed,
                               timestamps=[m.timestamp or 0 for m in placed]))
        firsts = self._store_runs(runs)
        return [first + index for run, first in zip(runs, firsts, strict=True)
                for index in range(len(run))]

    def append_runs(self, runs: Sequence[LogRun]) -> list[int]:
        """Store every run in one script call, messages and Arrow columns alike (no
        object per record for columns); each run's first offset (-1 for an empty one).

        Raises:
            RetriableTransportError: A partition does not exist (nothing was stored).
            TransportError: A stream holds an entry another client added, or the server
                failed.

        """
        return self._store_runs(runs)

    def _store_runs(self, runs: Sequence[LogRun]) -> list[int]:
        stored = [run for run in runs if len(run)]
        if not stored:
            return [-1] * len(runs)
        args: list[Any] = [self.keys.prefix, self._max_length, len(stored)]
        for run in stored:
            args += (run.partition.topic, run.partition.partition, len(run))
        for run in stored:
            if run.columns is not None:
                column_args(run.columns, args)
            else:
                message_args(run.messages, run.timestamps, args)
        topics = sorted({run.partition.topic for run in stored})
        with translated_errors(f"storing records of {', '.join(map(repr, topics))}",
                               self.where):
            try:
                firsts = self._append(keys=[self.keys.topics], args=args)
            except Exception as exc:
                text = str(exc)
                if text.startswith(NO_PARTITION):
                    raise RetriableTransportError(
                        f"redis: {text.removeprefix(NO_PARTITION).strip()} (deleted or "
                        "created again meanwhile); nothing was stored") from exc
                if text.startswith(FOREIGN_ENTRY):
                    raise TransportError(
                        f"redis: {text.removeprefix(FOREIGN_ENTRY).strip()}: its entry ids "
                        "are no longer offsets; write to the transport's streams only "
                        "through it (nothing was stored)") from exc
                raise
        found = iter(int(first) for first in firsts)
        return [next(found) if len(run) else -1 for run in runs]

    def _range_reply(self, partition: TopicPartition, offset: int, limit: int) -> Any:
        stream = self.keys.stream(partition.topic, partition.partition)
        with translated_errors(f"reading {partition}", self.where, topic=partition.topic,
                               partition=partition.partition, offset=offset):
            return self.client.execute_command("XRANGE", stream, f"{offset}-0", "+",
                                               "COUNT", limit)

    def read(self, partition: TopicPartition, offset: int, limit: int) -> list[Message]:
        """Up to ``limit`` records of ``partition`` from ``offset`` on (``XRANGE``)."""
        entries = self._range_reply(partition, offset, limit)
        return decode_entries(partition.topic, partition.partition, entries) if entries \
            else []

    def read_columns(self, partition: TopicPartition, offset: int, limit: int) -> Any:
        """:meth:`read` as a consumed Arrow batch, built column by column from the
        ``XRANGE`` reply (``None`` when there is nothing).
        """
        entries = self._range_reply(partition, offset, limit)
        return entry_columns(partition.topic, partition.partition, entries) if entries \
            else None

    def offset_range(self, partition: TopicPartition) -> tuple[int, int] | None:
        """(first offset kept, next offset) of ``partition``; ``None`` when the topic or
        the partition does not exist.
        """
        topic, number = partition.topic, partition.partition
        with translated_errors(f"reading the offsets of {partition}", self.where,
                               topic=topic, partition=number):
            pipe = self.client.pipeline(transaction=True)
            pipe.hget(self.keys.topics, topic)
            pipe.hget(self.keys.next_offsets(topic), number)
            pipe.execute_command("XRANGE", self.keys.stream(topic, number), "-", "+",
                                 "COUNT", 1)
            count, last, first_entry = pipe.execute()
        if count is None or not 0 <= number < int(count):
            return None
        end = int(last or 0) + 1
        first = entry_offset(first_entry[0][0]) if first_entry else end
        return first, end

    # -- committed positions -------------------------------------------------------------

    def commit(self, group: str, offsets: Mapping[TopicPartition, int]) -> None:
        """Store ``offsets`` as ``group``'s positions, all in one ``MULTI``/``EXEC``."""
        by_topic: dict[str, dict[str, int]] = {}
        for tp, offset in offsets.items():
            by_topic.setdefault(tp.topic, {})[committed_field(group, tp.partition)] = offset
        with translated_errors(f"committing offsets of group {group!r}", self.where,
                               group=group):
            pipe = self.client.pipeline(transaction=True)
            for topic, fields in by_topic.items():
                pipe.hset(self.keys.committed(topic), mapping=fields)
            pipe.execute()

    def committed(self, group: str, partitions: Sequence[TopicPartition]
                  ) -> dict[TopicPartition, int | None]:
        """``group``'s committed position of each of ``partitions``."""
        if not partitions:
            return {}
        with translated_errors(f"reading the committed offsets of group {group!r}",
                               self.where, group=group):
            pipe = self.client.pipeline(transaction=False)
            for tp in partitions:
                pipe.hget(self.keys.committed(tp.topic), committed_field(group, tp.partition))
            found = pipe.execute()
        return {tp: None if value is None else int(value)
                for tp, value in zip(partitions, found, strict=True)}

    # -- consumer groups ---------------------------------------------------------------

    def group_store(self, group: str) -> GroupStore:
        """``group``'s membership, in four hashes (see
        :class:`~omconnect_redis.groups.RedisGroupStore`).
        """
        return RedisGroupStore(self.client, self.keys, group, self.where)

    # -- the key/value store -------------------------------------------------------------

    def kv_get(self, namespace: str, key: str) -> bytes | None:
        """``HGET`` of the namespace's hash."""
        with translated_errors(f"reading key {key!r} of store {namespace!r}", self.where):
            value: bytes | None = self.client.hget(self.keys.kv(namespace), key)
        return value

    def kv_put(self, namespace: str, items: Mapping[str, bytes | None]) -> None:
        """Every item at once (``HSET`` and ``HDEL`` in one ``MULTI``/``EXEC``)."""
        name = self.keys.kv(namespace)
        stored = {k: v for k, v in items.items() if v is not None}
        deleted = [k for k, v in items.items() if v is None]
        with translated_errors(f"writing {len(items)} key(s) of store {namespace!r}",
                               self.where):
            pipe = self.client.pipeline(transaction=True)
            if stored:
                pipe.hset(name, mapping=stored)
            if deleted:
                pipe.hdel(name, *deleted)
            pipe.execute()

    def kv_scan(self, namespace: str, prefix: str) -> Iterator[tuple[str, bytes]]:
        """Every (key, value) whose key starts with ``prefix``, in key order (``HSCAN``
        with the prefix as its pattern).
        """
        pattern = "".join("\\" + c if c in _GLOB_SPECIALS else c for c in prefix) + "*"
        found: dict[str, bytes] = {}
        with translated_errors(f"scanning store {namespace!r}", self.where):
            for key, value in self.client.hscan_iter(self.keys.kv(namespace), match=pattern,
                                                     count=1000):
                found[key.decode()] = value
        return iter(sorted(found.items()))

    def close(self) -> None:
        """Nothing to release: connections go back to the transport's pool after each
        command, and the pool is closed with the transport.
        """
