"""Active topics per connector (Kafka Connect's KIP-558): the topics a connector's tasks
produced to (sources) or consumed from (sinks), kept in the status store.

A topic becomes active for a connector the first time one of its tasks sends a record to
it or receives records from it, and stays active until the connector is deleted or its
active topics are reset (``PUT /connectors/{name}/topics/reset``). Each task remembers
what it already recorded, so the hot path costs one set lookup per topic of a batch.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterable

from omconnect.runtime.config_store import StatusStore

__all__ = ["ActiveTopics", "TaskTopics"]

_log = logging.getLogger(__name__)


class ActiveTopics:
    """The worker's record of active topics, per connector.

    Args:
        statuses: The status store the records live in.
        enabled: ``topic.tracking.enable``: when false nothing is recorded.

    """

    def __init__(self, statuses: StatusStore, *, enabled: bool = True) -> None:
        self._statuses = statuses
        self.enabled = enabled
        self._lock = threading.Lock()
        self._known: dict[str, set[str]] = {}
        self._generation: dict[str, int] = {}

    def of(self, connector: str) -> list[str]:
        """The active topics of ``connector``, sorted."""
        return sorted(self._statuses.topics(connector))

    def record(self, connector: str, task: int, topics: Iterable[str]) -> bool:
        """Record ``topics`` as active for ``connector`` (each stored once).

        Returns:
            Whether they are all recorded. Bookkeeping never fails a task: a store error
            is logged and the topics are recorded at a later sighting.

        """
        if not self.enabled:
            return True
        with self._lock:
            try:
                known = self._known.get(connector)
                if known is None:
                    known = self._known[connector] = set(self._statuses.topics(connector))
                for topic in topics:
                    if topic not in known:
                        self._statuses.put_topic(connector, topic, task,
                                                 int(time.time() * 1000))
                        known.add(topic)
            except Exception as exc:
                _log.warning("connector %r: could not record its active topics (%s); "
                             "trying again when its tasks use them next", connector, exc)
                return False
        return True

    def reset(self, connector: str) -> None:
        """Forget ``connector``'s active topics (tasks record them again as they run)."""
        with self._lock:
            self._statuses.delete_topics(connector)
            self._known[connector] = set()
            self._generation[connector] = self._generation.get(connector, 0) + 1

    def forget(self, connector: str) -> None:
        """``connector`` was deleted (its records with it): a connector created again
        under its name records its topics afresh.
        """
        with self._lock:
            self._known.pop(connector, None)
            self._generation[connector] = self._generation.get(connector, 0) + 1

    def generation(self, connector: str) -> int:
        """How many resets ``connector`` had: a task's own memory is stale after one."""
        return self._generation.get(connector, 0)

    def for_task(self, connector: str, task: int) -> TaskTopics:
        """The recorder for one task of ``connector``."""
        return TaskTopics(self, connector, task)


class TaskTopics:
    """What one task records: it remembers what it already recorded.

    Args:
        active: The worker's record.
        connector: The task's connector.
        task: The task's number.

    """

    def __init__(self, active: ActiveTopics, connector: str, task: int) -> None:
        self._active = active
        self._connector = connector
        self._task = task
        self._seen: set[str] = set()
        self._generation = active.generation(connector)

    def saw(self, topics: Iterable[str]) -> None:
        """The task produced to (or consumed from) ``topics``."""
        if not self._active.enabled:
            return
        generation = self._active.generation(self._connector)
        if generation != self._generation:
            self._seen.clear()
            self._generation = generation
        new = [topic for topic in topics if topic not in self._seen]
        if new and self._active.record(self._connector, self._task, new):
            self._seen.update(new)
