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

Errors: :class:`~omconnect.errors.ConfigError` (400 in REST) for an invalid config or
request, naming the key; :class:`~omconnect.runtime.herder_errors.ConnectorNotFoundError`
(404); :class:`~omconnect.runtime.herder_errors.ConnectorExistsError` and
:class:`~omconnect.runtime.herder_errors.ConnectorStateError` (409).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from omconnect.config.log_scrubbing import KNOWN_SECRETS
from omconnect.config.providers import ResolvedConfig, resolve_references
from omconnect.config.secrets import scrub, secret_values
from omconnect.config.types import Password
from omconnect.connector.connector import SinkConnector, SourceConnector
from omconnect.connector.lifecycle import State
from omconnect.errors import ConfigError, ConnectError
from omconnect.records import TopicPartition
from omconnect.runtime.active_topics import ActiveTopics
from omconnect.runtime.config_store import (
    API,
    COMMAND_LINE,
    TARGET_STATES,
    ConfigStore,
    StatusStore,
)
from omconnect.runtime.connector_config import (
    ConfigValidation,
    ConnectorSettings,
    connector_kind,
    load_connector_class,
    resolve_connector_config,
    validate_connector_config,
    written_config,
)
from omconnect.runtime.connector_runner import ConnectorRunner
from omconnect.runtime.herder_errors import (
    ConnectorExistsError,
    ConnectorNotFoundError,
    ConnectorStateError,
    DisabledByWorkerError,
)
from omconnect.runtime.metrics import TaskMetricsSnapshot
from omconnect.runtime.plugin_listing import list_plugins
from omconnect.runtime.scheduler import Scheduler
from omconnect.runtime.sink_offsets import SinkOffsets, parse_sink_offsets
from omconnect.runtime.status import (
    ConnectorInfo,
    ConnectorOffsets,
    ConnectorStatus,
    PluginInfo,
    StateInfo,
    TaskInfo,
    TaskStatus,
)
from omconnect.runtime.task_runner import TaskRunner
from omconnect.runtime.worker import Worker
from omconnect.runtime.worker_config import WorkerConfig

__all__ = ["StandaloneHerder"]

_log = logging.getLogger(__name__)


@attrs.define
class _Entry:
    """What the herder knows about one connector."""

    name: str
    config: dict[str, Any]
    target: State
    origin: str = API
    kind: str = "unknown"
    runner: ConnectorRunner | None = None
    state: State = State.UNASSIGNED  # the connector's state when there is no runner
    trace: str | None = None
    tasks: dict[int, TaskRunner] = attrs.field(factory=dict)
    task_configs: list[dict[str, Any]] = attrs.field(factory=list)  # resolved; memory only
    resolved: ResolvedConfig | None = None  # the config the running instance started with
    secrets: list[str] = attrs.field(factory=list)  # its secret values, to scrub traces
    failures: dict[int | None, int] = attrs.field(factory=dict)
    generation: int = 0

    @property
    def connector_state(self) -> State:
        return self.runner.state if self.runner is not None else self.state

    @property
    def connector_trace(self) -> str | None:
        return self.runner.trace if self.runner is not None else self.trace


def _target_state(value: State | str) -> State:
    state = State(value.upper()) if isinstance(value, str) else value
    if state not in TARGET_STATES:
        raise ConfigError(f"initial state must be RUNNING, PAUSED or STOPPED, got "
                          f"{state.value}", key="initial_state")
    return state


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
        self._entries: dict[str, _Entry] = {}
        self._worker: Worker | None = None
        self._configs: ConfigStore | None = None
        self._statuses: StatusStore | None = None
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
                self._statuses = StatusStore(transport.kv_store(
                    self.config["status.storage.namespace"]))
                self._active_topics = ActiveTopics(
                    self._statuses, enabled=self.config["topic.tracking.enable"])
                worker = Worker(self.config, transport, active_topics=self._active_topics)
            except BaseException:
                transport.close()
                raise
            self._worker = worker
            self._scheduler = Scheduler()
            for name, stored in self._configs.all().items():
                if (self._command_line is not None and stored.origin == COMMAND_LINE
                        and name not in self._command_line):
                    self.left_alone.append(name)
                    continue
                self._entries[name] = _Entry(name=name, config=stored.config,
                                             target=stored.target, origin=stored.origin,
                                             kind=_kind_of(stored.config))

    def start(self) -> None:
        """Open, then start every stored connector in its target state."""
        with self._lock:
            self.open()
            if self._running:
                return
            self._running = True
            for entry in list(self._entries.values()):
                self._start_entry(entry)

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
                self._halt(runners)
                for entry in self._entries.values():
                    for number in list(entry.tasks):
                        self._record_task(entry, number, State.UNASSIGNED)
                    entry.tasks.clear()
                    if entry.runner is not None:
                        entry.runner.stop(state=State.UNASSIGNED)
                        entry.runner = None
                    if entry.target is not State.STOPPED:
                        self._record_connector(entry, State.UNASSIGNED)
                self._running = False
            for name in self._entries:
                KNOWN_SECRETS.forget((id(self), name))
            scheduler, self._scheduler = self._scheduler, None
            worker, self._worker = self._worker, None
            stores = [s for s in (self._configs, self._statuses) if s is not None]
            self._configs = self._statuses = self._active_topics = None
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
            return [TaskInfo(connector=name, id=n, config=_as_written(c, entry.resolved))
                    for n, c in enumerate(entry.task_configs)]

    def connector_status(self, name: str) -> ConnectorStatus:
        """A connector's state and its tasks' states, with traces of failures.

        Raises:
            ConnectorNotFoundError: No such connector.

        """
        with self._lock:
            entry = self._entry(name)
            if not self._running:
                return self._stored_status(entry)
            tasks = []
            for number in range(len(entry.task_configs)):
                runner = entry.tasks.get(number)
                if runner is None:
                    tasks.append(TaskStatus(connector=name, id=number, state=State.UNASSIGNED,
                                            worker_id=self.worker_id))
                else:
                    tasks.append(TaskStatus(connector=name, id=number, state=runner.state,
                                            worker_id=self.worker_id,
                                            trace=_scrubbed(runner.trace, entry),
                                            version=_version_of(runner.task)))
            return ConnectorStatus(
                name=name, type=entry.kind,
                connector=StateInfo(state=entry.connector_state, worker_id=self.worker_id,
                                    trace=_scrubbed(entry.connector_trace, entry),
                                    version=None if entry.runner is None
                                    else _version_of(entry.runner.connector)),
                tasks=tuple(tasks))

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
        target = _target_state(initial_state)
        config = written_config(config)
        self.validate_connector_config(config).raise_if_invalid()
        name = str(config["name"]).strip()
        with self._lock:
            if name in self._entries:
                raise ConnectorExistsError(f"connector {name!r} already exists; delete it or "
                                           "update its config", connector=name)
            assert self._configs is not None
            self._configs.put(name, config, target, origin)
            entry = self._entries[name] = _Entry(name=name, config=config, target=target,
                                                 origin=origin, kind=_kind_of(config))
            if self._running:
                self._start_entry(entry)
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
            self._halt_entry(entry)
            entry.config = config
            entry.kind = _kind_of(config)
            entry.failures.clear()
            if self._running:
                self._start_entry(entry)
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
            self._record_all(entry)

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
                self._start_entry(entry)
                return
            if entry.runner is not None:
                entry.runner.resume()
            for runner in entry.tasks.values():
                runner.resume()
            self._record_all(entry)

    def stop_connector(self, name: str) -> None:
        """Stop the connector and its tasks; keep its config (state STOPPED). Offsets can
        be changed only in this state.

        Raises:
            ConnectorNotFoundError: No such connector.

        """
        with self._lock:
            entry = self._entry(name)
            self._set_target(entry, State.STOPPED)
            self._halt_entry(entry)
            entry.task_configs = []
            entry.state, entry.trace = State.STOPPED, None
            self._record_connector(entry, State.STOPPED)

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
                self._halt_entry(entry)
                self._start_entry(entry)
            else:
                if restart_connector:
                    entry.failures.pop(None, None)
                    self._restart_connector_instance(entry)
                for number in numbers:
                    entry.failures.pop(number, None)
                    self._restart_task(entry, number)
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
            self._restart_task(entry, task)

    def delete_connector(self, name: str) -> None:
        """Stop and delete the connector (its ``on_destroyed`` hook runs). Its source
        offsets / group positions are kept (as Kafka Connect does).

        Raises:
            ConnectorNotFoundError: No such connector.

        """
        with self._lock:
            entry = self._entry(name)
            runner = entry.runner
            self._halt_entry(entry, keep_runner=True)
            if runner is not None:
                runner.destroyed()
            entry.generation += 1
            del self._entries[name]
            KNOWN_SECRETS.forget((id(self), name))
            assert self._configs is not None and self._statuses is not None
            self._configs.delete(name)
            self._statuses.delete(name)  # its active topics too
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
            assert self._worker is not None
            if entry.kind == "source":
                items = tuple({"partition": p, "offset": o}
                              for p, o in self._worker.offset_store(name).all())
            else:
                items = tuple(self._sink_offsets(entry).read())
            return ConnectorOffsets(name=name, type=entry.kind, offsets=items)

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
            assert self._worker is not None
            if entry.kind == "source":
                pairs = _source_offsets(offsets)
                handled = self._ask_connector(entry, pairs)
                self._worker.offset_store(name).write(pairs)
            else:
                positions = parse_sink_offsets(offsets)
                handled = self._ask_connector(entry, positions)
                self._sink_offsets(entry).commit(positions)
            return handled

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
            assert self._worker is not None
            if entry.kind == "source":
                store = self._worker.offset_store(name)
                handled = self._ask_connector(
                    entry, [(dict(partition), None) for partition, _ in store.all()])
                store.reset()
            else:
                sink = self._sink_offsets(entry)
                positions: dict[TopicPartition, int | None] = dict.fromkeys(
                    sink.committed_partitions())
                handled = self._ask_connector(entry, positions)
                sink.commit(positions)
            return handled

    def _ask_connector(
        self, entry: _Entry,
        offsets: list[tuple[dict[str, Any], dict[str, Any] | None]]
        | dict[TopicPartition, int | None],
    ) -> bool:
        """Run the connector's ``alter_offsets`` hook on a fresh instance; what it
        raises becomes a :class:`ConfigError` naming the connector.
        """
        resolved = resolve_connector_config(entry.config)
        connector = load_connector_class(str(resolved.get("connector.class")))()
        try:
            if isinstance(connector, SourceConnector) and isinstance(offsets, list):
                return bool(connector.alter_offsets(dict(resolved), offsets))
            if isinstance(connector, SinkConnector) and isinstance(offsets, dict):
                return bool(connector.alter_offsets(dict(resolved), offsets))
        except Exception as exc:
            reason = exc.message if isinstance(exc, ConnectError) else (
                str(exc) or type(exc).__name__)
            raise ConfigError(
                f"connector {entry.name!r} refused these offsets: "
                f"{scrub(reason, secret_values(resolved))}",
                key=exc.context.get("key") if isinstance(exc, ConnectError) else None,
                connector=entry.name) from exc
        return False

    def _sink_offsets(self, entry: _Entry) -> SinkOffsets:
        assert self._worker is not None
        values = resolve_connector_config(entry.config)
        return SinkOffsets(self._worker.transport, group=f"connect-{entry.name}",
                           topics=_list(values.get("topics")),
                           regex=values.get("topics.regex"))

    # -- internals (under the lock) --------------------------------------------------------

    def _entry(self, name: str) -> _Entry:
        self.open()
        entry = self._entries.get(name)
        if entry is None:
            raise ConnectorNotFoundError(f"no connector named {name!r}", connector=name)
        return entry

    def _require_running(self, entry: _Entry) -> None:
        if not self._running:
            raise ConnectorStateError("the herder is not running connectors",
                                      connector=entry.name)
        if entry.target is State.STOPPED:
            raise ConnectorStateError(f"connector {entry.name!r} is stopped; resume it",
                                      connector=entry.name)

    def _require_stopped(self, entry: _Entry, force: bool) -> None:
        if entry.target is State.STOPPED or (force and not self._running):
            return
        hint = "" if self._running else (
            "; or, when no worker runs it (e.g. after a crash), pass force=True")
        raise ConnectorStateError(
            f"offsets of connector {entry.name!r} can be changed only while it is stopped "
            f"(its target state is {entry.target.value}); stop it first{hint}",
            connector=entry.name)

    def _set_target(self, entry: _Entry, target: State) -> None:
        assert self._configs is not None
        if entry.target is not target:
            self._configs.put(entry.name, entry.config, target, entry.origin)
            entry.target = target

    def _start_entry(self, entry: _Entry, *, with_tasks: bool = True) -> None:
        """Start the connector (and its tasks) per the entry's target state."""
        assert self._worker is not None
        entry.generation += 1
        generation = entry.generation
        name = entry.name
        if entry.target is State.STOPPED:
            entry.state, entry.trace = State.STOPPED, None
            self._record_connector(entry, State.STOPPED)
            return
        runner = None
        entry.resolved = None
        try:
            resolved = resolve_connector_config(entry.config)
            self._set_secrets(entry, secret_values(resolved))
            connector_class = load_connector_class(str(resolved.get("connector.class")))
            entry.kind = connector_kind(connector_class)
            connector = connector_class()
            self._set_secrets(entry, secret_values(resolved, connector.config_def()))
            settings = ConnectorSettings.parse(resolved, entry.kind, self.config.values)
            entry.resolved = resolved
            runner = ConnectorRunner(
                connector, settings,
                request_reconfiguration=lambda: self._submit(
                    lambda: self._reconfigure(name, generation)),
                report_failure=lambda error: self._submit(
                    lambda: self._connector_failed(name, generation, error)))
            entry.runner = runner
            runner.start(paused=entry.target is State.PAUSED)
            entry.task_configs = runner.task_configs()
        except Exception as exc:
            import traceback

            _log.error("connector %r failed to start: %s", name,
                       _scrubbed("".join(traceback.format_exception(exc)), entry))
            if runner is None:
                entry.state = State.FAILED
                entry.trace = "".join(traceback.format_exception(exc))
            self._record_connector(entry, State.FAILED, entry.connector_trace)
            self._schedule_connector_restart(entry)
            return
        self._record_connector(entry, runner.state)
        if with_tasks:
            self._start_tasks(entry, range(len(entry.task_configs)))

    def _set_secrets(self, entry: _Entry, values: list[str]) -> None:
        """Keep the entry's secret values, to scrub its traces and (through
        :data:`KNOWN_SECRETS`) every log line.
        """
        entry.secrets = values
        KNOWN_SECRETS.set((id(self), entry.name), values)

    def _start_tasks(self, entry: _Entry, numbers: Sequence[int] | range) -> None:
        assert self._worker is not None and entry.runner is not None
        paused = entry.target is State.PAUSED
        for number in numbers:
            try:
                runner = self._worker.task_runner(entry.runner, number,
                                                  entry.task_configs[number], self,
                                                  paused=paused)
            except Exception as exc:
                _log.error("connector %r: cannot create task %d: %s", entry.name, number, exc)
                entry.runner.failed(exc)
                self._record_connector(entry, State.FAILED, entry.runner.trace)
                return
            entry.tasks[number] = runner
            runner.start()

    def _halt(self, runners: Sequence[TaskRunner]) -> None:
        """Stop ``runners`` together and wait for them (within the graceful timeout)."""
        for runner in runners:
            runner.stop()
        for runner in runners:
            runner.join()

    def _halt_entry(self, entry: _Entry, *, keep_runner: bool = False) -> None:
        """Stop the entry's tasks and connector instance."""
        entry.generation += 1
        self._halt(list(entry.tasks.values()))
        entry.tasks.clear()
        if entry.runner is not None:
            entry.runner.stop()
            if not keep_runner:
                entry.runner = None

    def _restart_connector_instance(self, entry: _Entry) -> None:
        """Restart the connector alone; its tasks too if their configs changed."""
        before = list(entry.task_configs)
        tasks = entry.tasks
        entry.tasks = {}
        if entry.runner is not None:
            entry.runner.stop()
            entry.runner = None
        entry.generation += 1
        try:
            self._start_entry(entry, with_tasks=False)
        finally:
            if entry.task_configs == before and entry.runner is not None \
                    and entry.connector_state is not State.FAILED:
                entry.tasks = tasks
            else:
                self._halt(list(tasks.values()))
                if entry.runner is not None and entry.connector_state is not State.FAILED:
                    self._start_tasks(entry, range(len(entry.task_configs)))

    def _restart_task(self, entry: _Entry, number: int) -> None:
        old = entry.tasks.pop(number, None)
        if old is not None:
            self._halt([old])
        if entry.runner is None or entry.connector_state is State.FAILED:
            return
        if number < len(entry.task_configs):
            self._start_tasks(entry, [number])

    def _reconfigure(self, name: str, generation: int) -> None:
        with self._lock:
            entry = self._entries.get(name)
            if entry is None or entry.generation != generation or entry.runner is None \
                    or not self._running:
                return
            if entry.connector_state not in (State.RUNNING, State.PAUSED):
                return
            try:
                configs = entry.runner.task_configs()
            except Exception as exc:
                _log.error("connector %r: task_configs() failed on reconfiguration: %s",
                           name, exc)
                self._record_connector(entry, State.FAILED, entry.runner.trace)
                return
            if configs == entry.task_configs:
                return
            _log.info("connector %r: task configs changed; restarting its tasks", name)
            self._halt(list(entry.tasks.values()))
            entry.tasks.clear()
            entry.task_configs = configs
            self._start_tasks(entry, range(len(configs)))

    def _connector_failed(self, name: str, generation: int, error: BaseException) -> None:
        with self._lock:
            entry = self._entries.get(name)
            if entry is None or entry.generation != generation or entry.runner is None:
                return
            entry.runner.failed(error)
            self._record_connector(entry, State.FAILED, entry.runner.trace)
            self._schedule_connector_restart(entry)

    def _schedule_connector_restart(self, entry: _Entry) -> None:
        policy = _policy(entry, self.config)
        failures = entry.failures.get(None, 0) + 1
        entry.failures[None] = failures
        delay = policy.next_delay(failures)
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
                self._halt_entry(current)
                self._start_entry(current)

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
            self._record_task(entry, number, runner.state, runner.trace)
            if error is None:
                return
            if entry.runner is not None:
                entry.runner.task_failed(error)
            policy = _policy(entry, self.config)
            if policy.recovered(time.time() - runner.metrics.started_at):
                entry.failures[number] = 0
            failures = entry.failures.get(number, 0) + 1
            entry.failures[number] = failures
            delay = policy.next_delay(failures)
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
                    self._restart_task(current, number)

            self._submit(restart, delay)

    def _submit(self, function: Any, delay: float = 0.0) -> None:
        scheduler = self._scheduler
        if scheduler is not None:
            scheduler.submit(function, delay)

    # -- status records -------------------------------------------------------------------------

    def _record_connector(self, entry: _Entry, state: State, trace: str | None = None) -> None:
        try:
            if self._statuses is not None:
                self._statuses.put_connector(entry.name, state, self.worker_id,
                                             _scrubbed(trace, entry))
        except Exception:
            _log.exception("recording the status of connector %r failed", entry.name)

    def _record_task(self, entry: _Entry, number: int, state: State,
                     trace: str | None = None) -> None:
        try:
            if self._statuses is not None:
                self._statuses.put_task(entry.name, number, state, self.worker_id,
                                        _scrubbed(trace, entry))
        except Exception:
            _log.exception("recording the status of task %s-%d failed", entry.name, number)

    def _record_all(self, entry: _Entry) -> None:
        self._record_connector(entry, entry.connector_state, entry.connector_trace)
        for number, runner in entry.tasks.items():
            self._record_task(entry, number, runner.state, runner.trace)

    def _stored_status(self, entry: _Entry) -> ConnectorStatus:
        assert self._statuses is not None
        stored = self._statuses.connector(entry.name) or {}
        state = State.STOPPED if entry.target is State.STOPPED else \
            State(stored.get("state", State.UNASSIGNED.value))
        connector = StateInfo(state=state, worker_id=stored.get("worker_id") or self.worker_id,
                              trace=stored.get("trace"))
        tasks = tuple(
            TaskStatus(connector=entry.name, id=n, state=State(t.get("state", "UNASSIGNED")),
                       worker_id=t.get("worker_id") or self.worker_id, trace=t.get("trace"))
            for n, t in sorted(self._statuses.tasks(entry.name).items()))
        return ConnectorStatus(name=entry.name, type=entry.kind, connector=connector,
                               tasks=() if entry.target is State.STOPPED else tasks)


def _policy(entry: _Entry, worker: WorkerConfig) -> Any:
    from omconnect.runtime.restart_policy import RestartPolicy

    if entry.runner is not None:
        return entry.runner.settings.restart
    try:
        return RestartPolicy.from_config(resolve_references(entry.config)[0], worker.values)
    except (TypeError, ValueError):  # e.g. a reference that no longer resolves
        return RestartPolicy.from_config({}, worker.values)


def _scrubbed(trace: str | None, entry: _Entry) -> str | None:
    """``trace`` without the secret values of the entry's resolved config."""
    return scrub(trace, entry.secrets) if trace and entry.secrets else trace


def _kind_of(config: Mapping[str, Any]) -> str:
    connector_class = resolve_references({"c": config.get("connector.class")})[0]["c"]
    try:
        return connector_kind(load_connector_class(str(connector_class)))
    except ConfigError:
        return "unknown"


def _as_written(task_config: Mapping[str, Any], resolved: ResolvedConfig | None
                ) -> dict[str, Any]:
    """A task config with each value copied from a connector config key that holds
    references shown as that key's references (Kafka Connect's reverse transform).
    """
    if not resolved or not resolved.references:
        return dict(task_config)
    out = {}
    for key, value in task_config.items():
        if key in resolved.references and _plain(value) == _plain(resolved.get(key)):
            out[key] = resolved.references[key]
        else:
            out[key] = value
    return out


def _plain(value: Any) -> Any:
    if isinstance(value, Password):
        return value.value()
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value if value is None or isinstance(value, str) else str(value)


def _list(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, list | tuple):
        return [str(v).strip() for v in value if str(v).strip()]
    return [part.strip() for part in str(value).split(",") if part.strip()]


def _source_offsets(offsets: Sequence[Mapping[str, Any]]
                    ) -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
    result = []
    for index, entry in enumerate(offsets):
        if not isinstance(entry, Mapping) or not isinstance(entry.get("partition"), Mapping):
            raise ConfigError(f"offsets[{index}] needs a 'partition' object (the source "
                              "partition)", key=f"offsets[{index}].partition")
        offset = entry.get("offset")
        if offset is not None and not isinstance(offset, Mapping):
            raise ConfigError(f"offsets[{index}].offset must be an object or null",
                              key=f"offsets[{index}].offset")
        result.append((dict(entry["partition"]), None if offset is None else dict(offset)))
    return result


def _version_of(plugin: Any) -> str | None:
    """A running connector's or task's ``version()``; ``None`` when it raises."""
    try:
        return str(plugin.version())
    except Exception:
        _log.debug("version() of %s raised", type(plugin).__qualname__, exc_info=True)
        return None
