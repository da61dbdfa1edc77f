"""What source and sink task runners share: the thread, states, pause, stop and failure.

Threads: each task runs on a thread of its own (:meth:`TaskRunner.start`). The herder
calls :meth:`~TaskRunner.pause`, :meth:`~TaskRunner.resume` and :meth:`~TaskRunner.stop`
from its own thread; ``stop`` also calls the task's ``stop()`` there, so a task blocked in
``poll``/``put`` can return. :meth:`~TaskRunner.join` waits up to the graceful timeout; a
task still running after it is *abandoned*: what is safe is committed from the herder's
thread, and the old thread, whenever it wakes up, neither sends nor commits anything more.
"""

from __future__ import annotations

import abc
import logging
import threading
import time
import traceback
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

import attrs

from omconnect.connector.lifecycle import State
from omconnect.connector.task import Task
from omconnect.runtime.metrics import TaskMetrics
from omconnect.runtime.retry_with_tolerance import TaskInterrupted

if TYPE_CHECKING:
    from omconnect.runtime.active_topics import TaskTopics
    from omconnect.runtime.connector_config import ConnectorSettings
    from omconnect.runtime.source_offsets import SourceOffsetStore
    from omconnect.runtime.topic_creator import TopicCreator
    from omconnect.runtime.worker_config import WorkerConfig
    from omconnect.transport.spi import Transport

__all__ = ["TaskId", "TaskListener", "TaskRunner", "TaskSetup"]

_log = logging.getLogger(__name__)


@attrs.frozen(slots=True, order=True)
class TaskId:
    """A task: its connector's name and its number."""

    connector: str
    task: int

    def __str__(self) -> str:
        return f"{self.connector}-{self.task}"


class TaskListener(Protocol):
    """Told by task runners about their state changes (the herder). Called from the
    task's thread.
    """

    def on_task_running(self, runner: TaskRunner) -> None:
        """The task started (or resumed) and runs."""

    def on_task_failed(self, runner: TaskRunner, error: BaseException) -> None:
        """The task failed; ``runner.trace`` holds the trace."""

    def on_task_stopped(self, runner: TaskRunner) -> None:
        """The task's thread ended after a stop."""


@attrs.frozen(kw_only=True)
class TaskSetup:
    """Everything a task runner needs from the worker.

    Attributes:
        id: The task's id.
        task_config: The config the connector produced for this task.
        settings: The connector's parsed settings.
        worker: The worker's config.
        transport: The open transport.
        topics: The worker's topic creator.
        offsets: The connector's source offset store (source tasks).
        listener: Told about state changes.
        active_topics: Records the topics the task produces to or consumes from
            (``None``: not recorded).

    """

    id: TaskId
    task_config: Mapping[str, Any]
    settings: ConnectorSettings
    worker: WorkerConfig
    transport: Transport
    topics: TopicCreator
    offsets: SourceOffsetStore | None
    listener: TaskListener
    active_topics: TaskTopics | None = None


class TaskRunner(abc.ABC):
    """Runs one task on its own thread.

    Args:
        setup: What the runner needs from the worker.
        task: The task instance.
        paused: Start paused (the connector's target state is PAUSED).

    """

    kind: ClassVar[str] = "task"

    def __init__(self, setup: TaskSetup, task: Task, *, paused: bool = False) -> None:
        self.setup = setup
        self.id = setup.id
        self.task = task
        self.metrics = TaskMetrics(setup.id.connector, setup.id.task, self.kind)
        self.stopping = threading.Event()
        self.state = State.UNASSIGNED
        self.trace: str | None = None
        self.error: BaseException | None = None
        self.worker_id = setup.worker.worker_id
        self._paused = paused
        # Orders pause()/resume() (herder thread) with the task thread's own state changes:
        # without it a pause landing while the task starts left it RUNNING under a PAUSED
        # connector.
        self._state_lock = threading.Lock()
        self._abandoned = False
        self._task_stop_lock = threading.Lock()
        self._task_stopped = False
        self._task_started = False
        self._stop_deadline: float | None = None
        self._graceful_s = setup.worker["task.shutdown.graceful.timeout.ms"] / 1000.0
        self._thread = threading.Thread(target=self._run, name=f"omconnect-task-{setup.id}",
                                        daemon=True)

    # -- control, from the herder's thread --------------------------------------------

    def start(self) -> None:
        """Start the task's thread."""
        self._thread.start()

    @property
    def paused(self) -> bool:
        """Whether the task is paused (or was told to pause)."""
        return self._paused

    def pause(self) -> None:
        """Stop moving records (sources stop polling, sinks pause their partitions)."""
        with self._state_lock:
            self._paused = True
            if self.state is State.RUNNING:
                self.state = State.PAUSED
        self._wake()

    def resume(self) -> None:
        """Move records again after :meth:`pause`."""
        with self._state_lock:
            self._paused = False
            if self.state is State.PAUSED:
                self.state = State.RUNNING
        self._wake()

    STOP_FROM_CALLER: bool = True
    """Whether :meth:`stop` calls the task's ``stop()`` from the stopping thread (sources:
    it must end a blocking ``poll``) or leaves it to the task thread, after the final
    commit and ``close`` (sinks, as the SinkTask contract says)."""

    def stop(self) -> None:
        """Ask the task to stop (returns at once; see :meth:`join`). For source tasks the
        task's ``stop()`` is called from this thread so a blocked ``poll`` returns; sink
        tasks are stopped last, on their own thread.
        """
        if self._stop_deadline is None:
            self._stop_deadline = time.monotonic() + self._graceful_s
        self.stopping.set()
        # Before start() returned, the task thread calls stop() itself afterwards.
        if self._task_started and self.STOP_FROM_CALLER:
            self._stop_task()
        self._wake()

    def join(self, timeout: float | None = None) -> bool:
        """Wait for the thread to end, at most ``timeout`` seconds (default: what is left
        of the graceful timeout). When it does not end in time, abandon it: commit what is
        safe from this thread and let the old thread die on its own.

        Returns:
            Whether the thread ended in time.

        """
        if timeout is None:
            deadline = self._stop_deadline or (time.monotonic() + self._graceful_s)
            timeout = max(0.0, deadline - time.monotonic())
        if self._thread.ident is not None:
            self._thread.join(timeout)
        if not self._thread.is_alive():
            return True
        _log.warning("task %s did not stop within %.1f s; abandoning it after committing "
                     "what is safe", self.id, timeout)
        self._abandoned = True
        try:
            self._abandon()
        except Exception:
            _log.exception("task %s: committing on abandon failed", self.id)
        return False

    @property
    def alive(self) -> bool:
        """Whether the task's thread is running."""
        return self._thread.is_alive()

    @property
    def abandoned(self) -> bool:
        """Whether the runner gave up waiting for the task's thread."""
        return self._abandoned

    # -- the thread ---------------------------------------------------------------------

    def _run(self) -> None:
        error: BaseException | None = None
        try:
            self._open()
            self._task_started = True
            if not self.stopping.is_set():
                with self._state_lock:
                    self.state = State.PAUSED if self._paused else State.RUNNING
                self.metrics.started_at = time.time()
                self.setup.listener.on_task_running(self)
                self._execute()
        except TaskInterrupted:
            pass
        except BaseException as exc:
            if self.stopping.is_set():
                _log.warning("task %s raised while stopping: %s: %s", self.id,
                             type(exc).__name__, exc)
            else:
                error = exc
                _log.error("task %s failed: %s: %s", self.id, type(exc).__name__, exc,
                           exc_info=exc)
        try:
            self._close(failed=error is not None)
        except BaseException as exc:
            _log.exception("task %s: closing failed", self.id)
            if error is None and not self.stopping.is_set():
                error = exc
        self._stop_task()
        if self._abandoned:
            return
        if error is not None:
            self.error = error
            self.trace = "".join(traceback.format_exception(error))
            with self._state_lock:
                self.state = State.FAILED
            self.setup.listener.on_task_failed(self, error)
        else:
            self.setup.listener.on_task_stopped(self)

    def _stop_task(self) -> None:
        with self._task_stop_lock:
            if self._task_stopped:
                return
            self._task_stopped = True
        try:
            self.task.stop()
        except Exception:
            _log.exception("task %s: stop() raised", self.id)

    def _remaining_stop_time(self) -> float:
        """Seconds left of the graceful timeout (counted from stop, or from now)."""
        if self._stop_deadline is None:
            self._stop_deadline = time.monotonic() + self._graceful_s
        return max(0.0, self._stop_deadline - time.monotonic())

    # -- what subclasses implement ----------------------------------------------------

    @abc.abstractmethod
    def _open(self) -> None:
        """Create clients, initialise and start the task (on the task's thread)."""

    @abc.abstractmethod
    def _execute(self) -> None:
        """Move records until ``stopping`` is set."""

    @abc.abstractmethod
    def _close(self, *, failed: bool) -> None:
        """Commit what is safe and release clients (on the task's thread)."""

    @abc.abstractmethod
    def _wake(self) -> None:
        """Wake the task's thread if it waits (any thread)."""

    def _abandon(self) -> None:
        """Commit what is safe from the herder's thread (the task's thread is stuck)."""
