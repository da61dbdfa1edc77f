"""One SparkSession per process, shared by the sink tasks that run in it.

PySpark keeps one active session per process (one JVM), so the tasks of every Spark sink
connector on a worker share it: the first task's ``start`` creates it (about ten seconds:
a JVM starts), the last task's ``stop`` stops it. A session that existed before the
first task (an application embedding the runtime) is used and never stopped.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from typing import Any

__all__ = ["LOCAL_DEFAULTS", "SharedSparkSession", "build_session"]

_log = logging.getLogger(__name__)

LOCAL_DEFAULTS = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.driver.host": "127.0.0.1",
    "spark.driver.bindAddress": "127.0.0.1",
    "spark.sql.shuffle.partitions": "2",
    "spark.python.authenticate.socketTimeout": "120s",
}
"""Settings for a ``local[...]`` master unless configured otherwise: no web UI, the
driver only on the loopback address, and two minutes (not 15 s) for a Python worker to
connect back: every streaming query on a Python data source starts one on the driver,
and 20 of them starting at once on 2 busy cores took longer than 15 s."""


def build_session(master: str, app_name: str, conf: Mapping[str, str]) -> Any:
    """``SparkSession.builder...getOrCreate()`` with :data:`LOCAL_DEFAULTS` for a
    ``local[...]`` master, then ``conf``; the log level is ``spark.log.level`` (default
    ``ERROR``).

    Args:
        master: Spark's master URL, e.g. ``local[2]``.
        app_name: The application name.
        conf: Further Spark settings (``spark.*``), overriding the defaults.

    """
    from pyspark.sql import SparkSession

    settings = dict(LOCAL_DEFAULTS) if master.startswith("local") else {}
    settings.update(conf)
    builder = SparkSession.builder.master(master).appName(app_name)
    for key, value in settings.items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel(settings.get("spark.log.level", "ERROR"))
    return session


class SharedSparkSession:
    """Reference-counted access to the process's SparkSession."""

    _lock = threading.Lock()
    _users = 0
    _session: Any = None
    _owned = False

    @classmethod
    def acquire(cls, master: str, app_name: str, conf: Mapping[str, str]) -> Any:
        """The process's SparkSession, created with these settings if there is none.

        Args:
            master: Spark's master URL, e.g. ``local[2]``.
            app_name: The application name.
            conf: Further Spark settings (``spark.*``).

        """
        from pyspark.sql import SparkSession

        with cls._lock:
            if cls._session is None:
                existing = SparkSession.getActiveSession() or getattr(
                    SparkSession, "_instantiatedSession", None)
                if existing is not None:
                    cls._session, cls._owned = existing, False
                else:
                    _log.info("starting a SparkSession (master %s)", master)
                    cls._session, cls._owned = build_session(master, app_name, conf), True
            cls._users += 1
            return cls._session

    @classmethod
    def release(cls) -> None:
        """One user fewer; the last one stops a session this class created."""
        with cls._lock:
            cls._users = max(0, cls._users - 1)
            if cls._users or cls._session is None:
                return
            session, owned = cls._session, cls._owned
            cls._session, cls._owned = None, False
        if owned:
            _log.info("stopping the SparkSession")
            session.stop()
