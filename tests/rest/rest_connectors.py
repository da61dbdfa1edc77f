"""Connectors for the REST API's tests (loaded by Python path, ``rest_connectors:...``).

* ``SecretSource``: takes ``connection.url``, declared PASSWORD although its name does not
  look secret, and its validation quotes a bad url back (as careless connectors do), so
  the tests can check that neither responses nor logs show it. Its task polls nothing.
* ``FailingSource``: its task fails on the first poll (state FAILED, with a trace).
* ``DsnSource``: builds its tasks' ``dsn`` from ``db.user`` and ``db.password`` (a task
  config value derived from a secret, under a name that does not look secret).
* ``SlowValidatingSource``: its validation takes ``validate.delay.ms``, as one that
  checks a remote system does; requests racing on one connector overlap in it.
* ``SlowStartingSource``: its ``start`` takes ``start.delay.ms`` (the worker is busy
  starting it meanwhile).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from typing import Any

from omconnect.config import ConfigDef, ConfigType
from omconnect.connector import SourceConnector, SourceTask
from omconnect.errors import ConnectError
from omconnect.records import SourceRecord


class IdleTask(SourceTask):
    def version(self) -> str:
        return "1.0"

    def start(self, config: Mapping[str, Any]) -> None:
        self.stopped = threading.Event()

    def poll(self) -> list[SourceRecord] | None:
        self.stopped.wait(0.05)
        return None

    def stop(self) -> None:
        self.stopped.set()


class _Source(SourceConnector):
    CONFIG = ConfigDef()

    def version(self) -> str:
        return "1.0"

    def config_def(self) -> ConfigDef:
        return self.CONFIG

    def start(self, config: Mapping[str, Any]) -> None:
        self.config = dict(config)

    def task_configs(self, max_tasks: int) -> list[dict[str, Any]]:
        return [dict(self.config) for _ in range(max_tasks)]

    def stop(self) -> None:
        pass


class SecretSource(_Source):
    CONFIG = (ConfigDef()
              .define("connection.url", ConfigType.PASSWORD,
                      documentation="Where to connect, credentials included.")
              .define("topic", ConfigType.STRING, "secret-out", documentation="Topic."))

    def validate(self, config: Mapping[str, Any]) -> dict[str, list[str]]:
        errors = super().validate(config)
        url = str(config.get("connection.url") or "")
        if url and not url.startswith("db://"):
            errors.setdefault("connection.url", []).append(
                f"cannot connect to {url}: expected a db:// url")
        return errors

    def task_class(self) -> type[SourceTask]:
        return IdleTask


class FailingTask(IdleTask):
    def poll(self) -> list[SourceRecord] | None:
        raise ConnectError("the source went away")


class FailingSource(_Source):
    def task_class(self) -> type[SourceTask]:
        return FailingTask


class DsnSource(_Source):
    def task_configs(self, max_tasks: int) -> list[dict[str, Any]]:
        dsn = f"db://{self.config.get('db.user')}:{self.config.get('db.password')}@db"
        return [{"dsn": dsn, "db.user": self.config.get("db.user")}]

    def task_class(self) -> type[SourceTask]:
        return IdleTask


class SlowValidatingSource(_Source):
    CONFIG = ConfigDef().define("validate.delay.ms", ConfigType.INT, 0,
                                documentation="How long validation takes.")

    def validate(self, config: Mapping[str, Any]) -> dict[str, list[str]]:
        time.sleep(int(config.get("validate.delay.ms") or 0) / 1000)
        return super().validate(config)

    def task_class(self) -> type[SourceTask]:
        return IdleTask


class SlowStartingSource(_Source):
    CONFIG = ConfigDef().define("start.delay.ms", ConfigType.INT, 0,
                                documentation="How long starting takes.")

    def start(self, config: Mapping[str, Any]) -> None:
        time.sleep(int(config.get("start.delay.ms") or 0) / 1000)
        super().start(config)

    def task_class(self) -> type[SourceTask]:
        return IdleTask
