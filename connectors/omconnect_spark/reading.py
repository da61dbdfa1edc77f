"""What a Spark task runs to read: exactly one offset range of one partition.

A task opens its own transport and a consumer outside any group, assigns the partition,
seeks to the range's start and polls until it has seen the offset before the range's end;
messages at or beyond the end (that arrived since the batch was planned) are left for the
next batch. Nothing is committed: the range came from Spark's checkpoint, which is what
makes a re-run of the task, or of the whole batch after a crash, read the same records.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from typing import Any

from omconnect.connector.batch_tasks import columnar_available
from omconnect.errors import RetriableError
from omconnect.records import TopicPartition
from omconnect.transport.messages import Message
from omconnect.transport.spi import Consumer, Transport
from omconnect_spark._pyspark import InputPartition
from omconnect_spark.columns import RecordBatchBuilder, arrow_schema_of
from omconnect_spark.offsets import OffsetRange, report_data_loss
from omconnect_spark.options import ReadOptions
from omconnect_spark.retry import retrying

__all__ = ["MessagesPartition", "OffsetRangePartition", "PolledPartition", "read_partition",
           "read_range"]

_log = logging.getLogger(__name__)

_POLL_SLICE_S = 1.0


class OffsetRangePartition(InputPartition):
    """A Spark input partition: the records of one :class:`OffsetRange`."""

    def __init__(self, offset_range: OffsetRange) -> None:
        super().__init__(offset_range)
        self.range = offset_range


class MessagesPartition(InputPartition):
    """A Spark input partition carrying its messages (non-replayable transports: the
    driver consumed them in the group; see :mod:`omconnect_spark.group_reading`).
    """

    def __init__(self, messages: list[Message]) -> None:
        super().__init__(len(messages))
        self.messages = messages


class PolledPartition(InputPartition):
    """A Spark input partition carrying an Arrow batch a group consumer polled
    (:func:`omconnect.columnar.consumed_schema`; see :mod:`omconnect_spark.group_reading`).

    The batch travels as an Arrow IPC stream: a pickled slice of a larger batch would
    carry the whole of its parent's buffers (100,000 rows cut in ten: 150 MB pickled
    against 21 MB in IPC).
    """

    def __init__(self, batch: Any) -> None:
        import pyarrow as pa

        super().__init__(batch.num_rows)
        self.num_rows: int = batch.num_rows
        sink = pa.BufferOutputStream()
        with pa.ipc.new_stream(sink, batch.schema) as writer:
            writer.write_batch(batch)
        self.data: bytes = sink.getvalue().to_pybytes()

    @property
    def batch(self) -> Any:
        """The polled batch."""
        import pyarrow as pa

        return pa.ipc.open_stream(self.data).read_next_batch()


def read_partition(options: ReadOptions, spark_schema: Any, partition: Any) -> Iterator[Any]:
    """The Arrow record batches of one Spark input partition.

    Raises:
        DataLossError: Records of the range are gone or never arrived
            (``failOnDataLoss=true``).
        DataError: A key or value cannot be decoded as configured.

    """
    builder = RecordBatchBuilder(arrow_schema_of(spark_schema), options.key, options.value)
    if isinstance(partition, OffsetRangePartition):
        return read_range(options, builder, partition.range)
    if isinstance(partition, PolledPartition):
        return iter([builder.build_polled(partition.batch)] if partition.num_rows else [])
    if isinstance(partition, MessagesPartition):
        return iter([builder.build(partition.messages)] if partition.messages else [])
    return iter(())  # Spark's placeholder when there is nothing to read


def read_range(
    options: ReadOptions, builder: RecordBatchBuilder, offset_range: OffsetRange
) -> Iterator[Any]:
    """Read ``offset_range`` exactly: one record batch per poll, in offset order.

    The transport's clients are opened here, in the task, and closed when the iterator
    ends or is closed.
    """
    tp = offset_range.topic_partition
    transport = options.transport.open()
    try:
        consumer = retrying(lambda: _assigned(transport, tp), what=f"assigning {tp}",
                            timeout_ms=options.retry_timeout_ms)
        try:
            position = offset_range.start
            first, _ = retrying(lambda: consumer.offset_range(tp), what=f"reading {tp}'s offsets",
                                timeout_ms=options.retry_timeout_ms)
            if first > position:
                report_data_loss(
                    f"{tp}: records at offsets {position}..{min(first, offset_range.end) - 1} "
                    f"are gone (the partition now starts at offset {first})",
                    fail=options.fail_on_data_loss, topic=tp.topic, partition=tp.partition,
                    offset=position)
                position = first
            if position >= offset_range.end:
                return
            consumer.seek(tp, position)
            timeout = options.read_timeout_ms / 1000
            deadline = time.monotonic() + timeout
            columnar = columnar_available()
            while position < offset_range.end:
                wanted = min(options.fetch_max_records, offset_range.end - position)
                remaining = deadline - time.monotonic()
                try:
                    wait = max(0.0, min(_POLL_SLICE_S, remaining))
                    polled = consumer.poll_batch(wanted, wait) if columnar \
                        else consumer.poll(wanted, wait)
                except RetriableError as exc:  # the broker is away: wait within the deadline
                    if time.monotonic() >= deadline:
                        raise
                    _log.warning("polling %s failed (%s); retrying", tp, exc)
                    time.sleep(_POLL_SLICE_S)
                    continue
                if not len(polled):
                    if time.monotonic() >= deadline:
                        report_data_loss(
                            f"{tp}: records at offsets {position}..{offset_range.end - 1} "
                            f"did not arrive within readTimeoutMs={options.read_timeout_ms}",
                            fail=options.fail_on_data_loss, topic=tp.topic,
                            partition=tp.partition, offset=position)
                        return
                    continue
                deadline = time.monotonic() + timeout
                if columnar:
                    assert not isinstance(polled, list)
                    batch = _within(polled, offset_range.end)
                    position = polled.column("offset")[-1].as_py() + 1
                    if batch.num_rows:
                        yield builder.build_polled(batch)
                    continue
                messages = polled
                assert isinstance(messages, list)
                last = messages[-1].offset
                assert last is not None
                position = last + 1
                if last >= offset_range.end:
                    messages = [m for m in messages if m.offset < offset_range.end]  # type: ignore[operator]
                if messages:
                    yield builder.build(messages, topic=tp.topic, partition=tp.partition)
        finally:
            consumer.close()
    finally:
        transport.close()


def _within(polled: Any, end: int) -> Any:
    """The rows of ``polled`` before offset ``end``."""
    import pyarrow.compute as pc

    offsets = polled.column("offset")
    if offsets[-1].as_py() < end:
        return polled
    return polled.filter(pc.less(offsets, end))


def _assigned(transport: Transport, partition: TopicPartition) -> Consumer:
    """A consumer outside any group, reading ``partition``."""
    consumer = transport.consumer(None)
    try:
        consumer.assign([partition])
    except BaseException:
        consumer.close()
        raise
    return consumer
