"""Clusters of ``omconnect distributed`` workers for tests and benchmarks:
:class:`ProcessCluster` (each worker a process of its own, driven through its REST API)
and :class:`EventSource`, a connector whose tasks write when they start and stop (to
count what a rebalance moves).

A cluster's workers share one worker-config template (the transport and its options);
each gets a fixed free port, so its ``worker.id`` (``127.0.0.1:<port>``) stays the same
when it is started again, as a restarted worker's does::

    with ProcessCluster(tmp_path, {"transport": "embedded",
                                   "embedded.path": str(tmp_path / "data")}) as cluster:
        cluster.start_all()
        cluster.request(0, "POST", "/connectors", {...})
        cluster.kill(1)              # SIGKILL: the process dies without a word
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from omconnect import __version__
from omconnect.config import ConfigDef, ConfigType
from omconnect.connector import SourceConnector, SourceTask
from omconnect.records import SourceRecord
from omconnect.testing.processes import (
    free_port,
    kill_process_group,
    log_tail,
    terminate_process_group,
)
from omconnect.testing.waiting import eventually

__all__ = ["EventSource", "ProcessCluster", "read_events"]

OMCONNECT = [sys.executable, "-m", "omconnect.cli"]


class ProcessCluster:
    """``size`` worker processes of one cluster (see the module docstring).

    Args:
        workdir: Where worker files and logs go.
        settings: The worker settings every worker shares (transport and its options,
            converters, ...); ``group.id``, ``rest.port`` and ``worker.id`` are set here.
        size: How many workers.
        group: The cluster's ``group.id``.
        env: Extra environment of the worker processes.

    """

    def __init__(self, workdir: Path, settings: Mapping[str, object], *, size: int = 3,
                 group: str = "cluster", env: Mapping[str, str] | None = None) -> None:
        self.workdir = workdir
        self.settings = dict(settings)
        self.group = group
        self.env = {**os.environ, **(env or {})}
        self.ports: list[int] = []
        self.processes: list[subprocess.Popen[bytes] | None] = []
        for _ in range(size):
            self.add()

    def add(self) -> int:
        """Add a worker (not started); returns its index."""
        index = len(self.ports)
        self.ports.append(free_port())
        self.processes.append(None)
        return index

    def worker_file(self, index: int) -> Path:
        """Worker ``index``'s config file (written on each start)."""
        return self.workdir / f"worker-{index}.properties"

    def log(self, index: int) -> Path:
        """Worker ``index``'s log (each start appends)."""
        return self.workdir / f"worker-{index}.log"

    def worker_id(self, index: int) -> str:
        """Worker ``index``'s ``worker.id``."""
        return f"127.0.0.1:{self.ports[index]}"

    def url(self, index: int) -> str:
        """Worker ``index``'s REST API."""
        return f"http://127.0.0.1:{self.ports[index]}"

    def start(self, index: int) -> None:
        """Start worker ``index`` (its process; see :meth:`wait_ready`)."""
        self.workdir.mkdir(parents=True, exist_ok=True)
        settings = {**self.settings, "group.id": self.group, "rest.port": self.ports[index],
                    "rest.host.name": "127.0.0.1"}
        self.worker_file(index).write_text(
            "".join(f"{k}={v}\n" for k, v in settings.items()), encoding="utf-8")
        with self.log(index).open("ab") as log:
            self.processes[index] = subprocess.Popen(
                [*OMCONNECT, "distributed", str(self.worker_file(index)),
                 "--log-format", "text", "--status-interval", "0"],
                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                env=self.env, cwd=self.workdir, start_new_session=True)

    def wait_ready(self, index: int, timeout: float = 120.0) -> None:
        """Wait until worker ``index`` has joined (``GET /health`` is 200).

        Raises:
            AssertionError: It exited or did not join in time (with its log's end).

        """
        def ready() -> bool:
            process = self.processes[index]
            if process is None or process.poll() is not None:
                raise AssertionError(f"worker {index} exited:\n{log_tail(self.log(index))}")
            try:
                return self.request(index, "GET", "/health", timeout=2)[0] == 200
            except OSError:
                return False

        try:
            eventually(ready, timeout, f"worker {index} to join", interval=0.2)
        except AssertionError as exc:
            raise AssertionError(f"{exc}\n{log_tail(self.log(index))}") from None

    def start_all(self, timeout: float = 180.0) -> None:
        """Start every worker not running and wait until all have joined."""
        for index, process in enumerate(self.processes):
            if process is None or process.poll() is not None:
                self.start(index)
        for index in range(len(self.processes)):
            self.wait_ready(index, timeout)

    def running(self, index: int) -> bool:
        """Whether worker ``index``'s process runs."""
        process = self.processes[index]
        return process is not None and process.poll() is None

    def kill(self, index: int) -> None:
        """SIGKILL worker ``index`` (nothing is stopped cleanly)."""
        process = self.processes[index]
        if process is not None:
            kill_process_group(process)

    def stop(self, index: int, timeout: float = 60.0) -> int | None:
        """SIGTERM worker ``index`` and wait for it; its exit status."""
        process = self.processes[index]
        if process is None:
            return None
        terminate_process_group(process, timeout)
        return process.returncode

    def close(self) -> None:
        """Stop every worker (SIGTERM, then SIGKILL after a while), in parallel."""
        threads = [threading.Thread(target=self.stop, args=(i, 30.0))
                   for i, p in enumerate(self.processes) if p is not None]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

    def __enter__(self) -> ProcessCluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the REST API ------------------------------------------------------------------

    def request(self, index: int, method: str, path: str, body: Any = None, *,
                timeout: float = 30.0) -> tuple[int, Any]:
        """One REST call to worker ``index``: (status, decoded JSON body or ``None``).

        Raises:
            OSError: The worker cannot be reached.

        """
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.url(index) + path, data=data, method=method,
                                         headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                payload = response.read()
                status = response.status
        except urllib.error.HTTPError as exc:
            payload, status = exc.read(), exc.code
        return status, json.loads(payload) if payload else None

    def get(self, index: int, path: str) -> Any:
        """``GET path`` on worker ``index``; its body (asserting 200)."""
        status, body = self.request(index, "GET", path)
        assert status == 200, f"GET {path} on worker {index}: {status} {body}"
        return body

    def create(self, index: int, name: str, config: Mapping[str, object]) -> Any:
        """Create connector ``name`` through worker ``index`` (asserting 201)."""
        status, body = self.request(index, "POST", "/connectors",
                                    {"name": name, "config": {k: str(v) for k, v in
                                                              config.items()}})
        assert status == 201, f"creating {name} through worker {index}: {status} {body}"
        return body

    def status(self, index: int, name: str) -> dict[str, Any]:
        """Connector ``name``'s status as worker ``index`` answers it."""
        status, body = self.request(index, "GET", f"/connectors/{name}/status")
        assert status == 200, f"status of {name} on worker {index}: {status} {body}"
        return dict(body)

    def live(self) -> list[int]:
        """The indexes of the workers whose processes run."""
        return [i for i in range(len(self.processes)) if self.running(i)]


def task_placement(status: Mapping[str, Any]) -> dict[int, tuple[str, str]]:
    """Task number -> (state, worker id) of a status body."""
    return {int(t["id"]): (str(t["state"]), str(t["worker_id"])) for t in status["tasks"]}


# -- a connector whose tasks tell when they start and stop --------------------------------

_EVENTS = "events.file"


class EventSource(SourceConnector):
    """A source of ``tasks.max`` tasks that send nothing; each task appends
    ``<connector> <task> start|stop <pid>`` to ``events.file`` when it starts and stops
    (one ``write`` per line, the file opened for appending), so a test can count the task
    stops a rebalance causes.
    """

    def __init__(self) -> None:
        super().__init__()
        self._config: dict[str, Any] = {}

    def version(self) -> str:
        """The omconnect version."""
        return __version__

    def config_def(self) -> ConfigDef:
        """``events.file``: where tasks write their events."""
        return ConfigDef().define(_EVENTS, ConfigType.STRING, documentation="Event file.")

    def start(self, config: Mapping[str, Any]) -> None:
        """Keep the config."""
        self._config = dict(config)

    def task_class(self) -> type[SourceTask]:
        """:class:`EventTask`."""
        return EventTask

    def task_configs(self, max_tasks: int) -> list[dict[str, Any]]:
        """``max_tasks`` tasks."""
        return [{_EVENTS: self._config[_EVENTS], "task.number": str(i),
                 "name": self._config.get("name", "")} for i in range(max_tasks)]

    def stop(self) -> None:
        """Nothing to release."""


class EventTask(SourceTask):
    """Writes its start and stop; polls nothing."""

    def __init__(self) -> None:
        super().__init__()
        self._file = ""
        self._label = ""
        self._stopped = threading.Event()

    def version(self) -> str:
        """The omconnect version."""
        return __version__

    def start(self, config: Mapping[str, Any]) -> None:
        """Write ``start``."""
        self._file = str(config[_EVENTS])
        self._label = f"{config.get('name')} {config.get('task.number')}"
        self._write("start")

    def poll(self) -> Sequence[SourceRecord] | None:
        """Nothing, after a short wait."""
        self._stopped.wait(0.2)
        return None

    def stop(self) -> None:
        """Write ``stop``."""
        self._stopped.set()
        self._write("stop")

    def _write(self, event: str) -> None:
        descriptor = os.open(self._file, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(descriptor, f"{self._label} {event} {os.getpid()} {time.time()}\n"
                     .encode())
        finally:
            os.close(descriptor)


def read_events(path: Path) -> list[tuple[str, int, str, int]]:
    """The events an :class:`EventSource`'s tasks wrote: (connector, task, event, pid)."""
    if not path.exists():
        return []
    events = []
    for line in path.read_text(encoding="utf-8").splitlines():
        parts = line.split()
        if len(parts) >= 4:
            events.append((parts[0], int(parts[1]), parts[2], int(parts[3])))
    return events
