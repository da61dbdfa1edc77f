"""Contexts: what the runtime offers connectors and tasks to call back into it."""

from __future__ import annotations

import abc
from collections.abc import Iterable, Mapping
from concurrent.futures import Future
from typing import Any

from omconnect.records import JsonScalar, SinkRecord, TopicPartition

__all__ = [
    "ConnectorContext",
    "ErrantRecordReporter",
    "OffsetStorageReader",
    "SinkTaskContext",
    "SourceTaskContext",
    "freeze_partition",
]

SourcePartition = Mapping[str, JsonScalar]
SourceOffset = Mapping[str, JsonScalar]


class ConnectorContext(abc.ABC):
    """Given to a :class:`~omconnect.connector.Connector` by the runtime."""

    @abc.abstractmethod
    def request_task_reconfiguration(self) -> None:
        """Ask the runtime to call ``task_configs`` again and restart the tasks with the
        result (e.g. the source now has more tables). Any thread.
        """

    @abc.abstractmethod
    def raise_error(self, error: BaseException) -> None:
        """Report that the connector failed in a background thread; it goes to FAILED."""


class OffsetStorageReader(abc.ABC):
    """Reads the committed source offsets of this connector (to resume after a restart)."""

    def offset(self, partition: SourcePartition) -> dict[str, Any] | None:
        """The last committed offset for ``partition``, or ``None``."""
        return self.offsets([partition]).get(_freeze(partition))

    @abc.abstractmethod
    def offsets(
        self, partitions: Iterable[SourcePartition]
    ) -> dict[tuple[tuple[str, JsonScalar], ...], dict[str, Any]]:
        """Committed offsets for several partitions, keyed by :func:`freeze_partition`
        of each partition that has one.
        """


def freeze_partition(partition: SourcePartition) -> tuple[tuple[str, JsonScalar], ...]:
    """A hashable form of a source partition dict: its sorted (key, value) pairs."""
    return tuple(sorted(partition.items()))


_freeze = freeze_partition


class SourceTaskContext(abc.ABC):
    """Given to a :class:`~omconnect.connector.SourceTask`."""

    @property
    @abc.abstractmethod
    def offset_storage_reader(self) -> OffsetStorageReader:
        """Reads the offsets committed for this connector's source partitions."""

    @property
    @abc.abstractmethod
    def configs(self) -> Mapping[str, Any]:
        """The task's configuration."""


class ErrantRecordReporter(abc.ABC):
    """Lets a sink task hand over a record it cannot write, instead of failing.

    The record goes to the dead-letter topic (or fails the task) per the connector's
    ``errors.tolerance``; its offset is committed only once the report is done.
    """

    @abc.abstractmethod
    def report(self, record: SinkRecord, error: BaseException) -> Future[None]:
        """Report ``record`` as failed with ``error``; the future completes when stored."""


class SinkTaskContext(abc.ABC):
    """Given to a :class:`~omconnect.connector.SinkTask`."""

    @property
    @abc.abstractmethod
    def configs(self) -> Mapping[str, Any]:
        """The task's configuration."""

    @abc.abstractmethod
    def offset(self, offsets: Mapping[TopicPartition, int]) -> None:
        """Reset the consume position of these partitions (e.g. to what the sink itself
        stored), applied before the next ``put``.
        """

    @abc.abstractmethod
    def assignment(self) -> frozenset[TopicPartition]:
        """The partitions this task currently reads."""

    @abc.abstractmethod
    def pause(self, *partitions: TopicPartition) -> None:
        """Stop receiving records from ``partitions`` (back-pressure); nothing is lost."""

    @abc.abstractmethod
    def resume(self, *partitions: TopicPartition) -> None:
        """Receive records from ``partitions`` again."""

    @abc.abstractmethod
    def request_commit(self) -> None:
        """Ask for a flush and commit as soon as possible."""

    @property
    def errant_record_reporter(self) -> ErrantRecordReporter | None:
        """The reporter for records that cannot be written, or ``None`` when the runtime
        offers none.
        """
        return None
