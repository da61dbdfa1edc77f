"""Offsets of a replayable read: a position per (topic, partition), as Spark checkpoints them.

A streaming query's offset is the JSON object ``{"orders": {"0": 1200, "1": 980}}``: for
each partition, the offset of the next record to read (the same shape as Spark's Kafka
source). Spark writes the start and end of every micro-batch to its checkpoint before the
batch runs, so a restarted query reads exactly the same ranges again.

This module is pure planning (no transport): converting offsets to and from that JSON,
cutting a batch down to ``maxRecordsPerTrigger`` and splitting ranges into Spark
partitions. :class:`PartitionCatalog` asks the transport which partitions exist and where
their logs begin and end.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

import attrs

from omconnect.errors import (
    ConfigError,
    ConnectError,
    RetriableError,
    UnsupportedOperationError,
)
from omconnect.records import TopicPartition
from omconnect.transport.spi import Admin, Consumer, Transport
from omconnect_spark.offset_specs import EARLIEST, LATEST, OffsetSpec
from omconnect_spark.options import TransportSettings
from omconnect_spark.retry import retrying
from omconnect_spark.timestamps import offset_for_timestamp
from omconnect_spark.topic_selection import TopicSelection

__all__ = [
    "DataLossError",
    "OffsetRange",
    "PartitionCatalog",
    "PartitionOffsets",
    "limit_offsets",
    "offsets_from_json",
    "offsets_to_json",
    "plan_ranges",
    "report_data_loss",
]

_log = logging.getLogger(__name__)

T = TypeVar("T")

PartitionOffsets = dict[TopicPartition, int]
"""The next offset to read, per partition."""


class DataLossError(ConnectError):
    """Records a query should read are gone or never arrived (``failOnDataLoss=true``)."""


def report_data_loss(message: str, *, fail: bool, **context: Any) -> None:
    """Raise :class:`DataLossError`, or log a warning when ``fail`` is false.

    Raises:
        DataLossError: ``fail`` is true.

    """
    if fail:
        raise DataLossError(f"{message}. Set failOnDataLoss=false to skip what is missing "
                            "and go on", **context)
    _log.warning("%s; going on (failOnDataLoss=false)", message)


def offsets_to_json(offsets: Mapping[TopicPartition, int]) -> dict[str, dict[str, int]]:
    """``{topic: {"partition": offset}}``, topics and partitions in order."""
    result: dict[str, dict[str, int]] = {}
    for tp in sorted(offsets):
        result.setdefault(tp.topic, {})[str(tp.partition)] = int(offsets[tp])
    return result


def offsets_from_json(data: Mapping[str, Any]) -> PartitionOffsets:
    """The inverse of :func:`offsets_to_json`.

    Raises:
        ValueError: ``data`` is not offsets JSON of this source (for example a checkpoint
            written by another source).

    """
    offsets: PartitionOffsets = {}
    try:
        for topic, partitions in data.items():
            for number, offset in partitions.items():
                offsets[TopicPartition(topic, int(number))] = int(offset)
    except (AttributeError, TypeError, ValueError) as exc:
        raise ValueError(f"not an omconnect offsets object: {dict(data)!r} ({exc}); was the "
                         "checkpoint written by another source?") from None
    return offsets


@attrs.frozen(slots=True)
class OffsetRange:
    """The records of one partition from ``start`` up to, not including, ``end``."""

    topic: str
    partition: int
    start: int
    end: int

    @property
    def topic_partition(self) -> TopicPartition:
        """The partition."""
        return TopicPartition(self.topic, self.partition)

    @property
    def size(self) -> int:
        """How many offsets the range spans."""
        return max(0, self.end - self.start)


def plan_ranges(
    start: Mapping[TopicPartition, int],
    end: Mapping[TopicPartition, int],
    *,
    max_per_range: int | None = None,
    min_ranges: int | None = None,
) -> list[OffsetRange]:
    """The non-empty ranges from ``start`` to ``end``, each at most ``max_per_range`` long,
    and at least ``min_ranges`` of them when there are that many records (Spark's Kafka
    ``minPartitions``: each partition's range is cut into pieces in proportion to its
    share of the records).

    A partition in ``end`` but not in ``start`` is new: it is read from offset 0 (a
    reader that finds its log starting later reports data loss, as Spark's Kafka source
    does). A partition whose end lies before its start is skipped (the caller reported it).
    """
    spans = {tp: (start.get(tp, 0), end[tp]) for tp in sorted(end)
             if end[tp] > start.get(tp, 0)}
    total = sum(last - first for first, last in spans.values())
    ranges: list[OffsetRange] = []
    for tp, (first, last) in spans.items():
        size = last - first
        step = max_per_range or size
        if min_ranges and min_ranges > len(spans) and total:
            pieces = max(1, -(-size * min_ranges // total))  # ceil: together >= min_ranges
            step = min(step, max(1, -(-size // pieces)))
        for begin in range(first, last, step):
            ranges.append(OffsetRange(tp.topic, tp.partition, begin, min(begin + step, last)))
    return ranges


def limit_offsets(
    start: Mapping[TopicPartition, int], latest: Mapping[TopicPartition, int], max_records: int
) -> PartitionOffsets:
    """``latest``, cut down so the batch holds at most ``max_records`` records.

    Each partition gets a share in proportion to its backlog (as Spark's Kafka source
    shares ``maxOffsetsPerTrigger``), rounded deterministically so the shares add up to
    ``max_records`` exactly. Partitions without backlog keep their latest offset.
    """
    backlog = {tp: latest[tp] - start.get(tp, 0) for tp in latest}
    total = sum(lag for lag in backlog.values() if lag > 0)
    if total <= max_records:
        return dict(latest)
    shares = {tp: lag * max_records // total for tp, lag in backlog.items() if lag > 0}
    remainder = max_records - sum(shares.values())
    by_fraction = sorted(shares, key=lambda tp: (-(backlog[tp] * max_records % total), tp))
    for tp in by_fraction:
        if remainder <= 0:
            break
        if shares[tp] < backlog[tp]:
            shares[tp] += 1
            remainder -= 1
    return {tp: start.get(tp, 0) + shares[tp] if tp in shares else latest[tp] for tp in latest}


class PartitionCatalog:
    """Which partitions the selected topics have and where their logs begin and end,
    asked of the transport on Spark's driver.

    Clients are opened on first use (never when the reader is built: Spark pickles
    readers) and kept until :meth:`close`.

    A call failing with a retriable error (a broker restarting) is retried, with fresh
    clients, for ``retry_timeout_ms``.

    Args:
        settings: The transport to ask.
        selection: The partitions read (topics, a pattern or assigned partitions).
        retry_timeout_ms: How long a retriable failure is retried.
        read_timeout_ms: How long a record expected while looking up a timestamp may
            take to arrive.

    """

    def __init__(self, settings: TransportSettings, selection: TopicSelection,
                 retry_timeout_ms: int = 60_000, read_timeout_ms: int = 120_000) -> None:
        self._settings = settings
        self._selection = selection
        self._retry_timeout_ms = retry_timeout_ms
        self._read_timeout_ms = read_timeout_ms
        self._transport: Transport | None = None
        self._admin: Admin | None = None
        self._consumer: Consumer | None = None
        self._assigned: frozenset[TopicPartition] = frozenset()

    @property
    def transport(self) -> Transport:
        """The transport (opened on first use)."""
        if self._transport is None:
            self._transport = self._settings.open()
        return self._transport

    def partitions(self) -> list[TopicPartition]:
        """Every partition of the selection that exists now, in order.

        Raises:
            MissingTopicsError: A named topic does not exist (``missingTopics=fail``).
            ConfigError: ``subscribePattern`` on a transport that cannot list topics.

        """
        def list_topics() -> dict[str, Any]:
            if self._admin is None:
                self._admin = self.transport.admin()
            return self._admin.list_topics()

        try:
            listed = self._retrying(list_topics, "listing topics")
        except UnsupportedOperationError as exc:
            if self._selection.kind == "pattern":
                raise ConfigError(
                    f"subscribePattern needs a transport that lists topics; "
                    f"{self._settings.name} cannot ({exc}): name the topics in subscribe",
                    key="subscribePattern") from exc
            raise
        return self._selection.partitions({name: spec.partitions
                                           for name, spec in listed.items()})

    def ranges(self, partitions: Iterable[TopicPartition]) -> dict[TopicPartition, tuple[int, int]]:
        """(first offset kept, next offset) of each partition."""
        wanted = list(partitions)
        return self._retrying(lambda: {tp: self._reader().offset_range(tp) for tp in wanted},
                              "reading partition offsets")

    def _reader(self) -> Consumer:
        if self._consumer is None:
            self._consumer = self.transport.consumer(None)
            self._assigned = frozenset()
        return self._consumer

    def _retrying(self, action: Callable[[], T], what: str) -> T:
        def attempt() -> T:
            try:
                return action()
            except RetriableError:
                self._close_clients()  # the next attempt opens fresh ones
                raise

        return retrying(attempt, what=what, timeout_ms=self._retry_timeout_ms)

    def latest(self) -> PartitionOffsets:
        """The next offset of every partition."""
        return {tp: bounds[1] for tp, bounds in self.ranges(self.partitions()).items()}

    def resolve(self, spec: OffsetSpec, *, option: str) -> PartitionOffsets:
        """The offsets ``spec`` means now, for every existing partition.

        Raises:
            ConfigError: ``spec`` names a partition that does not exist (naming
                ``option``), or a starting timestamp has no record that late
                (``startingOffsetsByTimestampStrategy=error``).

        """
        existing = self.partitions()
        named = set(spec.offsets) | set(spec.timestamps)
        missing = sorted(named - set(existing))
        if missing:
            names = ", ".join(str(tp) for tp in missing)
            raise ConfigError(f"{spec.option or option} names {names}, which does not exist; "
                              f"the topics have "
                              f"{', '.join(str(tp) for tp in existing) or 'no partitions'}",
                              key=spec.option or option)
        bounds = self.ranges(existing)
        resolved: PartitionOffsets = {}
        for tp in existing:
            first, next_offset = bounds[tp]
            stamp = spec.timestamp(tp)
            if stamp is not None:
                resolved[tp] = self._offset_at_time(tp, first, next_offset, stamp, spec)
                continue
            wanted = spec.wanted(tp)
            resolved[tp] = (first if wanted == EARLIEST else next_offset if wanted == LATEST
                            else wanted)
        return resolved

    def _offset_at_time(self, tp: TopicPartition, first: int, end: int, stamp: int,
                        spec: OffsetSpec) -> int:
        def look_up() -> int | None:
            reader = self._reader()
            if self._assigned != {tp}:
                reader.assign([tp])  # one partition at a time: its records only
                self._assigned = frozenset({tp})
            return offset_for_timestamp(reader, tp, first, end, stamp,
                                        timeout=self._read_timeout_ms / 1000)

        found = self._retrying(look_up, f"looking up {tp} at time {stamp}")
        if found is not None:
            return found
        if spec.if_none == "error":
            raise ConfigError(
                f"{spec.option}: {tp} has no record at or after timestamp {stamp}; set "
                "startingOffsetsByTimestampStrategy=latest to start such partitions at "
                "their end", key=spec.option)
        return end

    def close(self) -> None:
        """Close the clients and the transport. Idempotent; the catalog reopens them if
        used again.
        """
        self._close_clients()
        transport, self._transport = self._transport, None
        _close_quietly(transport)

    def _close_clients(self) -> None:
        consumer, admin = self._consumer, self._admin
        self._consumer = self._admin = None
        self._assigned = frozenset()
        _close_quietly(consumer)
        _close_quietly(admin)


def _close_quietly(closable: Any) -> None:
    if closable is None:
        return
    try:
        closable.close()
    except Exception:  # closing is best effort
        _log.debug("closing %r failed", closable, exc_info=True)
