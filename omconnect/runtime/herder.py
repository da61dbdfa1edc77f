"""The standalone herder: the Python API that runs and manages connectors on one worker.

Everything the CLI and the REST API do goes through :class:`StandaloneHerder`::

    with StandaloneHerder({"transport": "embedded", "embedded.path": "/var/lib/omc"}) as h:
        h.create_connector({"name": "lines", "connector.class": "FileStreamSource",
                            "file": "/tmp/in.txt", "topic": "lines"})
        print(h.connector_status("lines").to_dict())

Connector configs and target states live in the transport's key/value store
(``config.storage.namespace``), so a restarted worker resumes its connectors as they were
(running, paused or stopped); source offsets live there too (``offset.storage.namespace``).
The namespaces are the worker's own by default (see
:mod:`~omconnect.runtime.storage_namespaces`). A herder given ``command_line`` (what
``omconnect standalone`` does) runs the connectors named there and those created through
the API; a connector stored by an earlier run's command line and not named again is left
alone (stored, not run), as Kafka Connect's standalone worker runs only what it is given.

Configs are stored and shown as written: ``${env:...}``/``${file:...}`` references are
resolved each time a connector starts or restarts (so a rotated secret is picked up by a
restart) and before a config is validated; task configs, which connectors derive from the
resolved config, stay in memory and are shown with the values copied from the connector's
config as written. Traces of failures are recorded and returned with the connector's
secret values scrubbed (:mod:`omconnect.config.secrets`); those values are also registered
with :data:`~omconnect.config.log_scrubbing.KNOWN_SECRETS`, so a log handler carrying a
:class:`~omconnect.config.log_scrubbing.SecretScrubbingFilter` keeps them out of log lines.

Threads: every public method may be called from any thread; calls are serialised by one
lock, so what a caller reads is consistent. Task threads never call the herder directly:
failures and reconfiguration requests are handed to a background thread (the scheduler),
which also runs automatic restarts after their backoff.

The herder is the API; the work behind it lives by job: what it keeps per connector
(:mod:`~omconnect.runtime.connector_entry`), starting and stopping connectors and tasks
(:mod:`~omconnect.runtime.connector_lifecycle`), automatic restarts
(:mod:`~omconnect.runtime.restart_scheduling`), statuses
(:mod:`~omconnect.runtime.status_records`), offsets set by hand
(:mod:`~omconnect.runtime.offset_admin`) and task configs as shown
(:mod:`~omconnect.runtime.task_config_display`).

Errors: :class:`~omconnect.errors.ConfigError` (400 in REST) for an invalid config or
request, naming the key; :class:`~omconnect.runtime.herder_errors.ConnectorNotFoundError`
(404); :class:`~omconnect.runtime.herder_errors.ConnectorExistsError` and
:class:`~omconnect.runtime.herder_errors.ConnectorStateError` (409).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping, Sequence
from typing import Any

from omconnect.connector.lifecycle import State
from omconnect.errors import ConfigError
from omconnect.runtime.active_topics import ActiveTopics
from omconnect.runtime.config_store import (
    API,
    COMMAND_LINE,
    ConfigStore,
    StatusStore,
)
from omconnect.runtime.connector_config import (
    ConfigValidation,
    validate_connector_config,
    written_config,
)
from omconnect.runtime.connector_entry import ConnectorEntry, kind_of, target_state
from omconnect.runtime.connector_lifecycle import ConnectorLifecycle
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
from omconnect.runtime.task_config_display import as_written
from omconnect.runtime.task_runner import TaskRunner
from omconnect.runtime.worker import Worker
from omconnect.runtime.worker_config import WorkerConfig

__all__ = ["StandaloneHerder"]

_log = logging.getLogger(__name__)


class StandaloneHerder:
    """Runs connectors and their tasks on one worker, and manages them.

    Args:
        worker_config: The worker's settings (parsed now; a ``ConfigError`` names any bad
            key), or an already parsed :class:`~omconnect.runtime.WorkerConfig`.
        command_line: The names of the connectors given on a standalone command line:
            stored connectors that came from an earlier command line and are not among
            them are not loaded (``None``: load every stored connector).

    Opening the transport happens in :meth:`open` (implicitly in :meth:`start`). A herder
    that is opened but not started is an offline tool: it reads and changes stored
    configs and offsets without running anything (``omconnect offsets`` uses that).
    """

    def __init__(self, worker_config: WorkerConfig | Mapping[str, Any] | None = None, *,
                 command_line: Sequence[str] | None = None) -> None:
        self.config = worker_config if isinstance(worker_config, WorkerConfig) \
            else WorkerConfig.parse(worker_config)
        self._command_line = None if command_line is None else frozenset(command_line)
        self.left_alone: list[str] = []
        """Stored connectors of an earlier command line that this herder did not load."""
        self._lock = threading.RLock()
        self._entries: dict[str, ConnectorEntry] = {}
        self._worker: Worker | None = None
        self._lifecycle: ConnectorLifecycle | None = None
        self._configs: ConfigStore | None = None
        self._status = StatusRecorder(self.config.worker_id)
        self._active_topics: ActiveTopics | None = None
        self._scheduler: Scheduler | None = None
        self._running = False

    # -- lifecycle of the herder --------------------------------------------------------

    @property
    def worker_id(self) -> str:
        """This worker's id, as reported in statuses."""
        return self.config.worker_id

    @property
    def running(self) -> bool:
        """Whether :meth:`start` ran (connectors are being run here)."""
        return self._running

    def answers(self, timeout: float) -> bool:
        """Whether the herder takes a request within ``timeout`` seconds (its lock is free
        or freed in time): what ``GET /health`` asks.
        """
        if not self._lock.acquire(timeout=timeout):
            return False
        self._lock.release()
        return True

    def open(self) -> None:
        """Open the transport and the stores (idempotent); runs no connector."""
        with self._lock:
            if self._worker is not None:
                return
            transport = self.config.open_transport()
            try:
                self._configs = ConfigStore(transport.kv_store(
                    self.config["config.storage.namespace"]))
                statuses = self._status.store = StatusStore(transport.kv_store(
                    self.config["status.storage.namespace"]))
                self._active_topics = ActiveTopics(
                    statuses, enabled=self.config["topic.tracking.enable"])
                worker = Worker(self.config, transport, active_topics=self._active_topics)
            except BaseException:
                transport.close()
                raise
            self._worker = worker
            self._lifecycle = ConnectorLifecycle(worker, self._status, self, id(self))
            self._scheduler = Scheduler()
            for name, stored in self._configs.all().items():
                if (self._command_line is not None and stored.origin == COMMAND_LINE
                        and name not in self._command_line):
                    self.left_alone.append(name)
                    continue
                self._entries[name] = ConnectorEntry(name=name, config=stored.config,
                                             target=stored.target, origin=stored.origin,
                                             kind=kind_of(stored.config))

    def start(self) -> None:
        """Open, then start every stored connector in its target state."""
        with self._lock:
            self.open()
            if self._running:
                return
            self._running = True
            for entry in list(self._entries.values()):
                self._run.start(entry)

    def stop(self) -> None:
        """Stop every connector (configs and target states are kept), then close.

        Tasks are stopped together, so this takes at most about
        ``task.shutdown.graceful.timeout.ms``.
        """
        with self._lock:
            if self._worker is None:
                return
            if self._running:
                runners = [r for e in self._entries.values() for r in e.tasks.values()]
                self._run.halt(runners)
                for entry in self._entries.values():
                    for number in list(entry.tasks):
                        self._status.task(entry, number, State.UNASSIGNED)
                    entry.tasks.clear()
                    if entry.runner is not None:
                        entry.runner.stop(state=State.UNASSIGNED)
                        entry.runner = None
                    if entry.target is not State.STOPPED:
                        self._status.connector(entry, State.UNASSIGNED)
                self._running = False
            for name in self._entries:
                self._run.forget_secrets(name)
            scheduler, self._scheduler = self._scheduler, None
            worker, self._worker, self._lifecycle = self._worker, None, None
            stores = [s for s in (self._configs, self._status.store) if s is not None]
            self._configs = self._status.store = self._active_topics = None
        if scheduler is not None:
            scheduler.close()
        for store in stores:
            try:
                store.close()
            except Exception:
                _log.exception("closing a storage namespace failed")
        worker.close()

    close = stop

    def __enter__(self) -> StandaloneHerder:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # -- queries ------------------------------------------------------------------------

    def cluster(self) -> ClusterInfo:
        """A standalone worker is a cluster of its own: itself, leading."""
        with self._lock:
            connectors = sum(1 for e in self._entries.values() if e.runner is not None)
            tasks = sum(len(e.tasks) for e in self._entries.values())
        me = WorkerInfo(id=self.worker_id, leader=True, connectors=connectors, tasks=tasks)
        return ClusterInfo(mode="standalone", group_id=None, worker_id=self.worker_id,
                           leader=self.worker_id, workers=(me,))

    def connectors(self) -> list[str]:
        """The names of every connector, sorted."""
        with self._lock:
            self.open()
            return sorted(self._entries)

    def connector_info(self, name: str) -> ConnectorInfo:
        """A connector's config (as written, with its references) and task numbers.

        Raises:
            ConnectorNotFoundError: No such connector.

        """
        with self._lock:
            entry = self._entry(name)
            return ConnectorInfo(name=name, type=entry.kind, config=dict(entry.config),
                                 tasks=tuple(range(len(entry.task_configs))))

    def connector_config(self, name: str) -> dict[str, Any]:
        """A connector's config as written: references unresolved, literal secrets
        included (mask them for display).

        Raises:
            ConnectorNotFoundError: No such connector.

        """
        with self._lock:
            return dict(self._entry(name).config)

    def task_configs(self, name: str) -> list[TaskInfo]:
        """The configs of a connector's tasks; a value the connector copied from a key
        of its config that holds references is shown as written (as Kafka Connect does).

        Raises:
            ConnectorNotFoundError: No such connector.

        """
        with self._lock:
            entry = self._entry(name)
            return [TaskInfo(connector=name, id=n, config=as_written(c, entry.resolved))
                    for n, c in enumerate(entry.task_configs)]

    def connector_status(self, name: str) -> ConnectorStatus:
        """A connector's state and its tasks' states, with traces of failures.

        Raises:
            ConnectorNotFoundError: No such connector.

        """
        with self._lock:
            entry = self._entry(name)
            if not self._running:
                return self._status.stored(entry)
            return self._status.live(entry)

    def task_status(self, name: str, task: int) -> TaskStatus:
        """One task's state.

        Raises:
            ConnectorNotFoundError: No such connector or task.

        """
        for status in self.connector_status(name).tasks:
            if status.id == task:
                return status
        raise ConnectorNotFoundError(f"connector {name!r} has no task {task}",
                                     connector=name, task=task)

    def metrics(self) -> list[TaskMetricsSnapshot]:
        """A snapshot of every running task's metrics, by connector and task."""
        with self._lock:
            runners = [r for e in self._entries.values() for r in e.tasks.values()]
        return sorted((r.metrics.snapshot() for r in runners),
                      key=lambda s: (s.connector, s.task))

    @staticmethod
    def plugins(kinds: list[str] | None = None) -> list[PluginInfo]:
        """The installed plugins of ``kinds`` (connector, transport, converter, transform,
        predicate; default all).
        """
        return list_plugins(kinds)

    def validate_connector_config(self, config: Mapping[str, Any]) -> ConfigValidation:
        """Validate a connector config completely (nothing is created).

        References are resolved first; one that cannot be resolved is an error of its
        key. The result lists every problem per key; ``raise_if_invalid()`` turns it into
        a :class:`~omconnect.errors.ConfigError`.
        """
        self.open()
        assert self._worker is not None
        return validate_connector_config(
            config, worker_values=self.config.values,
            capabilities=self._worker.transport.capabilities,
            transport_name=self.config.transport_name)

    # -- changes --------------------------------------------------------------------------

    def create_connector(self, config: Mapping[str, Any],
                         *, initial_state: State | str = State.RUNNING,
                         origin: str = API) -> ConnectorInfo:
        """Validate ``config`` and create the connector; it starts at once (when the herder
        runs) in ``initial_state`` (RUNNING, PAUSED or STOPPED). The config is stored as
        written (a ``ResolvedConfig`` as its references), with its ``origin``
        (:data:`~omconnect.runtime.config_store.API` or ``COMMAND_LINE``).

        Raises:
            ConfigError: The config is invalid (every problem, per key); nothing started.
            ConnectorExistsError: A connector of that name exists.

        """
        target = target_state(initial_state)
        config = written_config(config)
        self.validate_connector_config(config).raise_if_invalid()
        name = str(config["name"]).strip()
        with self._lock:
            if name in self._entries:
                raise ConnectorExistsError(f"connector {name!r} already exists; delete it or "
                                           "update its config", connector=name)
            assert self._configs is not None
            self._configs.put(name, config, target, origin)
            entry = self._entries[name] = ConnectorEntry(name=name, config=config, target=target,
                                                 origin=origin, kind=kind_of(config))
            if self._running:
                self._run.start(entry)
            return self.connector_info(name)

    def put_connector_config(self, name: str, config: Mapping[str, Any], *,
                             origin: str | None = None) -> tuple[ConnectorInfo, bool]:
        """Create ``name`` with ``config``, or replace its config and restart it (in its
        target state). ``origin`` (default: API for a new connector, unchanged for an
        existing one) says where it came from.

        Returns:
            The connector's info, and whether it was created.

        Raises:
            ConfigError: The config is invalid, or names another connector.

        """
        config = written_config(config)
        given = str(config.get("name") or name).strip()
        if given != name:
            raise ConfigError(f"the config's name {given!r} does not match the connector "
                              f"{name!r}; remove name or make it match", key="name")
        config["name"] = name
        self.validate_connector_config(config).raise_if_invalid()
        with self._lock:
            entry = self._entries.get(name)
            if entry is None:
                return self.create_connector(config, origin=origin or API), True
            assert self._configs is not None
            if origin is not None:
                entry.origin = origin
            self._configs.put(name, config, entry.target, entry.origin)
            self._run.halt_entry(entry)
            entry.config = config
            entry.kind = kind_of(config)
            entry.failures.clear()
            if self._running:
                self._run.start(entry)
            return self.connector_info(name), False

    def patch_connector_config(self, name: str, patch: Mapping[str, Any]) -> ConnectorInfo:
        """Change some keys of a connector's config (a ``None`` value removes the key),
        then restart it as :meth:`put_connector_config` does.

        Raises:
            ConnectorNotFoundError: No such connector.
            ConfigError: The result is invalid.

        """
        with self._lock:
            merged = dict(self._entry(name).config)
        for key, value in patch.items():
            if value is None:
                merged.pop(str(key), None)
            else:
                merged[str(key)] = value
        info, _ = self.put_connector_config(name, merged)
        return info

    def pause_connector(self, name: str) -> None:
        """Pause: sources stop polling, sinks pause their partitions (state PAUSED).

        Raises:
            ConnectorNotFoundError: No such connector.
            ConnectorStateError: The connector is stopped (resume it instead).

        """
        with self._lock:
            entry = self._entry(name)
            if entry.target is State.STOPPED:
                raise ConnectorStateError(f"connector {name!r} is stopped; resume it first",
                                          connector=name)
            self._set_target(entry, State.PAUSED)
            if entry.runner is not None:
                entry.runner.pause()
            for runner in entry.tasks.values():
                runner.pause()
            self._status.everything(entry)

    def resume_connector(self, name: str) -> None:
        """Resume a paused connector, or start a stopped one.

        Raises:
            ConnectorNotFoundError: No such connector.

        """
        with self._lock:
            entry = self._entry(name)
            was = entry.target
            self._set_target(entry, State.RUNNING)
            if not self._running:
                return
            if was is State.STOPPED:
                self._run.start(entry)
                return
            if entry.runner is not None:
                entry.runner.resume()
            for runner in entry.tasks.values():
                runner.resume()
            self._status.everything(entry)

    def stop_connector(self, name: str) -> None:
        """Stop the connector and its tasks; keep its config (state STOPPED). Offsets can
        be changed only in this state.

        Raises:
            ConnectorNotFoundError: No such connector.

        """
        with self._lock:
            entry = self._entry(name)
            self._set_target(entry, State.STOPPED)
            self._run.halt_entry(entry)
            entry.task_configs = []
            entry.state, entry.trace = State.STOPPED, None
            self._status.connector(entry, State.STOPPED)

    def restart_connector(self, name: str, *, include_tasks: bool = False,
                          only_failed: bool = False) -> ConnectorStatus:
        """Restart the connector and, with ``include_tasks``, its tasks; with
        ``only_failed``, only those that are FAILED (Kafka Connect's semantics).

        Returns:
            The status after the restart.

        Raises:
            ConnectorNotFoundError: No such connector.
            ConnectorStateError: The connector is stopped, or the herder is not running.

        """
        with self._lock:
            entry = self._entry(name)
            self._require_running(entry)
            connector_failed = entry.connector_state is State.FAILED
            restart_connector = not only_failed or connector_failed
            numbers = [n for n, r in sorted(entry.tasks.items())
                       if include_tasks and (not only_failed or r.state is State.FAILED)]
            if restart_connector and include_tasks and not only_failed:
                entry.failures.clear()
                self._run.halt_entry(entry)
                self._run.start(entry)
            else:
                if restart_connector:
                    entry.failures.pop(None, None)
                    self._run.restart_connector_instance(entry)
                for number in numbers:
                    entry.failures.pop(number, None)
                    self._run.restart_task(entry, number)
            return self.connector_status(name)

    def restart_task(self, name: str, task: int) -> None:
        """Restart one task.

        Raises:
            ConnectorNotFoundError: No such connector or task.
            ConnectorStateError: The connector is stopped, or the herder is not running.

        """
        with self._lock:
            entry = self._entry(name)
            self._require_running(entry)
            if not 0 <= task < len(entry.task_configs):
                raise ConnectorNotFoundError(f"connector {name!r} has no task {task}",
                                             connector=name, task=task)
            entry.failures.pop(task, None)
            self._run.restart_task(entry, task)

    def delete_connector(self, name: str) -> None:
        """Stop and delete the connector (its ``on_destroyed`` hook runs). Its source
        offsets / group positions are kept (as Kafka Connect does).

        Raises:
            ConnectorNotFoundError: No such connector.

        """
        with self._lock:
            entry = self._entry(name)
            runner = entry.runner
            self._run.halt_entry(entry, keep_runner=True)
            if runner is not None:
                runner.destroyed()
            entry.generation += 1
            del self._entries[name]
            self._run.forget_secrets(name)
            assert self._configs is not None and self._status.store is not None
            self._configs.delete(name)
            self._status.store.delete(name)  # its active topics too
            if self._active_topics is not None:
                self._active_topics.forget(name)

    # -- active topics (KIP-558) ---------------------------------------------------------

    def active_topics(self, name: str) -> list[str]:
        """The topics ``name``'s tasks produced to or consumed from since it was created
        (or its active topics were last reset), sorted.

        Raises:
            ConnectorNotFoundError: No such connector.
            DisabledByWorkerError: ``topic.tracking.enable`` is false.

        """
        with self._lock:
            self._entry(name)
            if not self.config["topic.tracking.enable"]:
                raise DisabledByWorkerError("topic tracking is disabled; set "
                                            "topic.tracking.enable=true in the worker config",
                                            connector=name)
            assert self._active_topics is not None
            return self._active_topics.of(name)

    def reset_active_topics(self, name: str) -> None:
        """Forget ``name``'s active topics; its tasks record them again as they run.

        Raises:
            ConnectorNotFoundError: No such connector.
            DisabledByWorkerError: ``topic.tracking.enable`` or
                ``topic.tracking.allow.reset`` is false.

        """
        with self._lock:
            self._entry(name)
            for key in ("topic.tracking.enable", "topic.tracking.allow.reset"):
                if not self.config[key]:
                    raise DisabledByWorkerError(
                        f"resetting active topics is disabled; set {key}=true in the worker "
                        "config", connector=name)
            assert self._active_topics is not None
            self._active_topics.reset(name)

    # -- offsets -------------------------------------------------------------------------

    def offsets(self, name: str) -> ConnectorOffsets:
        """The connector's committed offsets (sources: per source partition; sinks: the
        group's position per topic partition).

        Raises:
            ConnectorNotFoundError: No such connector.

        """
        with self._lock:
            entry = self._entry(name)
            return self._offset_admin().read(entry)

    def alter_offsets(self, name: str, offsets: Sequence[Mapping[str, Any]],
                      *, force: bool = False) -> bool:
        """Set some offsets of a stopped connector (Kafka Connect's ``PATCH .../offsets``).

        The entries' shape is checked first (for sinks, Kafka Connect's rules: see
        :func:`~omconnect.runtime.sink_offsets.parse_sink_offsets`), then the
        connector's ``alter_offsets`` hook checks them; only then are they written.

        Args:
            name: The connector.
            offsets: ``{"partition": {...}, "offset": {...} | None}`` entries; ``None``
                resets that partition. For sinks, ``{"kafka_topic": t,
                "kafka_partition": p}`` and ``{"kafka_offset": n}``.
            force: On a herder that is only opened (an offline tool), allow it although
                the connector's target state is not STOPPED: the caller asserts that no
                worker runs the connector.

        Returns:
            Whether the connector's hook confirmed it handled them; ``False`` means
            offsets it keeps outside the runtime (if any) may need changing too.

        Raises:
            ConnectorNotFoundError: No such connector.
            ConnectorStateError: The connector is not stopped (Kafka Connect's rule).
            ConfigError: No entry was given, an entry is malformed, or the connector
                refused it (naming it).

        """
        if not offsets:
            raise ConfigError("no offsets given: list at least one partition and its offset "
                              "(to forget them all, reset the offsets instead)",
                              key="offsets", connector=name)
        with self._lock:
            entry = self._entry(name)
            self._require_stopped(entry, force)
            return self._offset_admin().alter(entry, offsets)

    def reset_offsets(self, name: str, *, force: bool = False) -> bool:
        """Forget every offset of a stopped connector: a source starts from scratch, a
        sink from the earliest message kept. ``force`` as for :meth:`alter_offsets`.
        The connector's ``alter_offsets`` hook is told first (every offset ``None``).

        Returns:
            As for :meth:`alter_offsets`.

        Raises:
            ConnectorNotFoundError: No such connector.
            ConnectorStateError: The connector is not stopped.
            ConfigError: The connector's hook refused the reset.

        """
        with self._lock:
            entry = self._entry(name)
            self._require_stopped(entry, force)
            return self._offset_admin().reset(entry)

    @property
    def _run(self) -> ConnectorLifecycle:
        """Starts and stops connectors (while the herder is open)."""
        assert self._lifecycle is not None, "the herder is not open"
        return self._lifecycle

    def _offset_admin(self) -> OffsetAdmin:
        assert self._worker is not None
        return OffsetAdmin(self._worker)

    # -- internals (under the lock) --------------------------------------------------------

    def _entry(self, name: str) -> ConnectorEntry:
        self.open()
        entry = self._entries.get(name)
        if entry is None:
            raise ConnectorNotFoundError(f"no connector named {name!r}", connector=name)
        return entry

    def _require_running(self, entry: ConnectorEntry) -> None:
        if not self._running:
            raise ConnectorStateError("the herder is not running connectors",
                                      connector=entry.name)
        if entry.target is State.STOPPED:
            raise ConnectorStateError(f"connector {entry.name!r} is stopped; resume it",
                                      connector=entry.name)

    def _require_stopped(self, entry: ConnectorEntry, force: bool) -> None:
        if entry.target is State.STOPPED or (force and not self._running):
            return
        hint = "" if self._running else (
            "; or, when no worker runs it (e.g. after a crash), pass force=True")
        raise ConnectorStateError(
            f"offsets of connector {entry.name!r} can be changed only while it is stopped "
            f"(its target state is {entry.target.value}); stop it first{hint}",
            connector=entry.name)

    def _set_target(self, entry: ConnectorEntry, target: State) -> None:
        assert self._configs is not None
        if entry.target is not target:
            self._configs.put(entry.name, entry.config, target, entry.origin)
            entry.target = target

    # -- events (connector and task threads) → scheduler --------------------------------

    def reconfiguration_requested(self, name: str, generation: int) -> None:
        """A connector asked for its task configs to be read again (handled on the
        scheduler's thread).
        """
        self._submit(lambda: self._reconfigure(name, generation))

    def connector_failed(self, name: str, generation: int, error: BaseException) -> None:
        """A running connector instance failed (handled on the scheduler's thread)."""
        self._submit(lambda: self._connector_failed(name, generation, error))

    def connector_start_failed(self, entry: ConnectorEntry) -> None:
        """A connector instance could not start: schedule its restart (under the lock)."""
        self._schedule_connector_restart(entry)

    def _reconfigure(self, name: str, generation: int) -> None:
        with self._lock:
            entry = self._entries.get(name)
            if entry is None or entry.generation != generation or entry.runner is None \
                    or not self._running:
                return
            if entry.connector_state in (State.RUNNING, State.PAUSED):
                self._run.reconfigure(entry)

    def _connector_failed(self, name: str, generation: int, error: BaseException) -> None:
        with self._lock:
            entry = self._entries.get(name)
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
                current = self._entries.get(name)
                if current is None or current.generation != generation or not self._running \
                        or current.target is State.STOPPED:
                    return
                self._run.halt_entry(current)
                self._run.start(current)

        self._submit(restart, delay)

    # -- task listener (task threads) → scheduler ---------------------------------------------

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
            entry = self._entries.get(runner.id.connector)
            if entry is None or entry.tasks.get(runner.id.task) is not runner:
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
                    current = self._entries.get(runner.id.connector)
                    if current is None or current.tasks.get(number) is not runner \
                            or not self._running or current.target is State.STOPPED:
                        return
                    self._run.restart_task(current, number)

            self._submit(restart, delay)

    def _submit(self, function: Any, delay: float = 0.0) -> None:
        scheduler = self._scheduler
        if scheduler is not None:
            scheduler.submit(function, delay)

