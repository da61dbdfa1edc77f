"""Reading a transport that cannot replay (RabbitMQ classic queues): at-least-once.

Spark's micro-batch model needs offsets it can hand back to the source after a crash to
get the same records again. A non-replayable transport has none, so the driver reads in
a consumer group instead:

* ``latestOffset`` polls the group (waiting up to ``groupPollTimeoutMs`` for the first
  record; at most ``maxRecordsPerTrigger`` records, or the read limit Spark gives,
  default 10 x ``fetchMaxRecords``) into a buffer on the driver,
  as the next chunk, and returns ``{"omconnect.batch": n}``: a counter, not a position in
  the transport.
* with ``Trigger.AvailableNow``, "available now" is what the group delivers: the query
  ends after a poll of ``groupPollTimeoutMs`` brings nothing, and the reader then leaves
  the group (PySpark ends the source's process without calling ``stop``, so a query
  stopped any other way leaves the group only when its connection drops or its session
  times out);
* ``partitions`` ships the chunk's messages to the executors inside the input partitions
  (split every ``fetchMaxRecords``); nothing is re-read from the transport there. With
  pyarrow installed (Spark's Arrow support needs it) the driver polls Arrow batches
  (``Consumer.poll_batch``) and ships them as they are, no Python object per message.
* ``commit(end)``, and the next ``latestOffset(start)`` (Spark asks for it only after the
  previous batch's output and commit log are written), commit to the group every chunk up
  to that offset: only then does the transport consider those messages consumed
  (RabbitMQ acknowledges them). Spark's asynchronous progress tracking, which overlaps
  batches, is not supported in this mode.

The window, stated exactly: messages are committed after Spark committed the batch's
output. If the driver dies after a batch's output was committed but before the group
commit, the transport delivers those messages again and they are written again
(duplicates). If it dies earlier, Spark re-runs the logged batch after the restart; the
buffer is gone, so that batch is filled with what the group delivers now (messages it
had delivered but not seen committed come again, possibly in another batch). No message
is lost: nothing is committed before its batch's output is.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from omconnect.connector.batch_tasks import columnar_available
from omconnect.errors import ConfigError
from omconnect.records import TopicPartition
from omconnect.transport.spi import Consumer, Transport
from omconnect_spark._pyspark import ReadMaxRows
from omconnect_spark.options import ReadOptions
from omconnect_spark.reading import MessagesPartition, PolledPartition
from omconnect_spark.retry import retrying

__all__ = ["BATCH_KEY", "GroupReader"]

_log = logging.getLogger(__name__)

BATCH_KEY = "omconnect.batch"
"""The one key of a group-mode offset: the number of the last chunk."""

_MORE_TIMEOUT_S = 0.2
"""Once a chunk has its first records, how long a poll waits for more."""


class GroupReader:
    """The driver side of a group-mode stream read (one per query, on Spark's driver).

    Args:
        options: The read options.

    """

    def __init__(self, options: ReadOptions) -> None:
        self._options = options
        self._transport: Transport | None = None
        self._consumer: Consumer | None = None
        self._chunks: dict[int, list[Any]] = {}  # Arrow batches, or messages
        self._drained = False
        self._columnar = columnar_available()

    def open(self, transport: Transport) -> None:
        """Join the group on ``transport`` (kept until :meth:`close`).

        Raises:
            ConfigError: ``startingOffsets`` gives offsets per partition, which a group
                cannot start from.

        """
        options = self._options
        if options.selection.kind != "subscribe":
            raise ConfigError(
                f"transport {options.transport.name!r} cannot replay, so a query reads it in "
                f"a consumer group, which subscribes to named topics: "
                f"{options.selection.option} needs a replayable transport; name the topics "
                "in subscribe", key=options.selection.option)
        if options.starting is not None and options.starting.kind in ("specific", "timestamp"):
            raise ConfigError(
                f"transport {options.transport.name!r} cannot replay, so a query reads it in "
                f"consumer group {options.group_id!r}, which starts where the group left off "
                "(or at earliest/latest for a new group); offsets or timestamps per "
                "partition need a replayable transport: use startingOffsets earliest or "
                "latest", key=options.starting.option or "startingOffsets")
        _log.warning(
            "transport %r cannot replay: reading %s in group %r at-least-once (messages are "
            "committed after Spark commits each batch; a driver crash between the two "
            "delivers them again). Use a replayable transport for exactly-once reads.",
            options.transport.name, list(options.topics), options.group_id)
        start = "latest" if options.starting is None or options.starting.kind == "latest" \
            else "earliest"
        self._transport = transport

        def join() -> Consumer:
            consumer = transport.consumer(options.group_id, start=start)  # type: ignore[arg-type]
            try:
                consumer.subscribe(list(options.topics))
            except BaseException:
                consumer.close()
                raise
            return consumer

        self._consumer = retrying(join, what=f"joining group {options.group_id!r}",
                                  timeout_ms=options.retry_timeout_ms)

    def initial_offset(self) -> dict[str, Any]:
        """The first chunk number."""
        return {BATCH_KEY: 0}

    def latest_offset(self, start: Mapping[str, Any], limit: Any,
                      available_now: bool) -> dict[str, Any]:
        """Commit the chunks up to ``start``, then poll the next chunk; ``start`` again
        when nothing came.

        Spark's micro-batch loop runs one batch at a time and writes a batch's commit log
        before it asks for the next end offset, so every chunk up to ``start`` is in the
        sink's committed output here. Committing them now (Spark itself calls
        ``commit`` only when it constructs a further batch) keeps a query that stops after
        its last batch (``Trigger.AvailableNow``) from leaving that batch uncommitted.
        """
        number = _chunk_number(start)
        self.commit(start)
        if available_now and self._drained:
            return {BATCH_KEY: number}
        if isinstance(limit, ReadMaxRows):
            wanted = int(limit.max_rows)
        else:
            wanted = self._options.max_records_per_trigger or 10 * self._options.fetch_max_records
        messages = self._poll(wanted)
        if not messages:
            self._drained = True
            if available_now:
                # The run ends here and every chunk is committed. Leave the group now:
                # PySpark ends the source's process without calling stop() (seen on 4.3),
                # and a member that never leaves keeps its partitions until it times out.
                self.close()
            return {BATCH_KEY: number}
        self._chunks[number + 1] = messages
        return {BATCH_KEY: number + 1}

    def partitions(self, start: Mapping[str, Any], end: Mapping[str, Any]) -> list[Any]:
        """The messages of the chunks after ``start`` up to ``end``, in input partitions."""
        first, last = _chunk_number(start), _chunk_number(end)
        polled: list[Any] = []
        for number in range(first + 1, last + 1):
            chunk = self._chunks.get(number)
            if chunk is None:  # logged before a restart: the buffer died with the driver
                _log.warning("batch chunk %d was logged by a previous run; filling it with "
                             "what the group delivers now (at-least-once)", number)
                chunk = self._chunks[number] = self._poll(
                    self._options.max_records_per_trigger
                    or 10 * self._options.fetch_max_records)
            polled += chunk
        size = self._options.fetch_max_records
        if not self._columnar:
            return [MessagesPartition(polled[i:i + size]) for i in range(0, len(polled), size)]
        if not polled:
            return []
        import pyarrow as pa

        table = pa.Table.from_batches(polled).combine_chunks()
        return [PolledPartition(batch) for batch in table.to_batches(max_chunksize=size)]

    def commit(self, end: Mapping[str, Any]) -> None:
        """Commit to the group every chunk up to ``end``; forget them."""
        last = _chunk_number(end)
        done = [self._chunks.pop(number) for number in sorted(self._chunks) if number <= last]
        positions = _next_positions([item for chunk in done for item in chunk],
                                    self._columnar)
        consumer = self._consumer
        if positions and consumer is not None:
            retrying(lambda: consumer.commit(positions), what="committing to the group",
                     timeout_ms=self._options.retry_timeout_ms)

    def close(self) -> None:
        """Leave the group (uncommitted messages go back to the transport)."""
        consumer, self._consumer = self._consumer, None
        if consumer is not None:
            consumer.close()

    def _poll(self, wanted: int) -> list[Any]:
        """Up to ``wanted`` messages: Arrow batches (columnar) or ``Message`` objects."""
        consumer = self._consumer
        assert consumer is not None
        poll = consumer.poll_batch if self._columnar else consumer.poll
        polled: list[Any] = []
        count = 0
        while count < wanted:
            timeout = _MORE_TIMEOUT_S if count else self._options.group_poll_timeout_ms / 1000
            size = min(self._options.fetch_max_records, wanted - count)
            got = retrying(lambda: poll(size, timeout),  # noqa: B023 - called now
                           what="polling the group", timeout_ms=self._options.retry_timeout_ms)
            if not len(got):
                break
            count += len(got)
            if self._columnar:
                polled.append(got)
            else:
                polled += got
        return polled


def _next_positions(polled: list[Any], columnar: bool) -> dict[TopicPartition, int]:
    """Per partition, the offset after the newest of ``polled`` (Arrow batches when
    ``columnar``, else messages): what a commit of them gives the group.
    """
    if not polled:
        return {}
    if not columnar:
        positions: dict[TopicPartition, int] = {}
        for message in polled:
            tp = TopicPartition(message.topic, message.partition)
            positions[tp] = max(positions.get(tp, 0), message.offset + 1)
        return positions
    import pyarrow as pa

    newest = (pa.Table.from_batches(polled).select(["topic", "partition", "offset"])
              .group_by(["topic", "partition"]).aggregate([("offset", "max")]))
    return {TopicPartition(topic, partition): offset + 1 for topic, partition, offset in zip(
        newest.column("topic").to_pylist(), newest.column("partition").to_pylist(),
        newest.column("offset_max").to_pylist(), strict=True)}


def _chunk_number(offset: Mapping[str, Any]) -> int:
    try:
        return int(offset[BATCH_KEY])
    except (KeyError, TypeError, ValueError):
        raise ValueError(f"not a group-mode offset of the omconnect source: {dict(offset)!r}; "
                         "was the checkpoint written while the transport could replay? Use "
                         "a new checkpointLocation") from None
