"""One connector instance: its lifecycle hooks and task configs, on the herder's thread."""

from __future__ import annotations

import logging
import traceback
from collections.abc import Callable
from typing import Any

from omconnect.connector.connector import Connector
from omconnect.connector.context import ConnectorContext
from omconnect.connector.lifecycle import State
from omconnect.connector.task import Task
from omconnect.errors import ConnectError
from omconnect.runtime.connector_config import ConnectorSettings

__all__ = ["ConnectorRunner"]

_log = logging.getLogger(__name__)


class _Context(ConnectorContext):
    def __init__(self, reconfigure: Callable[[], None],
                 fail: Callable[[BaseException], None]) -> None:
        self._reconfigure = reconfigure
        self._fail = fail

    def request_task_reconfiguration(self) -> None:
        self._reconfigure()

    def raise_error(self, error: BaseException) -> None:
        self._fail(error)


class ConnectorRunner:
    """Drives a connector through its lifecycle. Called from the herder only.

    Args:
        connector: A new connector instance.
        settings: Its parsed settings.
        request_reconfiguration: Called (any thread) when the connector asks for new
            task configs.
        report_failure: Called (any thread) when the connector reports an error.

    """

    def __init__(
        self,
        connector: Connector,
        settings: ConnectorSettings,
        *,
        request_reconfiguration: Callable[[], None],
        report_failure: Callable[[BaseException], None],
    ) -> None:
        self.connector = connector
        self.settings = settings
        self.name = settings.name
        self.state = State.UNASSIGNED
        self.trace: str | None = None
        self.error: BaseException | None = None
        self._started = False
        connector.initialize(_Context(request_reconfiguration, report_failure))

    def start(self, *, paused: bool = False) -> None:
        """Start the connector with its config.

        Raises:
            Exception: Whatever ``start`` raised (the state is then FAILED).

        """
        try:
            parsed = self.connector.config_def().parse(self.settings.values,
                                                       what=f"connector {self.name!r}")
            self.connector.start(parsed)
        except BaseException as exc:
            self.failed(exc)
            raise
        self._started = True
        self.state = State.PAUSED if paused else State.RUNNING

    def task_class(self) -> type[Task]:
        """The connector's task class."""
        return self.connector.task_class()

    def task_configs(self) -> list[dict[str, Any]]:
        """The connector's task configs, at most ``tasks.max``.

        Raises:
            ConnectError: The connector returned more than ``tasks.max`` or not dicts
                (the state is then FAILED); or whatever ``task_configs`` raised.

        """
        try:
            configs = self.connector.task_configs(self.settings.tasks_max)
            configs = [dict(c) for c in configs]
            if len(configs) > self.settings.tasks_max:
                raise ConnectError(
                    f"task_configs({self.settings.tasks_max}) returned {len(configs)} "
                    "configs, more than tasks.max", connector=self.name)
        except BaseException as exc:
            self.failed(exc)
            raise
        return configs

    def pause(self) -> None:
        """The connector's tasks are paused; call its ``on_pause`` hook."""
        if self.state is State.RUNNING:
            self.state = State.PAUSED
            self._hook(self.connector.on_pause)

    def resume(self) -> None:
        """The connector's tasks resume; call its ``on_resume`` hook."""
        if self.state is State.PAUSED:
            self.state = State.RUNNING
            self._hook(self.connector.on_resume)

    def failed(self, error: BaseException) -> None:
        """The connector (or, with ``task_failed``, a task) failed with ``error``."""
        self.state = State.FAILED
        self.error = error
        self.trace = "".join(traceback.format_exception(error))
        self._hook(self.connector.on_failed, error)

    def task_failed(self, error: BaseException) -> None:
        """One of its tasks failed: call the connector's ``on_failed`` hook."""
        self._hook(self.connector.on_failed, error)

    def stop(self, *, state: State = State.STOPPED) -> None:
        """Stop the connector (if it started) and take ``state``."""
        if self._started:
            self._started = False
            self._hook(self.connector.stop)
        if self.state is not State.FAILED or state is State.DESTROYED:
            self.state = state

    def destroyed(self) -> None:
        """The connector was deleted: call its ``on_destroyed`` hook."""
        self.state = State.DESTROYED
        self._hook(self.connector.on_destroyed)

    def _hook(self, hook: Callable[..., None], *args: Any) -> None:
        try:
            hook(*args)
        except Exception:
            _log.exception("connector %r: %s() raised", self.name, hook.__name__)
