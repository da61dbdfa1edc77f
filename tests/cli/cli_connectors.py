"""Connectors the CLI tests name in connector configs (``cli_connectors:<Class>``)."""

from __future__ import annotations

import os
import signal
from collections.abc import Mapping
from typing import Any

from omconnect.config import ConfigDef
from omconnect.connector import SourceConnector, SourceTask
from omconnect.records import SourceRecord

STARTED: list[str] = []
"""Names of connectors that were started (the tests check what never started)."""

SIGNALLED: list[int] = []
"""Signals SignalWhileValidated sent (once per test: a second one exits at once)."""


class _IdleTask(SourceTask):
    def version(self) -> str:
        return "1.0"

    def start(self, config: Mapping[str, Any]) -> None:
        STARTED.append(str(config.get("name")))

    def poll(self) -> list[SourceRecord] | None:
        return None

    def stop(self) -> None:
        return None


class SignalWhileValidated(SourceConnector):
    """A source whose validation sends SIGTERM to this process: the signal arrives while
    ``omconnect standalone`` is still loading configs.
    """

    def version(self) -> str:
        return "1.0"

    def config_def(self) -> ConfigDef:
        return ConfigDef()

    def validate(self, config: Mapping[str, Any]) -> dict[str, list[str]]:
        if not SIGNALLED:  # validation runs more than once; one signal is a clean stop
            SIGNALLED.append(signal.SIGTERM)
            os.kill(os.getpid(), signal.SIGTERM)
        return super().validate(config)

    def start(self, config: Mapping[str, Any]) -> None:
        STARTED.append(str(config.get("name")))

    def task_class(self) -> type[SourceTask]:
        return _IdleTask

    def task_configs(self, max_tasks: int) -> list[dict[str, Any]]:
        return [{}]

    def stop(self) -> None:
        return None
