"""The worker: the open transport and what tasks share, and the factory of task runners."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator, Mapping
from typing import Protocol

from omconnect.connector.task import SinkTask, SourceTask, Task
from omconnect.errors import ConnectError, TransportError
from omconnect.runtime.active_topics import ActiveTopics
from omconnect.runtime.connector_config import ConnectorSettings
from omconnect.runtime.sink_task_runner import SinkTaskRunner
from omconnect.runtime.source_offsets import SourceOffsetStore
from omconnect.runtime.source_task_runner import SourceTaskRunner
from omconnect.runtime.task_runner import TaskId, TaskListener, TaskRunner, TaskSetup
from omconnect.runtime.topic_creator import TopicCreator
from omconnect.runtime.worker_config import WorkerConfig
from omconnect.transport.spi import KeyValueStore, Transport

__all__ = ["TaskOrigin", "Worker"]

_log = logging.getLogger(__name__)

_OPEN_RETRY_S = 15.0
"""How long opening a task's offset store is retried (``fresh_offsets``)."""


class TaskOrigin(Protocol):
    """Where a task comes from: its connector's name, settings and task class (a
    running :class:`~omconnect.runtime.connector_runner.ConnectorRunner`, or, on a
    worker running a task of a connector that runs elsewhere, what the config log says).
    """

    @property
    def name(self) -> str:
        """The connector's name."""

    @property
    def settings(self) -> ConnectorSettings:
        """The connector's parsed settings."""

    def task_class(self) -> type[Task]:
        """The task class."""


class Worker:
    """Holds the transport and builds task runners on it.

    Args:
        config: The worker's config.
        transport: The open transport (the worker closes it in :meth:`close`).
        active_topics: Where tasks record their active topics (``None``: nowhere).
        fresh_offsets: Open the offset store anew for every source task (and every
            :meth:`fresh_offset_store`): in a cluster another worker may have written a
            connector's offsets since this worker opened its store, and a transport's
            store need not show another process's writes until it is opened again.

    """

    def __init__(self, config: WorkerConfig, transport: Transport, *,
                 active_topics: ActiveTopics | None = None,
                 fresh_offsets: bool = False) -> None:
        self.config = config
        self.transport = transport
        self.active_topics = active_topics
        self.topics = TopicCreator(
            transport.admin, enabled=config["topic.creation.enable"],
            default_partitions=config["topic.creation.default.partitions"])
        self._offsets_kv: KeyValueStore | None = None
        self._fresh = fresh_offsets
        self._task_stores: dict[TaskId, KeyValueStore] = {}

    @property
    def offsets_kv(self) -> KeyValueStore:
        """The store for ``offset.storage.namespace``."""
        if self._offsets_kv is None:
            self._offsets_kv = self.transport.kv_store(self.config["offset.storage.namespace"])
        return self._offsets_kv

    def offset_store(self, connector: str) -> SourceOffsetStore:
        """The source offsets of ``connector``."""
        return SourceOffsetStore(self.offsets_kv, connector)

    def fresh_offset_store(self, connector: str) -> tuple[SourceOffsetStore, KeyValueStore]:
        """The source offsets of ``connector`` through a store opened now (close the
        returned store when done); the shared one unless ``fresh_offsets``.
        """
        if not self._fresh:
            return self.offset_store(connector), _Unclosed(self.offsets_kv)
        store = self._open_offsets()
        return SourceOffsetStore(store, connector), store

    def _open_offsets(self) -> KeyValueStore:
        """The offset store opened anew, retried for a while on transport errors (workers
        of a cluster opening it at once for the first time may race to create it).
        """
        namespace = self.config["offset.storage.namespace"]
        deadline = time.monotonic() + _OPEN_RETRY_S
        wait = 0.1
        while True:
            try:
                return self.transport.kv_store(namespace)
            except TransportError as exc:
                if time.monotonic() + wait > deadline:
                    raise
                _log.info("opening the offset store %r failed (retrying in %.1f s): %s",
                          namespace, wait, exc)
                time.sleep(wait)
                wait = min(2.0, wait * 2)

    def _task_offsets(self, task: TaskId) -> SourceOffsetStore:
        if not self._fresh:
            return self.offset_store(task.connector)
        previous = self._task_stores.pop(task, None)
        if previous is not None:
            _close_store(previous)
        store = self._task_stores[task] = self._open_offsets()
        return SourceOffsetStore(store, task.connector)

    def release(self, task: TaskId) -> None:
        """The runner of ``task`` stopped: close what was opened for it alone."""
        store = self._task_stores.pop(task, None)
        if store is not None:
            _close_store(store)

    def task_runner(
        self,
        connector: TaskOrigin,
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
        task_id = TaskId(connector.name, number)
        setup = TaskSetup(
            id=task_id, task_config=task_config, settings=settings,
            worker=self.config, transport=self.transport, topics=self.topics,
            offsets=self._task_offsets(task_id) if isinstance(task, SourceTask)
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
        for store in self._task_stores.values():
            _close_store(store)
        self._task_stores.clear()
        self.topics.close()
        if self._offsets_kv is not None:
            self._offsets_kv.close()
            self._offsets_kv = None
        self.transport.close()


class _Unclosed(KeyValueStore):
    """A shared store handed out where the caller closes what it gets: closing it does
    nothing (the worker closes the shared store).
    """

    def __init__(self, store: KeyValueStore) -> None:
        self._store = store

    def get(self, key: str) -> bytes | None:
        return self._store.get(key)

    def put_many(self, items: Mapping[str, bytes | None]) -> None:
        self._store.put_many(items)

    def scan(self, prefix: str = "") -> Iterator[tuple[str, bytes]]:
        return self._store.scan(prefix)

    def close(self) -> None:
        """Nothing: the store is the worker's."""


def _close_store(store: KeyValueStore) -> None:
    try:
        store.close()
    except Exception:
        _log.debug("closing a task's offset store failed", exc_info=True)
