"""Who runs what in a cluster: :class:`Assignment`, and the items it places.

An assignment maps each worker (by ``worker.id``) to the connector instances and tasks it
runs, together with the worker's *session* (a fresh id every time a worker process
starts), so that a worker restarted under the same id never takes over what was assigned
to its previous process before the leader says so. The leader publishes a new one, with
the next ``generation``, whenever what should run or who is alive changes
(:mod:`~omconnect.runtime.distributed.assignor`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import attrs

__all__ = ["Assignment", "TaskKey", "WorkerAssignment"]

TaskKey = tuple[str, int]
"""A task: its connector's name and its number."""


@attrs.frozen(kw_only=True)
class WorkerAssignment:
    """What one worker runs.

    Attributes:
        session: The worker process it was given to.
        url: The worker's REST API, as it advertised it.
        connectors: Connector instances.
        tasks: Tasks.

    """

    session: str
    url: str = ""
    connectors: frozenset[str] = frozenset()
    tasks: frozenset[TaskKey] = frozenset()

    @property
    def empty(self) -> bool:
        """Whether it runs nothing."""
        return not self.connectors and not self.tasks

    def to_json(self) -> dict[str, Any]:
        """The record form (sorted, so equal assignments encode equally)."""
        return {"session": self.session, "url": self.url,
                "connectors": sorted(self.connectors),
                "tasks": [[name, number] for name, number in sorted(self.tasks)]}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> WorkerAssignment:
        """Read the record form."""
        return cls(session=str(data["session"]), url=str(data.get("url") or ""),
                   connectors=frozenset(str(c) for c in data.get("connectors", ())),
                   tasks=frozenset((str(t[0]), int(t[1])) for t in data.get("tasks", ())))


@attrs.frozen(kw_only=True)
class Assignment:
    """A whole cluster's assignment.

    Attributes:
        generation: Counts the assignments published (0: none yet).
        leader: The worker that published it.
        workers: Each worker's share, by worker id. A worker that left within
            ``scheduled.rebalance.max.delay.ms`` keeps its entry (its items wait for it).

    """

    generation: int = 0
    leader: str = ""
    workers: Mapping[str, WorkerAssignment] = attrs.field(factory=dict)

    def owner_of_connector(self, name: str) -> str | None:
        """The worker assigned connector ``name``'s instance, if any."""
        for worker, share in self.workers.items():
            if name in share.connectors:
                return worker
        return None

    def owner_of_task(self, task: TaskKey) -> str | None:
        """The worker assigned ``task``, if any."""
        for worker, share in self.workers.items():
            if task in share.tasks:
                return worker
        return None

    def items_of(self, connector: str) -> list[str]:
        """The workers holding the instance or a task of ``connector``."""
        return sorted(w for w, share in self.workers.items()
                      if connector in share.connectors
                      or any(name == connector for name, _ in share.tasks))

    def same_placement(self, workers: Mapping[str, WorkerAssignment]) -> bool:
        """Whether ``workers`` places everything as this assignment does."""
        def placement(shares: Mapping[str, WorkerAssignment]) -> dict[str, Any]:
            return {w: (s.session, s.connectors, s.tasks) for w, s in shares.items()
                    if not s.empty}
        return placement(self.workers) == placement(workers)


def task_keys(pairs: Iterable[Iterable[Any]]) -> frozenset[TaskKey]:
    """``[[name, number], ...]`` as task keys."""
    return frozenset((str(name), int(number)) for name, number in pairs)
