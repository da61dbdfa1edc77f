"""What one worker of a cluster runs, kept in line with its share of the assignment:
:class:`LocalWork`.

In a cluster a worker may run a connector's instance, some of its tasks, both or
neither; each is started from what the config log says (the connector's config as
written, its task configs and task class) and stopped when the assignment takes it away.
Connector instances start through
:class:`~omconnect.runtime.connector_lifecycle.ConnectorLifecycle`; a task starts from
the task configs in the log, resolved on this worker (``${env:...}``/``${file:...}``
references are resolved where the task runs, as Kafka Connect's config providers are).

Every method runs under the herder's lock, on its thread.
"""

from __future__ import annotations

import importlib
import logging
import traceback
from collections.abc import Iterable
from typing import Any

import attrs

from omconnect.config.log_scrubbing import KNOWN_SECRETS
from omconnect.config.providers import resolve_references
from omconnect.config.secrets import secret_values
from omconnect.connector.lifecycle import State
from omconnect.connector.task import Task
from omconnect.errors import ConfigError, ConnectError
from omconnect.runtime.config_store import API
from omconnect.runtime.connector_config import (
    ConnectorSettings,
    connector_kind,
    load_connector_class,
    resolve_connector_config,
)
from omconnect.runtime.connector_entry import ConnectorEntry, kind_of
from omconnect.runtime.connector_lifecycle import ConnectorLifecycle, LifecycleEvents
from omconnect.runtime.distributed.assignment import TaskKey
from omconnect.runtime.distributed.cluster_state import ConnectorState, RestartRequest
from omconnect.runtime.status_records import StatusRecorder
from omconnect.runtime.task_config_display import as_written
from omconnect.runtime.task_runner import TaskId, TaskRunner
from omconnect.runtime.worker import Worker

__all__ = ["GeneratedTasks", "LocalWork", "task_class_path"]

_log = logging.getLogger(__name__)


@attrs.frozen(kw_only=True)
class GeneratedTasks:
    """Task configs a connector instance generated here, to be written to the log.

    Attributes:
        name: The connector.
        version: The config version they come from.
        task_class: The task class, ``module:Qualified.Name``.
        configs: The task configs as written (references restored).

    """

    name: str
    version: int
    task_class: str
    configs: list[dict[str, Any]]


@attrs.frozen
class _Origin:
    """A task's connector as the config log describes it (no instance runs here)."""

    name: str
    settings: ConnectorSettings
    cls: type[Task]

    def task_class(self) -> type[Task]:
        return self.cls


def task_class_path(cls: type) -> str:
    """``module:Qualified.Name`` of ``cls``."""
    return f"{cls.__module__}:{cls.__qualname__}"


def _load_task_class(path: str) -> type[Task]:
    module, _, qualified = path.partition(":")
    target: Any = importlib.import_module(module)
    for part in qualified.split("."):
        target = getattr(target, part)
    if not (isinstance(target, type) and issubclass(target, Task)):
        raise ConnectError(f"task class {path} is not a Task")
    return target


class LocalWork:
    """The connector instances and tasks running on this worker.

    Args:
        worker: Builds task runners.
        status: Records state changes in the cluster's status store.
        events: Told of connector and task events (the herder).
        secrets_owner: Key of this worker's entries in
            :data:`~omconnect.config.log_scrubbing.KNOWN_SECRETS`.

    """

    def __init__(self, worker: Worker, status: StatusRecorder, events: LifecycleEvents,
                 secrets_owner: int) -> None:
        self.worker = worker
        self.entries: dict[str, ConnectorEntry] = {}
        self.versions: dict[str, int] = {}
        """Config version of each connector instance running here."""
        self.task_versions: dict[TaskKey, int] = {}
        """Task-config version of each task running here."""
        self.handled_restarts: dict[str, int] = {}
        self.lifecycle = ConnectorLifecycle(worker, status, events, secrets_owner)
        self._status = status
        self._events = events
        self._owner = secrets_owner
        self.task_stops = 0
        """Tasks stopped since this worker started (restarts included)."""

    # -- what runs ----------------------------------------------------------------------

    def running_connectors(self) -> set[str]:
        """Connector instances running here."""
        return {name for name, e in self.entries.items() if e.runner is not None}

    def running_tasks(self) -> set[TaskKey]:
        """Tasks running here."""
        return {(name, n) for name, e in self.entries.items() for n in e.tasks}

    def runners(self) -> list[TaskRunner]:
        """Every task runner here."""
        return [r for e in self.entries.values() for r in e.tasks.values()]

    def _entry(self, state: ConnectorState) -> ConnectorEntry:
        entry = self.entries.get(state.name)
        if entry is None:
            entry = self.entries[state.name] = ConnectorEntry(
                name=state.name, config=dict(state.config), target=state.target,
                origin=state.origin or API, kind=kind_of(state.config))
            # Restarts asked for before anything of it ran here are not this start's.
            self.handled_restarts[state.name] = \
                state.restarts[-1].seq if state.restarts else 0
        else:
            entry.config, entry.target = dict(state.config), state.target
        return entry

    def _forget_if_idle(self, name: str) -> None:
        entry = self.entries.get(name)
        if entry is not None and entry.runner is None and not entry.tasks \
                and name not in self.versions:
            del self.entries[name]
            self.handled_restarts.pop(name, None)
            KNOWN_SECRETS.forget((self._owner, name))

    # -- connector instances --------------------------------------------------------------

    def start_connector(self, state: ConnectorState) -> GeneratedTasks | None:
        """Start (or restart) ``state``'s connector instance here.

        Returns:
            The task configs it generated, or ``None`` when it failed to start (its
            status says why; the herder's restart policy applies).

        """
        self.stop_connector(state.name)
        entry = self._entry(state)
        entry.task_configs = []
        self.lifecycle.start(entry, with_tasks=False)
        self.versions[state.name] = state.version
        if entry.runner is None or entry.connector_state is State.FAILED:
            return None
        return self.generated(entry, state.version)

    def generated(self, entry: ConnectorEntry, version: int) -> GeneratedTasks | None:
        """What the running instance of ``entry`` generates now (``None``: it failed)."""
        runner = entry.runner
        if runner is None:
            return None
        if not entry.task_configs:
            try:
                entry.task_configs = runner.task_configs()
            except Exception:
                self._status.connector(entry, State.FAILED, runner.trace)
                return None
        return GeneratedTasks(
            name=entry.name, version=version,
            task_class=task_class_path(runner.task_class()),
            configs=[as_written(c, entry.resolved) for c in entry.task_configs])

    def regenerate(self, name: str) -> GeneratedTasks | None:
        """Ask the running instance of ``name`` for its task configs again (it asked for
        a reconfiguration).
        """
        entry = self.entries.get(name)
        if entry is None or entry.runner is None or name not in self.versions:
            return None
        try:
            entry.task_configs = entry.runner.task_configs()
        except Exception:
            self._status.connector(entry, State.FAILED, entry.runner.trace)
            return None
        return self.generated(entry, self.versions[name])

    def stop_connector(self, name: str, *, destroyed: bool = False) -> None:
        """Stop the connector instance of ``name`` here (calling ``on_destroyed`` when
        it was deleted).
        """
        self.versions.pop(name, None)
        entry = self.entries.get(name)
        if entry is None:
            return
        runner, entry.runner = entry.runner, None
        entry.generation += 1
        entry.task_configs = []
        entry.state, entry.trace = State.UNASSIGNED, None
        if runner is not None:
            runner.stop(state=State.UNASSIGNED)
            if destroyed:
                runner.destroyed()
        self._forget_if_idle(name)

    def set_target(self, state: ConnectorState) -> None:
        """Pause or resume what runs here of ``state``'s connector."""
        entry = self.entries.get(state.name)
        if entry is None:
            return
        entry.config, entry.target = dict(state.config), state.target
        pause = state.target is State.PAUSED
        if entry.runner is not None:
            before = entry.runner.state
            (entry.runner.pause if pause else entry.runner.resume)()
            if entry.runner.state is not before:
                self._status.connector(entry, entry.runner.state)
        for number, runner in entry.tasks.items():
            if runner.paused != pause:
                (runner.pause if pause else runner.resume)()
                self._status.task(entry, number, runner.state, runner.trace)

    # -- tasks ------------------------------------------------------------------------------

    def start_task(self, state: ConnectorState, number: int) -> None:
        """Start task ``number`` of ``state``'s connector here from its config in the log
        (a failure to start is recorded as its FAILED status).
        """
        self.stop_tasks([(state.name, number)])
        entry = self._entry(state)
        assert state.task_version is not None and state.task_class is not None
        self.task_versions[(state.name, number)] = state.task_version
        try:
            resolved = resolve_connector_config(state.config)
            self._remember_secrets(entry, secret_values(resolved))
            connector_class = load_connector_class(str(resolved.get("connector.class")))
            entry.kind = connector_kind(connector_class)
            self._remember_secrets(
                entry, secret_values(resolved, connector_class().config_def()))
            settings = ConnectorSettings.parse(
                resolved, entry.kind, self.worker.config.values,
                group=self.worker.config.sink_group(state.name, resolved))
            task_config, errors = resolve_references(state.task_configs[number])
            if errors:
                raise ConfigError.from_errors(
                    errors, what=f"references in task {number} of connector {state.name!r}")
            origin = _Origin(state.name, settings, _load_task_class(state.task_class))
            runner = self.worker.task_runner(origin, number, dict(task_config),
                                             self._events,
                                             paused=state.target is State.PAUSED)
        except Exception as exc:
            trace = "".join(traceback.format_exception(exc))
            _log.error("connector %r: cannot start task %d here: %s", state.name, number,
                       entry.scrubbed(str(exc)))
            self._status.task(entry, number, State.FAILED, trace)
            return
        entry.tasks[number] = runner
        runner.start()

    def stop_tasks(self, tasks: Iterable[TaskKey]) -> None:
        """Stop these tasks here, together (within the graceful timeout)."""
        stopping: list[tuple[ConnectorEntry, int, TaskRunner]] = []
        for name, number in tasks:
            entry = self.entries.get(name)
            runner = entry.tasks.pop(number, None) if entry is not None else None
            self.task_versions.pop((name, number), None)
            if entry is not None and runner is not None:
                stopping.append((entry, number, runner))
        if not stopping:
            return
        self.lifecycle.halt([runner for _, _, runner in stopping])
        self.task_stops += len(stopping)
        for entry, _, runner in stopping:
            self.worker.release(TaskId(entry.name, runner.id.task))
            self._forget_if_idle(entry.name)

    def restart(self, state: ConnectorState, request: RestartRequest) -> None:
        """Carry out a restart request for what of ``state`` runs here."""
        entry = self.entries.get(state.name)
        if entry is None:
            return
        if request.task is None:
            if entry.runner is not None and (
                    not request.only_failed or entry.connector_state is State.FAILED):
                entry.failures.pop(None, None)
                self.start_connector(state)
            if not request.include_tasks:
                return
            numbers = [n for n, r in sorted(entry.tasks.items())
                       if not request.only_failed or r.state is State.FAILED]
        else:
            numbers = [request.task] if request.task in entry.tasks else []
        for number in numbers:
            entry.failures.pop(number, None)
            if number < len(state.task_configs):
                self.start_task(state, number)

    def _remember_secrets(self, entry: ConnectorEntry, values: list[str]) -> None:
        entry.secrets = values
        KNOWN_SECRETS.set((self._owner, entry.name), values)

    # -- the end ------------------------------------------------------------------------------

    def stop_all(self) -> None:
        """Stop every task and connector instance here, recording them UNASSIGNED."""
        self.lifecycle.halt(self.runners())
        for entry in list(self.entries.values()):
            for number in list(entry.tasks):
                self._status.task(entry, number, State.UNASSIGNED)
                self.worker.release(TaskId(entry.name, number))
            entry.tasks.clear()
            if entry.runner is not None:
                entry.runner.stop(state=State.UNASSIGNED)
                entry.runner = None
                self._status.connector(entry, State.UNASSIGNED)
            KNOWN_SECRETS.forget((self._owner, entry.name))
        self.entries.clear()
        self.versions.clear()
        self.task_versions.clear()
