"""The distributed herder: one worker of a cluster that shares connectors and spreads
their instances and tasks over its workers. :class:`DistributedHerder`.

Every worker started with the same ``group.id`` on one transport is part of the cluster
(``omconnect distributed WORKER_CONFIG``). The transport is the only thing they share;
its consumer group and its ordered logs are the whole coordination:

* **Membership** (:mod:`~omconnect.runtime.distributed.membership`): each worker is a
  consumer in group ``group.id`` over a topic whose partitions stand for slots; the
  transport's group protocol hands them out and takes a dead worker's away after its
  session timeout. A worker writes the slots it holds to the config log (a *claim*).
* **The config log** (:mod:`~omconnect.runtime.distributed.shared_log`,
  :mod:`~omconnect.runtime.distributed.cluster_state`): one partition every worker reads
  in order and applies as a deterministic state machine: connector configs, target
  states, task configs, restart requests, claims (who is alive: the latest claimant of a
  slot; who leads: slot 0's) and assignments. A change made through any worker's API is
  a record; its outcome (created, 409, ...) is decided where the record lands in the
  log, the same on every worker.
* **Assignment** (:mod:`~omconnect.runtime.distributed.leadership`,
  :mod:`~omconnect.runtime.distributed.assignor`): the leader publishes
  who runs which connector instance and task, incrementally (what runs stays put; a
  departed worker is waited for; a move is a revocation, acknowledged, then a
  placement). Every worker starts and stops only the differences
  (:mod:`~omconnect.runtime.distributed.local_work`).
* **Statuses** go to a second shared log every worker reads
  (:mod:`~omconnect.runtime.distributed.shared_store`); **offsets** to the transport's
  key/value store (sources; reopened for each task start, so a moved task resumes from
  the last commit of whoever ran it) and the consumer group ``connect-<name>`` (sinks).

Threads: the API may be called from any thread. Log records are applied on the config
log's reader thread (under a short state lock); everything that starts or stops work,
writes claims and leads runs on the herder's own thread, woken by new records,
membership changes and timers. Task threads report to a scheduler thread, as in the
standalone herder.
"""

from __future__ import annotations

import copy
import json
import logging
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from omconnect.connector.lifecycle import State
from omconnect.errors import ConfigError, ConnectError
from omconnect.runtime.active_topics import ActiveTopics
from omconnect.runtime.config_store import API, StatusStore
from omconnect.runtime.connector_config import (
    ConfigValidation,
    validate_connector_config,
    written_config,
)
from omconnect.runtime.connector_entry import ConnectorEntry, kind_of, target_state
from omconnect.runtime.distributed import cluster_state as outcomes
from omconnect.runtime.distributed.assignment import TaskKey
from omconnect.runtime.distributed.cluster_state import ClusterState, ConnectorState
from omconnect.runtime.distributed.leadership import Leadership
from omconnect.runtime.distributed.local_work import GeneratedTasks, LocalWork
from omconnect.runtime.distributed.membership import Membership
from omconnect.runtime.distributed.rebalance_metrics import RebalanceMetrics
from omconnect.runtime.distributed.shared_log import SharedLog, with_retries
from omconnect.runtime.distributed.shared_store import SharedStore
from omconnect.runtime.distributed.status_view import cluster_status
from omconnect.runtime.herder_errors import (
    ConnectorExistsError,
    ConnectorNotFoundError,
    ConnectorStateError,
    DisabledByWorkerError,
)
from omconnect.runtime.metrics import TaskMetricsSnapshot
from omconnect.runtime.offset_admin import OffsetAdmin
from omconnect.runtime.plugin_listing import list_plugins
from omconnect.runtime.restart_scheduling import connector_restart_delay, task_restart_delay
from omconnect.runtime.scheduler import Scheduler
from omconnect.runtime.status import (
    ClusterInfo,
    ConnectorInfo,
    ConnectorOffsets,
    ConnectorStatus,
    PluginInfo,
    TaskInfo,
    TaskStatus,
    WorkerInfo,
)
from omconnect.runtime.status_records import StatusRecorder
from omconnect.runtime.task_runner import TaskRunner
from omconnect.runtime.worker import Worker
from omconnect.runtime.worker_config import WorkerConfig
from omconnect.transport.spi import KeyValueStore, Transport

__all__ = ["CLUSTER_CAPABILITIES", "DistributedHerder"]

_log = logging.getLogger(__name__)

CLUSTER_CAPABILITIES = ("consumer_groups", "replayable")
"""What a transport must declare to host a cluster: consumer groups (membership) and
replay (every worker reads the cluster's logs from their first record)."""

_TICK_S = 0.5
_PATCH_ATTEMPTS = 10
_WORKER_KEY = "worker-"


class DistributedHerder:
    """One worker of a cluster (see the module docstring).

    Args:
        worker_config: The worker's settings, parsed as a distributed worker's
            (``group.id`` required), or a mapping to parse so.
        url: This worker's REST API as the others reach it (``""``: none); may be set
            later, before :meth:`start`, with :meth:`advertise`.

    Raises:
        ConfigError: The config is not a distributed worker's, or invalid.

    """

    def __init__(self, worker_config: WorkerConfig | Mapping[str, Any], *,
                 url: str = "") -> None:
        if isinstance(worker_config, WorkerConfig):
            if not worker_config.distributed:
                raise ConfigError("a distributed herder needs a distributed worker config "
                                  "(WorkerConfig.parse(..., distributed=True), with group.id)",
                                  key="group.id")
            self.config = worker_config
        else:
            self.config = WorkerConfig.parse(worker_config, distributed=True)
        self.url = url
        self.session = uuid.uuid4().hex[:16]
        self.group_id = str(self.config["group.id"])
        self._timeout = self.config["cluster.write.timeout.ms"] / 1000.0
        self._delay_s = self.config["scheduled.rebalance.max.delay.ms"] / 1000.0
        self._lock = threading.RLock()
        self._state_lock = threading.Lock()
        self._state = ClusterState()
        self._status = StatusRecorder(self.config.worker_id)
        self._statuses: SharedStore | None = None
        self._log: SharedLog | None = None
        self._worker: Worker | None = None
        self._work: LocalWork | None = None
        self._active_topics: ActiveTopics | None = None
        self._membership: Membership | None = None
        self._scheduler: Scheduler | None = None
        self._thread: threading.Thread | None = None
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._running = False
        self._slots: frozenset[int] = frozenset()
        self._leadership = Leadership(self.worker_id, self.session, delay_s=self._delay_s,
                                      timeout_s=self._timeout)
        self._applied_generation = 0
        self._reconfigure: set[str] = set()
        self._kinds: dict[str, tuple[str, str]] = {}
        self.metrics_of_rebalances = RebalanceMetrics()
        self._published_metrics: tuple[Any, ...] | None = None

    # -- lifecycle -------------------------------------------------------------------------

    @property
    def worker_id(self) -> str:
        """This worker's id (``worker.id``)."""
        return self.config.worker_id

    @property
    def running(self) -> bool:
        """Whether :meth:`start` ran (this worker takes work)."""
        return self._running

    def answers(self, timeout: float) -> bool:
        """Whether the herder takes a request within ``timeout`` seconds."""
        if not self._lock.acquire(timeout=timeout):
            return False
        self._lock.release()
        return True

    def advertise(self, url: str) -> None:
        """Set the REST API URL the other workers and tools reach this worker at."""
        self.url = url

    def open(self) -> None:
        """Open the transport, read the cluster's logs to their end; runs nothing
        (idempotent).

        Raises:
            ConfigError: The transport cannot host a cluster (naming the capability).
            ConnectError: The logs could not be read in ``cluster.write.timeout.ms``.

        """
        with self._lock:
            if self._worker is not None:
                return
            transport = self.config.open_transport()
            try:
                self._open_on(transport)
            except BaseException:
                self._close_logs()
                transport.close()
                raise

    def _open_on(self, transport: Transport) -> None:
        missing = transport.capabilities.missing(**dict.fromkeys(CLUSTER_CAPABILITIES, True))
        if missing:
            raise ConfigError(
                f"transport {self.config.transport_name!r} cannot host a cluster: it lacks "
                f"the {', '.join(missing)} capabilit{'y' if len(missing) == 1 else 'ies'} "
                "(run omconnect standalone on it, or pick another transport)",
                key="transport")
        self._statuses = SharedStore(transport, self.config["status.storage.namespace"],
                                     timeout=self._timeout)
        self._statuses.open()
        status_store = self._status.store = StatusStore(self._statuses)
        self._active_topics = ActiveTopics(status_store,
                                           enabled=self.config["topic.tracking.enable"])
        self._log = SharedLog(transport, self.config["config.storage.namespace"],
                              self._apply_record, name="config")
        self._log.open()
        self._log.append_and_wait({"kind": "marker"}, self._timeout)  # read to the end
        self._statuses.catch_up(self._timeout)
        self._worker = Worker(self.config, transport, active_topics=self._active_topics,
                              fresh_offsets=True)
        with_retries(lambda: self._offset_store_on(transport).close(),
                     "creating the offset store")
        self._work = LocalWork(self._worker, self._status, self, id(self))
        self._scheduler = Scheduler("omconnect-herder-events")

    def _offset_store_on(self, transport: Transport) -> KeyValueStore:
        """The offset store on ``transport`` (opened now; created on first use)."""
        return transport.kv_store(self.config["offset.storage.namespace"])

    def start(self) -> None:
        """Open, join the cluster and take a share of its work."""
        with self._lock:
            self.open()
            if self._running:
                return
            assert self._worker is not None and self._log is not None
            self._log.append_and_wait({"kind": "hello", "worker": self.worker_id,
                                       "session": self.session, "url": self.url},
                                      self._timeout)
            self._running = True
            self._stopping.clear()
            self._membership = Membership(
                self._worker.transport, self.group_id, slots=self.config["cluster.slots"],
                on_change=self._slots_changed)
            self._membership.start()
            self._thread = threading.Thread(target=self._run, daemon=True,
                                            name="omconnect-herder")
            self._thread.start()
            _log.info("worker %s (session %s) joined cluster %r on transport %s",
                      self.worker_id, self.session, self.group_id,
                      self.config.transport_name)

    def stop(self) -> None:
        """Stop what runs here (committing what is safe), leave the cluster, close."""
        thread = self._thread
        self._stopping.set()
        self._wake.set()
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=self.config["task.shutdown.graceful.timeout.ms"] / 1000 + 30)
        with self._lock:
            if self._worker is None:
                return
            if self._work is not None:
                self._work.stop_all()
            membership, self._membership = self._membership, None
            if membership is not None:
                membership.close()
            self._running = False
            self._thread = None
            scheduler, self._scheduler = self._scheduler, None
            worker, self._worker, self._work = self._worker, None, None
        if scheduler is not None:
            scheduler.close()
        self._close_logs()
        worker.close()

    close = stop

    def _close_logs(self) -> None:
        log, self._log = self._log, None
        statuses, self._statuses = self._statuses, None
        self._status.store = None
        self._active_topics = None
        for closable in (log, statuses):
            if closable is not None:
                try:
                    closable.close()
                except Exception:
                    _log.exception("closing a cluster log failed")

    def __enter__(self) -> DistributedHerder:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # -- the config log (its reader thread) ----------------------------------------------

    def _apply_record(self, record: dict[str, Any]) -> str:
        with self._state_lock:
            outcome = self._state.apply(record)
        if record.get("kind") == "topics" and self._active_topics is not None:
            self._active_topics.forget(str(record.get("name")))  # recorded afresh here too
        self._wake.set()
        return outcome

    def _append(self, record: dict[str, Any]) -> str:
        """Append a record, wait until this worker applied it; its outcome."""
        if self._log is None:
            self.open()
        assert self._log is not None
        outcome: str = self._log.append_and_wait(record, self._timeout)
        return outcome

    # -- the herder's thread -----------------------------------------------------------------

    def _slots_changed(self, slots: frozenset[int]) -> None:
        self._slots = slots
        self._wake.set()

    def _run(self) -> None:
        while not self._stopping.is_set():
            wait = _TICK_S
            recheck = self._leadership.recheck_at
            if recheck is not None:
                wait = max(0.0, min(wait, recheck - time.monotonic()))
            self._wake.wait(wait)
            self._wake.clear()
            if self._stopping.is_set():
                return
            try:
                self._claim()
                self._reconcile()
                self._lead()
                self._observe()
            except Exception:
                if self._stopping.is_set():
                    return
                _log.exception("worker %s: cluster step failed (retrying)", self.worker_id)
                self._stopping.wait(_TICK_S)

    def _claim(self) -> None:
        """Write the slots this worker holds when the log does not show them as its."""
        slots = self._slots
        if not slots:
            return
        me = (self.worker_id, self.session)
        with self._state_lock:
            current = all(self._state.slot_owners.get(s) == me for s in slots)
            url = self._state.claims.get(self.worker_id)
            same = current and url is not None and url.url == self.url \
                and url.session == self.session
        if same:
            return
        self._append({"kind": "claim", "worker": self.worker_id, "session": self.session,
                      "url": self.url, "slots": sorted(slots)})

    def _snapshot(self) -> tuple[dict[str, ConnectorState], Any, int, dict[str, str]]:
        with self._state_lock:
            connectors = {name: copy.deepcopy(c) for name, c in self._state.connectors.items()}
            share = self._state.share_of(self.worker_id, self.session)
            generation = self._state.assignment.generation
            alive = {w: m.session for w, m in self._state.alive.items()}
        return connectors, share, generation, alive

    def _reconcile(self) -> None:
        """Start and stop what runs here so that it matches this worker's share."""
        with self._lock:
            work = self._work
            if work is None or not self._running:
                return
            connectors, share, generation, _ = self._snapshot()
            wanted_connectors: set[str] = set()
            wanted_tasks: set[TaskKey] = set()
            if share is not None:
                wanted_connectors = {n for n in share.connectors if n in connectors
                                     and connectors[n].target is not State.STOPPED}
                wanted_tasks = {(n, i) for n, i in share.tasks if n in connectors
                                and connectors[n].target is not State.STOPPED
                                and connectors[n].task_version is not None
                                and i < len(connectors[n].task_configs)}
            work.stop_tasks(sorted(work.running_tasks() - wanted_tasks))
            for name in sorted(set(work.versions) - wanted_connectors):
                work.stop_connector(name, destroyed=name not in connectors)
            generated: list[GeneratedTasks] = []
            for name in sorted(wanted_connectors):
                state = connectors[name]
                if work.versions.get(name) != state.version:
                    made = work.start_connector(state)
                    if made is not None:
                        generated.append(made)
            for name, number in sorted(wanted_tasks):
                state = connectors[name]
                if work.task_versions.get((name, number)) != state.task_version:
                    work.start_task(state, number)
            for name, entry in list(work.entries.items()):
                known = connectors.get(name)
                if known is None:
                    continue
                if entry.target is not known.target:
                    work.set_target(known)
                handled = work.handled_restarts.get(name, 0)
                for request in known.restarts:
                    if request.seq > handled:
                        work.restart(known, request)
                if known.restarts:
                    work.handled_restarts[name] = known.restarts[-1].seq
            for name in sorted(self._reconfigure):
                made = work.regenerate(name)
                if made is not None:
                    generated.append(made)
            self._reconfigure.clear()
            for made in generated:
                self._publish_tasks(made, connectors.get(made.name))
            if generation > self._applied_generation:
                self._append({"kind": "applied", "worker": self.worker_id,
                              "session": self.session, "generation": generation})
                self._applied_generation = generation
                self.metrics_of_rebalances.applied(
                    generation, len(wanted_connectors), len(wanted_tasks))

    def _publish_tasks(self, made: GeneratedTasks, state: ConnectorState | None) -> None:
        if state is None:
            return
        configs = json.loads(json.dumps(made.configs, default=str))
        if state.task_version == made.version and state.task_class == made.task_class \
                and state.task_configs == configs:
            return
        outcome = self._append({"kind": "tasks", "name": made.name, "version": made.version,
                                "task_class": made.task_class, "configs": configs})
        _log.info("connector %r: %d task config(s) written (%s)", made.name, len(configs),
                  outcome)

    def _lead(self) -> None:
        """As the leader, publish the next assignment when it differs."""
        with self._state_lock:
            record = self._leadership.step(self._state, self._slots, time.monotonic())
        if record is None:
            return
        assert self._log is not None
        self._log.append(record, self._timeout)
        _log.info("worker %s (leader): assignment %d: %s", self.worker_id,
                  record["generation"], {w: (len(s["connectors"]), len(s["tasks"]))
                                         for w, s in record["workers"].items()})

    def _observe(self) -> None:
        """Update the rebalance metrics; publish them in the status store on a change."""
        with self._state_lock:
            rebalancing = self._state.rebalancing()
        self.metrics_of_rebalances.rebalancing(rebalancing)
        snapshot = self.metrics_of_rebalances.snapshot()
        published = (snapshot.rebalances, snapshot.rebalancing, snapshot.generation,
                     snapshot.connectors, snapshot.tasks, self.url)
        if published == self._published_metrics or self._statuses is None:
            return
        self._published_metrics = published
        record = {"worker_id": self.worker_id, "session": self.session, "url": self.url,
                  "rebalances": snapshot.rebalances,
                  "rebalance_seconds": round(snapshot.rebalance_seconds, 3),
                  "rebalancing": snapshot.rebalancing, "generation": snapshot.generation,
                  "connectors": snapshot.connectors, "tasks": snapshot.tasks}
        self._statuses.put(_WORKER_KEY + self.worker_id, json.dumps(record).encode())

    # -- queries -------------------------------------------------------------------------

    def cluster(self) -> ClusterInfo:
        """Every worker of the cluster: alive ones and those whose work waits for them,
        with the metrics each last published.
        """
        self.open()
        with self._state_lock:
            state = self._state
            alive = dict(state.alive)
            assignment = state.assignment
            leader = state.leader[0] if state.leader else None
        published = {}
        if self._statuses is not None:
            for key, value in self._statuses.scan(_WORKER_KEY):
                published[key[len(_WORKER_KEY):]] = json.loads(value)
        mine = self.metrics_of_rebalances.snapshot()
        workers = []
        for worker in sorted(set(alive) | set(assignment.workers)):
            share = assignment.workers.get(worker)
            member = alive.get(worker)
            metrics = published.get(worker, {})
            if worker == self.worker_id:
                metrics = {"rebalances": mine.rebalances,
                           "rebalance_seconds": mine.rebalance_seconds,
                           "rebalancing": mine.rebalancing, "generation": mine.generation}
            workers.append(WorkerInfo(
                id=worker, url=(member.url if member else share.url if share else "") or None,
                state="alive" if member is not None else "departed",
                leader=worker == leader,
                connectors=len(share.connectors) if share else 0,
                tasks=len(share.tasks) if share else 0,
                rebalances=int(metrics.get("rebalances", 0)),
                rebalance_seconds=float(metrics.get("rebalance_seconds", 0.0)),
                rebalancing=bool(metrics.get("rebalancing", False)),
                generation=int(metrics.get("generation", 0))))
        return ClusterInfo(mode="distributed", group_id=self.group_id,
                           worker_id=self.worker_id, leader=leader,
                           generation=assignment.generation, workers=tuple(workers))

    def connectors(self) -> list[str]:
        """Every connector of the cluster, sorted."""
        self.open()
        with self._state_lock:
            return sorted(self._state.connectors)

    def _connector(self, name: str) -> ConnectorState:
        self.open()
        with self._state_lock:
            state = self._state.connectors.get(name)
            if state is None:
                raise ConnectorNotFoundError(f"no connector named {name!r}", connector=name)
            return copy.deepcopy(state)

    def _kind(self, state: ConnectorState) -> str:
        cached = self._kinds.get(state.name)
        text = json.dumps(state.config.get("connector.class"), default=str)
        if cached is None or cached[0] != text:
            cached = self._kinds[state.name] = (text, kind_of(state.config))
        return cached[1]

    def connector_info(self, name: str) -> ConnectorInfo:
        """A connector's config (as written) and task numbers."""
        state = self._connector(name)
        return ConnectorInfo(name=name, type=self._kind(state), config=dict(state.config),
                             tasks=tuple(range(state.task_count)))

    def connector_config(self, name: str) -> dict[str, Any]:
        """A connector's config as written."""
        return dict(self._connector(name).config)

    def task_configs(self, name: str) -> list[TaskInfo]:
        """The configs of a connector's tasks, as written (references restored)."""
        state = self._connector(name)
        return [TaskInfo(connector=name, id=n, config=dict(c))
                for n, c in enumerate(state.task_configs[:state.task_count])]

    def connector_status(self, name: str) -> ConnectorStatus:
        """The connector's and its tasks' states, each naming the worker running it;
        UNASSIGNED while a rebalance places it or it waits for a departed worker.
        """
        state = self._connector(name)
        with self._state_lock:
            assignment = self._state.assignment
            alive = {w: m.session for w, m in self._state.alive.items()}
        with self._lock:
            local = self._work.entries.get(name) if self._work is not None else None
            return cluster_status(state, kind=self._kind(state), assignment=assignment,
                                  alive=alive, me=self.worker_id, local=local,
                                  store=self._status.store)

    def task_status(self, name: str, task: int) -> TaskStatus:
        """One task's state."""
        for status in self.connector_status(name).tasks:
            if status.id == task:
                return status
        raise ConnectorNotFoundError(f"connector {name!r} has no task {task}",
                                     connector=name, task=task)

    def metrics(self) -> list[TaskMetricsSnapshot]:
        """A snapshot of the metrics of every task running on this worker."""
        with self._lock:
            runners = self._work.runners() if self._work is not None else []
        return sorted((r.metrics.snapshot() for r in runners),
                      key=lambda s: (s.connector, s.task))

    @staticmethod
    def plugins(kinds: list[str] | None = None) -> list[PluginInfo]:
        """The installed plugins of ``kinds`` (default all)."""
        return list_plugins(kinds)

    def validate_connector_config(self, config: Mapping[str, Any]) -> ConfigValidation:
        """Validate a connector config completely, on this worker (every worker of a
        cluster must have the same plugins installed, as in Kafka Connect).
        """
        self.open()
        assert self._worker is not None
        return validate_connector_config(
            config, worker_values=self.config.values,
            capabilities=self._worker.transport.capabilities,
            transport_name=self.config.transport_name)

    # -- changes ---------------------------------------------------------------------------

    def create_connector(self, config: Mapping[str, Any], *,
                         initial_state: State | str = State.RUNNING,
                         origin: str = API) -> ConnectorInfo:
        """Validate ``config`` and create the connector in the cluster; the leader
        places it. Of two creates of one name through any workers, the one whose record
        comes first in the config log wins.

        Raises:
            ConfigError: The config is invalid.
            ConnectorExistsError: The name exists (or another create of it came first).

        """
        target = target_state(initial_state)
        config = written_config(config)
        self.validate_connector_config(config).raise_if_invalid()
        name = str(config["name"]).strip()
        config["name"] = name
        outcome = self._append({"kind": "create", "name": name, "config": config,
                                "target": target.value, "origin": origin})
        if outcome == outcomes.EXISTS:
            raise ConnectorExistsError(f"connector {name!r} already exists; delete it or "
                                       "update its config", connector=name)
        return self.connector_info(name)

    def put_connector_config(self, name: str, config: Mapping[str, Any], *,
                             origin: str | None = None) -> tuple[ConnectorInfo, bool]:
        """Create ``name``, or replace its config (the cluster restarts it); of two
        concurrent puts, the later record in the config log is the config everywhere.

        Returns:
            The connector's info and whether it was created.

        Raises:
            ConfigError: The config is invalid, or names another connector.

        """
        config = self._checked(name, config)
        outcome = self._append({"kind": "put", "name": name, "config": config,
                                "origin": origin})
        return self.connector_info(name), outcome == outcomes.CREATED

    def _checked(self, name: str, config: Mapping[str, Any]) -> dict[str, Any]:
        config = written_config(config)
        given = str(config.get("name") or name).strip()
        if given != name:
            raise ConfigError(f"the config's name {given!r} does not match the connector "
                              f"{name!r}; remove name or make it match", key="name")
        config["name"] = name
        self.validate_connector_config(config).raise_if_invalid()
        return config

    def patch_connector_config(self, name: str, patch: Mapping[str, Any]) -> ConnectorInfo:
        """Change some keys (``None`` removes one) of the config as it is in the log;
        if another change lands first, the patch is applied again to that one
        (compare-and-set on the config's version), so no change is lost.

        Raises:
            ConnectorNotFoundError: No such connector.
            ConfigError: The result is invalid.
            ConnectError: Other changes kept landing first.

        """
        for _ in range(_PATCH_ATTEMPTS):
            state = self._connector(name)
            merged = dict(state.config)
            for key, value in patch.items():
                if value is None:
                    merged.pop(str(key), None)
                else:
                    merged[str(key)] = value
            merged = self._checked(name, merged)
            outcome = self._append({"kind": "put", "name": name, "config": merged,
                                    "if_version": state.version})
            if outcome == outcomes.CONFLICT:
                continue
            return self.connector_info(name)
        raise ConnectError(f"connector {name!r} changed {_PATCH_ATTEMPTS} times while this "
                           "patch was being applied; try again", connector=name)

    def _target(self, name: str, target: State) -> None:
        self._connector(name)
        outcome = self._append({"kind": "target", "name": name, "target": target.value})
        if outcome == outcomes.MISSING:
            raise ConnectorNotFoundError(f"no connector named {name!r}", connector=name)
        if outcome == outcomes.STOPPED:
            raise ConnectorStateError(f"connector {name!r} is stopped; resume it first",
                                      connector=name)

    def pause_connector(self, name: str) -> None:
        """Pause the connector on every worker running part of it.

        Raises:
            ConnectorNotFoundError: No such connector.
            ConnectorStateError: It is stopped (resume it instead).

        """
        self._target(name, State.PAUSED)

    def resume_connector(self, name: str) -> None:
        """Resume a paused connector, or start a stopped one."""
        self._target(name, State.RUNNING)

    def stop_connector(self, name: str) -> None:
        """Stop the connector and its tasks wherever they run; keep its config."""
        self._target(name, State.STOPPED)

    def restart_connector(self, name: str, *, include_tasks: bool = False,
                          only_failed: bool = False) -> ConnectorStatus:
        """Ask the workers running the connector (and, with ``include_tasks``, its
        tasks) to restart them (Kafka Connect's semantics for ``only_failed``).

        Returns:
            The status as this worker sees it once the request is in the log.

        Raises:
            ConnectorNotFoundError: No such connector.
            ConnectorStateError: The connector is stopped.

        """
        self._restart(name, None, include_tasks=include_tasks, only_failed=only_failed)
        return self.connector_status(name)

    def restart_task(self, name: str, task: int) -> None:
        """Ask the worker running task ``task`` to restart it.

        Raises:
            ConnectorNotFoundError: No such connector or task.
            ConnectorStateError: The connector is stopped.

        """
        state = self._connector(name)
        if state.target is not State.STOPPED and not 0 <= task < state.task_count:
            raise ConnectorNotFoundError(f"connector {name!r} has no task {task}",
                                         connector=name, task=task)
        self._restart(name, task)

    def _restart(self, name: str, task: int | None, *, include_tasks: bool = False,
                 only_failed: bool = False) -> None:
        self._connector(name)
        outcome = self._append({"kind": "restart", "name": name, "task": task,
                                "include_tasks": include_tasks, "only_failed": only_failed})
        if outcome == outcomes.MISSING:
            raise ConnectorNotFoundError(f"no connector named {name!r}", connector=name)
        if outcome == outcomes.STOPPED:
            raise ConnectorStateError(f"connector {name!r} is stopped; resume it",
                                      connector=name)

    def delete_connector(self, name: str) -> None:
        """Delete the connector from the cluster (its offsets are kept).

        Raises:
            ConnectorNotFoundError: No such connector.

        """
        self._connector(name)
        if self._append({"kind": "delete", "name": name}) == outcomes.MISSING:
            raise ConnectorNotFoundError(f"no connector named {name!r}", connector=name)
        if self._status.store is not None:
            self._status.store.delete(name)
        if self._active_topics is not None:
            self._active_topics.forget(name)

    # -- active topics (KIP-558) ---------------------------------------------------------

    def active_topics(self, name: str) -> list[str]:
        """The topics ``name``'s tasks produced to or consumed from, on any worker."""
        self._connector(name)
        if not self.config["topic.tracking.enable"]:
            raise DisabledByWorkerError("topic tracking is disabled; set "
                                        "topic.tracking.enable=true in the worker config",
                                        connector=name)
        assert self._active_topics is not None
        return self._active_topics.of(name)

    def reset_active_topics(self, name: str) -> None:
        """Forget ``name``'s active topics."""
        self._connector(name)
        for key in ("topic.tracking.enable", "topic.tracking.allow.reset"):
            if not self.config[key]:
                raise DisabledByWorkerError(
                    f"resetting active topics is disabled; set {key}=true in the worker "
                    "config", connector=name)
        assert self._active_topics is not None
        self._active_topics.reset(name)
        self._append({"kind": "topics", "name": name})

    # -- offsets -------------------------------------------------------------------------

    def _entry_of(self, state: ConnectorState) -> ConnectorEntry:
        return ConnectorEntry(name=state.name, config=dict(state.config), target=state.target,
                              origin=state.origin, kind=self._kind(state))

    def offsets(self, name: str) -> ConnectorOffsets:
        """The connector's committed offsets, as the transport has them now."""
        state = self._connector(name)
        return self._offset_admin().read(self._entry_of(state))

    def alter_offsets(self, name: str, offsets: Sequence[Mapping[str, Any]], *,
                      force: bool = False) -> bool:
        """Set some offsets of a connector that is stopped on every worker.

        Raises:
            ConnectorNotFoundError: No such connector.
            ConnectorStateError: It is not stopped, or a worker still runs part of it.
            ConfigError: An entry is malformed or refused by the connector.

        """
        if not offsets:
            raise ConfigError("no offsets given: list at least one partition and its offset "
                              "(to forget them all, reset the offsets instead)",
                              key="offsets", connector=name)
        state = self._stopped(name)
        return self._offset_admin().alter(self._entry_of(state), offsets)

    def reset_offsets(self, name: str, *, force: bool = False) -> bool:
        """Forget every offset of a connector that is stopped on every worker."""
        state = self._stopped(name)
        return self._offset_admin().reset(self._entry_of(state))

    def _stopped(self, name: str) -> ConnectorState:
        """The connector, once stopped and given up by every live worker.

        Raises:
            ConnectorStateError: Its target is not STOPPED, or a worker still runs part
                of it after ``cluster.write.timeout.ms``.

        """
        state = self._connector(name)
        if state.target is not State.STOPPED:
            raise ConnectorStateError(
                f"offsets of connector {name!r} can be changed only while it is stopped "
                f"(its target state is {state.target.value}); stop it first",
                connector=name)
        deadline = time.monotonic() + self._timeout
        while True:
            with self._state_lock:
                holders = self._state.assignment.items_of(name)
                alive = {w: m.session for w, m in self._state.alive.items()}
                pending = sorted({w for item, (w, s, _) in self._state.released.items()
                                  if (item == name or (isinstance(item, tuple)
                                      and item[0] == name)) and alive.get(w) == s})
            busy = sorted(set(holders) | set(pending))
            if not busy:
                return state
            if time.monotonic() > deadline:
                raise ConnectorStateError(
                    f"connector {name!r} is stopped but workers {busy} have not given it up "
                    "yet; try again", connector=name)
            time.sleep(0.05)

    def _offset_admin(self) -> OffsetAdmin:
        self.open()
        assert self._worker is not None
        return OffsetAdmin(self._worker)

    # -- events from connectors and tasks (their threads) → the scheduler ------------------

    def reconfiguration_requested(self, name: str, generation: int) -> None:
        """A connector running here asked for its task configs to be generated again."""
        self._reconfigure.add(name)
        self._wake.set()

    def connector_failed(self, name: str, generation: int, error: BaseException) -> None:
        """A connector instance running here failed."""
        self._submit(lambda: self._connector_failed(name, generation, error))

    def connector_start_failed(self, entry: ConnectorEntry) -> None:
        """A connector instance could not start here: schedule its restart."""
        self._schedule_connector_restart(entry)

    def _connector_failed(self, name: str, generation: int, error: BaseException) -> None:
        with self._lock:
            entry = self._work.entries.get(name) if self._work is not None else None
            if entry is None or entry.generation != generation or entry.runner is None:
                return
            entry.runner.failed(error)
            self._status.connector(entry, State.FAILED, entry.runner.trace)
            self._schedule_connector_restart(entry)

    def _schedule_connector_restart(self, entry: ConnectorEntry) -> None:
        delay, failures = connector_restart_delay(entry, self.config)
        if delay is None:
            return
        name, generation = entry.name, entry.generation
        _log.info("connector %r: restarting in %.1f s (failure %d in a row)", name, delay,
                  failures)

        def restart() -> None:
            with self._lock:
                work = self._work
                current = work.entries.get(name) if work is not None else None
                if work is None or current is None or current.generation != generation:
                    return
                work.versions.pop(name, None)  # the next step starts it again
            self._wake.set()

        self._submit(restart, delay)

    def on_task_running(self, runner: TaskRunner) -> None:
        """A task runs (called on its thread; recorded on the scheduler's)."""
        self._submit(lambda: self._task_event(runner, None))

    def on_task_failed(self, runner: TaskRunner, error: BaseException) -> None:
        """A task failed (called on its thread; handled on the scheduler's)."""
        self._submit(lambda: self._task_event(runner, error))

    def on_task_stopped(self, runner: TaskRunner) -> None:
        """A task's thread ended after a stop (nothing to do)."""

    def _task_event(self, runner: TaskRunner, error: BaseException | None) -> None:
        with self._lock:
            work = self._work
            entry = work.entries.get(runner.id.connector) if work is not None else None
            if work is None or entry is None or entry.tasks.get(runner.id.task) is not runner:
                return
            number = runner.id.task
            self._status.task(entry, number, runner.state, runner.trace)
            if error is None:
                return
            if entry.runner is not None:
                entry.runner.task_failed(error)
            delay, failures = task_restart_delay(entry, runner, self.config)
            if delay is None:
                return
            _log.info("task %s: restarting in %.1f s (failure %d in a row)", runner.id, delay,
                      failures)

            def restart() -> None:
                with self._lock:
                    current = work.entries.get(runner.id.connector)
                    if current is None or current.tasks.get(number) is not runner:
                        return
                    work.task_versions.pop((runner.id.connector, number), None)
                self._wake.set()

            self._submit(restart, delay)

    def _submit(self, function: Callable[[], None], delay: float = 0.0) -> None:
        scheduler = self._scheduler
        if scheduler is not None:
            scheduler.submit(function, delay)
