"""Connectors: split a job into task configurations, and manage their lifecycle."""

from __future__ import annotations

import abc
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from omconnect.config.definition import ConfigDef

if TYPE_CHECKING:
    from omconnect.connector.context import ConnectorContext
    from omconnect.connector.task import SinkTask, SourceTask, Task
    from omconnect.records import TopicPartition

__all__ = ["Connector", "SinkConnector", "SourceConnector"]


class Connector(abc.ABC):
    """A connector: it knows its settings and splits the job into tasks.

    The runtime calls, in order and from one thread: :meth:`initialize`, :meth:`validate`
    (also before creation, e.g. by ``omconnect validate``), :meth:`start`,
    :meth:`task_configs`, later :meth:`on_pause` / :meth:`on_resume`, and finally
    :meth:`stop` (then :meth:`on_destroyed` if the connector is deleted). When it fails,
    :meth:`on_failed` is called with the error. While it is stopped, a separate instance
    that is neither initialized nor started gets ``alter_offsets`` (on
    :class:`SourceConnector` and :class:`SinkConnector`) before a user's offset change.
    A subclass missing an abstract method cannot be instantiated (Python's ``TypeError``
    names the method).
    """

    _context: ConnectorContext | None = None  # also set for subclasses that skip __init__

    def __init__(self) -> None:
        self._context = None

    def initialize(self, context: ConnectorContext) -> None:
        """Receive the runtime's context; called once, before :meth:`start`."""
        self._context = context

    @property
    def context(self) -> ConnectorContext:
        """The runtime's context (available from :meth:`initialize` on)."""
        if self._context is None:
            from omconnect.errors import IllegalStateError

            raise IllegalStateError(
                "the connector has no context before initialize(); the runtime calls "
                "initialize() before start()"
            )
        return self._context

    @abc.abstractmethod
    def version(self) -> str:
        """The connector's version string."""

    @abc.abstractmethod
    def config_def(self) -> ConfigDef:
        """The settings this connector takes."""

    def validate(self, config: Mapping[str, Any]) -> dict[str, list[str]]:
        """Per-key error messages for ``config`` (``[]`` for a valid key).

        The default checks :meth:`config_def`; override to add cross-key checks (call
        ``super().validate`` first).
        """
        return self.config_def().validate(config)

    @abc.abstractmethod
    def start(self, config: Mapping[str, Any]) -> None:
        """Start with a validated ``config`` (declared keys parsed to their types)."""

    @abc.abstractmethod
    def task_class(self) -> type[Task]:
        """The task class the runtime instantiates for each task config."""

    @abc.abstractmethod
    def task_configs(self, max_tasks: int) -> list[dict[str, Any]]:
        """At most ``max_tasks`` task configurations that together cover the whole job."""

    @abc.abstractmethod
    def stop(self) -> None:
        """Stop; release what :meth:`start` acquired."""

    # Lifecycle hooks (OpenMessaging Connect's); the defaults do nothing.
    def on_pause(self) -> None:
        """The connector was paused (its tasks stop polling); a place to release resources."""

    def on_resume(self) -> None:
        """The connector was resumed after :meth:`on_pause`."""

    def on_failed(self, error: BaseException) -> None:
        """The connector or one of its tasks failed with ``error``."""

    def on_destroyed(self) -> None:
        """The connector was deleted; it will not be started again."""


class SourceConnector(Connector):
    """A connector that reads from an external system into the transport."""

    @abc.abstractmethod
    def task_class(self) -> type[SourceTask]:
        """The :class:`~omconnect.connector.SourceTask` subclass to run."""

    def exactly_once_support(self) -> bool:
        """Whether the source can be replayed from its offsets without duplicates.

        Default ``False``: the runtime refuses an exactly-once pipeline with it.
        """
        return False

    def alter_offsets(
        self,
        config: Mapping[str, Any],
        offsets: Sequence[tuple[Mapping[str, Any], Mapping[str, Any] | None]],
    ) -> bool:
        """Check, or apply, offsets a user is about to write (Kafka Connect's
        ``alterOffsets``).

        The runtime calls it on a fresh instance (neither initialized nor started) of a
        stopped connector, before it writes the offsets of ``PATCH
        /connectors/{name}/offsets`` or forgets them (``DELETE``, every offset ``None``).

        Args:
            config: The connector's configuration as written, references resolved, not
                parsed (parse what you need with :meth:`config_def`).
            offsets: ``(source partition, source offset)`` pairs in the order given (the
                ``i``-th is the request's ``offsets[i]``); ``None`` resets that
                partition. Accept ``None`` for any partition, so that stray entries can
                always be cleaned up.

        Returns:
            ``True`` when the connector handled them (it validated them or keeps no
            offsets of its own elsewhere); ``False`` (the default) when it does not know:
            the runtime then tells the user that offsets the connector keeps outside the
            runtime may need changing too.

        Raises:
            Exception: The offsets are not valid for this connector: nothing is written,
                and the user gets the message (an HTTP 400 naming it). Name the entry and
                the field, e.g. ``offsets[0].offset.position must be a non-negative
                integer``.

        """
        return False


class SinkConnector(Connector):
    """A connector that writes from the transport into an external system."""

    @abc.abstractmethod
    def task_class(self) -> type[SinkTask]:
        """The :class:`~omconnect.connector.SinkTask` subclass to run."""

    def exactly_once_support(self) -> bool:
        """Whether the sink writes idempotently or transactionally with its offsets.

        Default ``False``: the runtime refuses an exactly-once pipeline with it.
        """
        return False

    def alter_offsets(self, config: Mapping[str, Any],
                      offsets: Mapping[TopicPartition, int | None]) -> bool:
        """Check, or apply, consumer-group positions a user is about to write (Kafka
        Connect's ``alterOffsets``).

        Called as :meth:`SourceConnector.alter_offsets` is, after the runtime checked the
        entries' shape (``kafka_topic``, a non-negative ``kafka_partition`` and
        ``kafka_offset``).

        Args:
            config: The connector's configuration as written, references resolved.
            offsets: The position (next offset to read) per topic partition; ``None``
                goes back to the earliest message kept.

        Returns:
            ``True`` when the connector handled them (e.g. it keeps its positions only in
            the group, or it updated the copy it keeps in the external system);
            ``False`` (the default) when it does not know.

        Raises:
            Exception: The positions are not valid for this connector: nothing is
                written, and the user gets the message (an HTTP 400).

        """
        return False
