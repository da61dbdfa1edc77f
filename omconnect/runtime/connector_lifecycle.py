"""Starting, stopping and restarting one worker's connector instances and their tasks:
:class:`ConnectorLifecycle`.

The herder decides *what* should run (its API and target states); this module does the
running: it resolves a connector's config, starts its :class:`ConnectorRunner`, asks it
for task configs and starts a :class:`TaskRunner` per task, and stops them together.
Every method runs under the herder's lock. What happens later on other threads (a
connector asks for reconfiguration, fails, or must be restarted after a failure) is
handed back to the herder through :class:`LifecycleEvents`, which checks the entry's
``generation`` so that an event of an instance since replaced is ignored.
"""

from __future__ import annotations

import logging
import traceback
from collections.abc import Sequence
from typing import Protocol

from omconnect.config.log_scrubbing import KNOWN_SECRETS
from omconnect.config.secrets import secret_values
from omconnect.connector.lifecycle import State
from omconnect.runtime.connector_config import (
    ConnectorSettings,
    connector_kind,
    load_connector_class,
    resolve_connector_config,
)
from omconnect.runtime.connector_entry import ConnectorEntry
from omconnect.runtime.connector_runner import ConnectorRunner
from omconnect.runtime.status_records import StatusRecorder
from omconnect.runtime.task_runner import TaskListener, TaskRunner
from omconnect.runtime.worker import Worker

__all__ = ["ConnectorLifecycle", "LifecycleEvents"]

_log = logging.getLogger(__name__)


class LifecycleEvents(TaskListener, Protocol):
    """What the herder is told by the connectors and tasks it runs (from their threads,
    or from :class:`ConnectorLifecycle` for a connector that failed to start).
    """

    def reconfiguration_requested(self, name: str, generation: int) -> None:
        """The connector asked for its task configs to be read again."""

    def connector_failed(self, name: str, generation: int, error: BaseException) -> None:
        """The running connector instance failed."""

    def connector_start_failed(self, entry: ConnectorEntry) -> None:
        """The connector instance could not start (its status says why)."""


class ConnectorLifecycle:
    """Runs connectors on ``worker`` (see the module docstring).

    Args:
        worker: Where task runners are built.
        status: Where state changes are recorded.
        events: Told of later events (the herder).
        secrets_owner: Registers entries' secret values with
            :data:`~omconnect.config.log_scrubbing.KNOWN_SECRETS` under
            ``(secrets_owner, name)``.

    """

    def __init__(self, worker: Worker, status: StatusRecorder, events: LifecycleEvents,
                 secrets_owner: int) -> None:
        self.worker = worker
        self._status = status
        self._events = events
        self._owner = secrets_owner

    def start(self, entry: ConnectorEntry, *, with_tasks: bool = True) -> None:
        """Start the connector (and its tasks) per the entry's target state; a failure
        to start is recorded and reported, not raised.
        """
        entry.generation += 1
        generation = entry.generation
        name = entry.name
        if entry.target is State.STOPPED:
            entry.state, entry.trace = State.STOPPED, None
            self._status.connector(entry, State.STOPPED)
            return
        runner = None
        entry.resolved = None
        events = self._events
        try:
            resolved = resolve_connector_config(entry.config)
            self._set_secrets(entry, secret_values(resolved))
            connector_class = load_connector_class(str(resolved.get("connector.class")))
            entry.kind = connector_kind(connector_class)
            connector = connector_class()
            self._set_secrets(entry, secret_values(resolved, connector.config_def()))
            settings = ConnectorSettings.parse(
                resolved, entry.kind, self.worker.config.values,
                group=self.worker.config.sink_group(name, resolved))
            entry.resolved = resolved
            runner = ConnectorRunner(
                connector, settings,
                request_reconfiguration=lambda: events.reconfiguration_requested(
                    name, generation),
                report_failure=lambda error: events.connector_failed(name, generation, error))
            entry.runner = runner
            runner.start(paused=entry.target is State.PAUSED)
            entry.task_configs = runner.task_configs()
        except Exception as exc:
            trace = "".join(traceback.format_exception(exc))
            _log.error("connector %r failed to start: %s", name, entry.scrubbed(trace))
            if runner is None:
                entry.state, entry.trace = State.FAILED, trace
            self._status.connector(entry, State.FAILED, entry.connector_trace)
            events.connector_start_failed(entry)
            return
        self._status.connector(entry, runner.state)
        if with_tasks:
            self.start_tasks(entry, range(len(entry.task_configs)))

    def forget_secrets(self, name: str) -> None:
        """Stop scrubbing the connector's secret values from log lines."""
        KNOWN_SECRETS.forget((self._owner, name))

    def _set_secrets(self, entry: ConnectorEntry, values: list[str]) -> None:
        """Keep the entry's secret values, to scrub its traces and (through
        :data:`KNOWN_SECRETS`) every log line.
        """
        entry.secrets = values
        KNOWN_SECRETS.set((self._owner, entry.name), values)

    def start_tasks(self, entry: ConnectorEntry, numbers: Sequence[int] | range) -> None:
        """Start tasks ``numbers`` of the running connector; one that cannot be created
        fails the connector.
        """
        assert entry.runner is not None
        paused = entry.target is State.PAUSED
        for number in numbers:
            try:
                runner = self.worker.task_runner(entry.runner, number,
                                                 entry.task_configs[number], self._events,
                                                 paused=paused)
            except Exception as exc:
                _log.error("connector %r: cannot create task %d: %s", entry.name, number, exc)
                entry.runner.failed(exc)
                self._status.connector(entry, State.FAILED, entry.runner.trace)
                return
            entry.tasks[number] = runner
            runner.start()

    @staticmethod
    def halt(runners: Sequence[TaskRunner]) -> None:
        """Stop ``runners`` together and wait for them (within the graceful timeout)."""
        for runner in runners:
            runner.stop()
        for runner in runners:
            runner.join()

    def halt_entry(self, entry: ConnectorEntry, *, keep_runner: bool = False) -> None:
        """Stop the entry's tasks and connector instance."""
        entry.generation += 1
        self.halt(list(entry.tasks.values()))
        entry.tasks.clear()
        if entry.runner is not None:
            entry.runner.stop()
            if not keep_runner:
                entry.runner = None

    def restart_connector_instance(self, entry: ConnectorEntry) -> None:
        """Restart the connector alone; its tasks too if their configs changed."""
        before = list(entry.task_configs)
        tasks = entry.tasks
        entry.tasks = {}
        if entry.runner is not None:
            entry.runner.stop()
            entry.runner = None
        entry.generation += 1
        try:
            self.start(entry, with_tasks=False)
        finally:
            if entry.task_configs == before and entry.runner is not None \
                    and entry.connector_state is not State.FAILED:
                entry.tasks = tasks
            else:
                self.halt(list(tasks.values()))
                if entry.runner is not None and entry.connector_state is not State.FAILED:
                    self.start_tasks(entry, range(len(entry.task_configs)))

    def restart_task(self, entry: ConnectorEntry, number: int) -> None:
        """Stop task ``number`` and start it again (if its connector runs)."""
        old = entry.tasks.pop(number, None)
        if old is not None:
            self.halt([old])
        if entry.runner is None or entry.connector_state is State.FAILED:
            return
        if number < len(entry.task_configs):
            self.start_tasks(entry, [number])

    def reconfigure(self, entry: ConnectorEntry) -> None:
        """Read the running connector's task configs again; restart its tasks if they
        changed.
        """
        assert entry.runner is not None
        try:
            configs = entry.runner.task_configs()
        except Exception as exc:
            _log.error("connector %r: task_configs() failed on reconfiguration: %s",
                       entry.name, exc)
            self._status.connector(entry, State.FAILED, entry.runner.trace)
            return
        if configs == entry.task_configs:
            return
        _log.info("connector %r: task configs changed; restarting its tasks", entry.name)
        self.halt(list(entry.tasks.values()))
        entry.tasks.clear()
        entry.task_configs = configs
        self.start_tasks(entry, range(len(configs)))
