"""The cluster's state, rebuilt by every worker from the config log: :class:`ClusterState`.

The config log is one partition that every worker reads from its first record, in the
same order. Each record is applied here by a deterministic rule, so every worker that
has read up to the same record holds the same state, and a record's *outcome* (created,
exists, conflict, ...) is the same on every worker: the writer of a record reads its own
record back and answers its caller with that outcome. Two writes racing through two
workers are thereby ordered by the log, never by clocks. Records (JSON objects, each
with an ``id`` and a ``kind``):

========== ============================================================================
kind       rule
========== ============================================================================
marker     a reader's catch-up mark (it has read everything before); no change
hello      a worker process joins, with its session
create     adds the connector unless the name exists (outcome ``created`` / ``exists``)
put        sets the connector's config, creating it when missing (``created`` /
           ``updated``); with ``if_version``, only if the config is still that version
           (``conflict`` otherwise: a read-modify-write that lost a race)
target     RUNNING / PAUSED / STOPPED; pausing a stopped connector is refused
           (``stopped``); stopping clears its task configs
delete     forgets the connector (``missing`` when there is none)
tasks      the task configs its connector instance generated for config ``version``;
           ignored (``stale``) when the config changed since
restart    a restart request, carried out by the workers running what it names
topics     a connector's active topics were reset: every worker records them afresh
claim      a worker holds these slots of the membership group now (latest claim per
           slot wins); a worker is alive while it is the latest claimant of a slot,
           and the claimant of slot 0 is the leader
assignment a new :class:`~omconnect.runtime.distributed.assignment.Assignment`; taken
           only from the current leader's current session, with the next generation
applied     a worker has carried out a generation (stopped what it gave up)
========== ============================================================================

A record id seen before (a producer's resend) is skipped. ``version`` numbers are
positions in the log (how many records were applied before), the same on every worker.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import attrs

from omconnect.connector.lifecycle import State
from omconnect.runtime.distributed.assignment import (
    Assignment,
    TaskKey,
    WorkerAssignment,
)

__all__ = ["ClusterState", "ConnectorState", "Member", "RestartRequest"]

_log = logging.getLogger(__name__)

CREATED = "created"
UPDATED = "updated"
EXISTS = "exists"
MISSING = "missing"
CONFLICT = "conflict"
STOPPED = "stopped"
STALE = "stale"
OK = "ok"
IGNORED = "ignored"


@attrs.frozen(kw_only=True)
class RestartRequest:
    """A restart asked for through the REST API.

    Attributes:
        seq: Its place among every restart request (increasing).
        task: The task to restart; ``None`` for the connector (and, with
            ``include_tasks``, its tasks).
        include_tasks: Restart the connector's tasks too.
        only_failed: Only what is FAILED.

    """

    seq: int
    task: int | None = None
    include_tasks: bool = False
    only_failed: bool = False


@attrs.define(kw_only=True)
class ConnectorState:
    """One connector as the config log says.

    Attributes:
        name: Its name.
        config: Its config as written (references unresolved).
        target: RUNNING, PAUSED or STOPPED.
        origin: Where it came from (``api``).
        version: Position of the record that set ``config``.
        task_version: The config version its task configs were generated from
            (``None``: none yet).
        task_class: The task class (``module:Qualified.Name``) of those tasks.
        task_configs: The task configs, as written (references restored).
        restarts: Restart requests, oldest first.

    """

    name: str
    config: dict[str, Any]
    target: State
    origin: str
    version: int
    task_version: int | None = None
    task_class: str | None = None
    task_configs: list[dict[str, Any]] = attrs.field(factory=list)
    restarts: list[RestartRequest] = attrs.field(factory=list)

    @property
    def task_count(self) -> int:
        """How many tasks run (none while stopped)."""
        return 0 if self.target is State.STOPPED else len(self.task_configs)


@attrs.frozen(kw_only=True)
class Member:
    """A worker as its latest claim says.

    Attributes:
        worker: Its ``worker.id``.
        session: Its process's session.
        url: Its REST API.
        slots: The membership slots it holds.

    """

    worker: str
    session: str
    url: str
    slots: frozenset[int]


_KEEP_RESTARTS = 100


class ClusterState:
    """The state machine of the config log (see the module docstring). Not thread-safe:
    the herder applies records and reads it under one lock.
    """

    def __init__(self) -> None:
        self.position = 0
        self.connectors: dict[str, ConnectorState] = {}
        self.claims: dict[str, Member] = {}
        self.slot_owners: dict[int, tuple[str, str]] = {}
        self.assignment = Assignment()
        self.acknowledged: dict[str, tuple[str, int]] = {}
        self.released: dict[str | TaskKey, tuple[str, str, int]] = {}
        """Items an assignment took from a worker's session, until it acknowledged that
        generation: ``item -> (worker, session, generation)``."""
        self.sessions: dict[str, str] = {}
        """Each worker's latest session, from its hello."""
        self._seen: set[str] = set()
        self._restart_seq = 0

    # -- views --------------------------------------------------------------------------

    @property
    def alive(self) -> dict[str, Member]:
        """Workers that are the latest claimant of at least one slot, by id."""
        holders = {owner for owner in self.slot_owners.values()}
        return {worker: member for worker, member in self.claims.items()
                if (worker, member.session) in holders}

    @property
    def leader(self) -> tuple[str, str] | None:
        """(worker, session) of slot 0's latest claimant: the leader."""
        return self.slot_owners.get(0)

    def work(self) -> tuple[set[str], set[TaskKey]]:
        """What should run: connector instances and tasks of connectors not stopped."""
        connectors = {n for n, c in self.connectors.items() if c.target is not State.STOPPED}
        tasks = {(n, i) for n, c in self.connectors.items() for i in range(c.task_count)}
        return connectors, tasks

    def rebalancing(self) -> bool:
        """Whether some work is not running on a live worker (unplaced, waiting for a
        departed worker, being moved) or a live worker has not carried out the
        assignment in force yet.
        """
        alive = {w: m.session for w, m in self.alive.items()}
        placed: set[str | TaskKey] = set()
        for worker, share in self.assignment.workers.items():
            if alive.get(worker) == share.session:
                placed.update(share.connectors)
                placed.update(share.tasks)
        connectors, tasks = self.work()
        if (connectors | tasks) - placed:
            return True
        return any(self.acknowledged.get(w, ("", 0))[1] < self.assignment.generation
                   for w in alive if w in self.assignment.workers)

    def share_of(self, worker: str, session: str) -> WorkerAssignment | None:
        """What the current assignment gives ``worker``'s ``session`` (``None``:
        nothing, or its share belongs to an earlier session).
        """
        share = self.assignment.workers.get(worker)
        return share if share is not None and share.session == session else None

    # -- applying records ---------------------------------------------------------------

    def apply(self, record: Mapping[str, Any]) -> str:
        """Apply one record; returns its outcome (see the module docstring)."""
        record_id = str(record.get("id") or "")
        if record_id:
            if record_id in self._seen:
                return IGNORED
            self._seen.add(record_id)
        self.position += 1
        kind = record.get("kind")
        handler = getattr(self, f"_apply_{kind}", None)
        if handler is None:
            _log.warning("config log: unknown record kind %r (written by a newer "
                         "version?); ignored", kind)
            return IGNORED
        try:
            outcome: str = handler(record)
        except (KeyError, TypeError, ValueError) as exc:
            _log.warning("config log: malformed %s record ignored: %s", kind, exc)
            return IGNORED
        return outcome

    def _apply_marker(self, record: Mapping[str, Any]) -> str:
        return OK

    def _apply_hello(self, record: Mapping[str, Any]) -> str:
        self.sessions[str(record["worker"])] = str(record["session"])
        return OK

    def _apply_create(self, record: Mapping[str, Any]) -> str:
        name = str(record["name"])
        if name in self.connectors:
            return EXISTS
        self.connectors[name] = ConnectorState(
            name=name, config=dict(record["config"]), target=State(record["target"]),
            origin=str(record.get("origin") or "api"), version=self.position)
        return CREATED

    def _apply_put(self, record: Mapping[str, Any]) -> str:
        name = str(record["name"])
        current = self.connectors.get(name)
        expected = record.get("if_version")
        if expected is not None and (current is None or current.version != int(expected)):
            return CONFLICT
        if current is None:
            self.connectors[name] = ConnectorState(
                name=name, config=dict(record["config"]),
                target=State(record.get("target") or State.RUNNING.value),
                origin=str(record.get("origin") or "api"), version=self.position)
            return CREATED
        current.config = dict(record["config"])
        current.version = self.position
        if record.get("origin"):
            current.origin = str(record["origin"])
        return UPDATED

    def _apply_target(self, record: Mapping[str, Any]) -> str:
        current = self.connectors.get(str(record["name"]))
        if current is None:
            return MISSING
        target = State(record["target"])
        if target is State.PAUSED and current.target is State.STOPPED:
            return STOPPED
        current.target = target
        if target is State.STOPPED:
            current.task_configs, current.task_version, current.task_class = [], None, None
        return OK

    def _apply_delete(self, record: Mapping[str, Any]) -> str:
        return OK if self.connectors.pop(str(record["name"]), None) is not None else MISSING

    def _apply_tasks(self, record: Mapping[str, Any]) -> str:
        current = self.connectors.get(str(record["name"]))
        if current is None or current.version != int(record["version"]) \
                or current.target is State.STOPPED:
            return STALE
        current.task_version = current.version
        current.task_class = str(record["task_class"])
        current.task_configs = [dict(c) for c in record["configs"]]
        return OK

    def _apply_restart(self, record: Mapping[str, Any]) -> str:
        current = self.connectors.get(str(record["name"]))
        if current is None:
            return MISSING
        if current.target is State.STOPPED:
            return STOPPED
        task = record.get("task")
        self._restart_seq += 1
        current.restarts.append(RestartRequest(
            seq=self._restart_seq, task=None if task is None else int(task),
            include_tasks=bool(record.get("include_tasks")),
            only_failed=bool(record.get("only_failed"))))
        del current.restarts[:-_KEEP_RESTARTS]
        return OK

    def _apply_topics(self, record: Mapping[str, Any]) -> str:
        return OK if str(record["name"]) in self.connectors else MISSING

    def _apply_claim(self, record: Mapping[str, Any]) -> str:
        worker, session = str(record["worker"]), str(record["session"])
        slots = frozenset(int(s) for s in record["slots"])
        self.claims[worker] = Member(worker=worker, session=session,
                                     url=str(record.get("url") or ""), slots=slots)
        for slot in slots:
            self.slot_owners[slot] = (worker, session)
        return OK

    def _apply_assignment(self, record: Mapping[str, Any]) -> str:
        writer = (str(record["leader"]), str(record["session"]))
        generation = int(record["generation"])
        if writer != self.leader or generation != self.assignment.generation + 1:
            return IGNORED
        workers = {str(w): WorkerAssignment.from_json(share)
                   for w, share in dict(record["workers"]).items()}
        previous = self.assignment.workers
        for worker, share in previous.items():
            now = workers.get(worker)
            kept_connectors = now.connectors if now and now.session == share.session \
                else frozenset()
            kept_tasks = now.tasks if now and now.session == share.session else frozenset()
            for name in share.connectors - kept_connectors:
                self.released[name] = (worker, share.session, generation)
            for task in share.tasks - kept_tasks:
                self.released[task] = (worker, share.session, generation)
        for share in workers.values():
            for name in share.connectors:
                self.released.pop(name, None)
            for task in share.tasks:
                self.released.pop(task, None)
        self.assignment = Assignment(generation=generation, leader=writer[0],
                                     workers=workers)
        return OK

    def _apply_applied(self, record: Mapping[str, Any]) -> str:
        worker, session = str(record["worker"]), str(record["session"])
        generation = int(record["generation"])
        self.acknowledged[worker] = (session, generation)
        for item, (holder, held_session, given_up) in list(self.released.items()):
            if holder == worker and held_session == session and given_up <= generation:
                del self.released[item]
        return OK
