"""The worker: the open transport and what tasks share, and the factory of task runners."""

from __future__ import annotations

import logging

from omconnect.connector.task import SinkTask, SourceTask, Task
from omconnect.errors import ConnectError
from omconnect.runtime.active_topics import ActiveTopics
from omconnect.runtime.connector_runner import ConnectorRunner
from omconnect.runtime.sink_task_runner import SinkTaskRunner
from omconnect.runtime.source_offsets import SourceOffsetStore
from omconnect.runtime.source_task_runner import SourceTaskRunner
from omconnect.runtime.task_runner import TaskId, TaskListener, TaskRunner, TaskSetup
from omconnect.runtime.topic_creator import TopicCreator
from omconnect.runtime.worker_config import WorkerConfig
from omconnect.transport.spi import KeyValueStore, Transport

__all__ = ["Worker"]

_log = logging.getLogger(__name__)


class Worker:
    """Holds the transport and builds task runners on it.

    Args:
        config: The worker's config.
        transport: The open transport (the worker closes it in :meth:`close`).
        active_topics: Where tasks record their active topics (``None``: nowhere).

    """

    def __init__(self, config: WorkerConfig, transport: Transport, *,
                 active_topics: ActiveTopics | None = None) -> None:
        self.config = config
        self.transport = transport
        self.active_topics = active_topics
        self.topics = TopicCreator(
            transport.admin, enabled=config["topic.creation.enable"],
            default_partitions=config["topic.creation.default.partitions"])
        self._offsets_kv: KeyValueStore | None = None

    @property
    def offsets_kv(self) -> KeyValueStore:
        """The store for ``offset.storage.namespace``."""
        if self._offsets_kv is None:
            self._offsets_kv = self.transport.kv_store(self.config["offset.storage.namespace"])
        return self._offsets_kv

    def offset_store(self, connector: str) -> SourceOffsetStore:
        """The source offsets of ``connector``."""
        return SourceOffsetStore(self.offsets_kv, connector)

    def task_runner(
        self,
        connector: ConnectorRunner,
        number: int,
        task_config: dict[str, object],
        listener: TaskListener,
        *,
        paused: bool = False,
    ) -> TaskRunner:
        """A runner (not started) for task ``number`` of ``connector``.

        Raises:
            ConnectError: The connector's task class is not a SourceTask/SinkTask, or
                cannot be instantiated.

        """
        task_class = connector.task_class()
        try:
            task: Task = task_class()
        except TypeError as exc:
            raise ConnectError(f"cannot instantiate task class {task_class.__qualname__}: "
                               f"{exc}", connector=connector.name, task=number) from exc
        settings = connector.settings
        setup = TaskSetup(
            id=TaskId(connector.name, number), task_config=task_config, settings=settings,
            worker=self.config, transport=self.transport, topics=self.topics,
            offsets=self.offset_store(connector.name) if isinstance(task, SourceTask)
            else None, listener=listener,
            active_topics=None if self.active_topics is None
            else self.active_topics.for_task(connector.name, number))
        if isinstance(task, SourceTask):
            return SourceTaskRunner(setup, task, paused=paused)
        if isinstance(task, SinkTask):
            return SinkTaskRunner(setup, task, paused=paused)
        raise ConnectError(f"task class {task_class.__qualname__} is neither a SourceTask nor "
                           "a SinkTask", connector=connector.name, task=number)

    def close(self) -> None:
        """Close the shared clients and the transport."""
        self.topics.close()
        if self._offsets_kv is not None:
            self._offsets_kv.close()
            self._offsets_kv = None
        self.transport.close()
