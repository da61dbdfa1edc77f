"""The lifecycle the test-broker handles share (standard library only).

Each launcher of this package (:mod:`~omconnect_testbrokers.kafka`,
:mod:`~omconnect_testbrokers.rabbitmq`, :mod:`~omconnect_testbrokers.pulsar`) returns a
``BrokerHandle`` built on :class:`BrokerHandleBase`: ``stop`` (idempotent), ``restart``
(refused once stopped), use as a context manager, and a registry of live handles that an
:mod:`atexit` hook stops, so an interpreter that exits without stopping them leaves
nothing behind. The RabbitMQ handle (a vhost on the machine's server) subclasses it
directly; the Tansu and pulsar-lite handles go through :class:`BrokerProcessHandle`, a
broker run as a child process in its own process group on a fixed port. What differs
per broker (command line, environment, storage, readiness check, what ``stop`` releases)
stays in the launchers.
"""

from __future__ import annotations

import abc
import atexit
import contextlib
import importlib.resources
import importlib.util
import os
import shutil
import subprocess
import threading
import time
from pathlib import Path
from types import TracebackType
from typing import IO, ClassVar, Self

from omconnect.testing.processes import log_tail, terminate_process_group

__all__ = [
    "AddressInUse",
    "BrokerHandleBase",
    "BrokerProcessHandle",
    "BrokerStartError",
    "find_broker_binary",
    "live_handles",
]

_live_lock = threading.Lock()
_live: dict[int, BrokerHandleBase] = {}


class BrokerStartError(RuntimeError):
    """A test broker (or its storage helper, or a RabbitMQ vhost) did not start or become
    usable in time. The launchers of every transport raise it (their modules re-export it).
    """


def live_handles() -> list[BrokerHandleBase]:
    """The handles of this process that were started and not stopped yet."""
    with _live_lock:
        return list(_live.values())


def _stop_all_at_exit() -> None:
    for handle in live_handles():
        with contextlib.suppress(Exception):
            handle.stop()


atexit.register(_stop_all_at_exit)


class BrokerHandleBase(abc.ABC):
    """A test broker a launcher started: stop it, restart it, use it in a ``with``.

    Subclasses implement :meth:`_start` and :meth:`_restart`, and may override
    :meth:`_stop_process` (run on every :meth:`stop`) and :meth:`_release` (run on the
    first). A launcher calls :meth:`_launch` on a new handle.
    """

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._closed = False

    def stop(self) -> None:
        """Stop the broker and release what it holds (see the handle's class). Idempotent."""
        with self._lock:
            self._stop_process()
            if self._closed:
                return
            self._closed = True
            with _live_lock:
                _live.pop(id(self), None)
            self._release()

    def restart(self) -> None:
        """Stop the broker and start it again on the same address (see the handle's class
        for what survives); return once it serves.

        Raises:
            RuntimeError: If the handle was already stopped.
            Exception: The launcher's ``BrokerStartError`` if the broker does not come
                back in time.

        """
        with self._lock:
            if self._closed:
                raise RuntimeError("cannot restart a stopped broker handle")
            self._restart()

    def __enter__(self) -> Self:
        """Return the handle itself."""
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Stop the broker."""
        self.stop()

    def _launch(self) -> None:
        """Register the handle and start the broker; if that fails, stop the handle (so
        what was made for it is released) and re-raise.
        """
        with _live_lock:
            _live[id(self)] = self
        try:
            self._start()
        except BaseException:
            self.stop()
            raise

    @abc.abstractmethod
    def _start(self) -> None:
        """Start the broker and return once it serves."""

    @abc.abstractmethod
    def _restart(self) -> None:
        """Restart the broker (the handle is open) and return once it serves."""

    def _stop_process(self) -> None:
        """Stop what runs for the broker; called on every :meth:`stop`."""

    def _release(self) -> None:
        """Release what the broker holds besides its process; called once, by the first
        :meth:`stop`.
        """


class AddressInUse(Exception):
    """Raised by :meth:`BrokerProcessHandle._wait_ready` when the broker could not bind its
    port (yet, e.g. the old listener lingers after a restart): the start is tried again.
    """


class BrokerProcessHandle(BrokerHandleBase):
    """A broker run as a child process in its own process group on a fixed 127.0.0.1 port.

    Each start appends a ``--- starting: COMMAND`` line and the process's output to
    ``log_path``. A start whose broker could not bind the port is tried again until the
    startup timeout; a restart stops the process and starts it again on the same port.
    Subclasses give the command line, the environment and the readiness check.

    Attributes:
        port: The TCP port the broker listens on (kept across restarts).
        workdir: The broker's working directory.
        log_path: The broker's combined stdout/stderr log file.

    """

    start_error: ClassVar[type[Exception]] = RuntimeError
    """What a start raises when the port stays busy (each launcher's ``BrokerStartError``)."""

    def __init__(self, *, port: int, workdir: Path, log_path: Path,
                 startup_timeout: float) -> None:
        super().__init__()
        self.port = port
        self.workdir = workdir
        self.log_path = log_path
        self._startup_timeout = startup_timeout
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def pid(self) -> int | None:
        """PID of the running broker process, or ``None`` when stopped."""
        process = self._process
        return process.pid if process is not None and process.poll() is None else None

    @property
    def running(self) -> bool:
        """Whether the broker process is alive."""
        return self.pid is not None

    @abc.abstractmethod
    def _command(self) -> list[str]:
        """The broker's command line."""

    @abc.abstractmethod
    def _environment(self) -> dict[str, str]:
        """The broker's environment."""

    @abc.abstractmethod
    def _wait_ready(self, process: subprocess.Popen[bytes], deadline: float,
                    offset: int) -> None:
        """Return once the broker serves; raise :class:`AddressInUse` if it exited because
        the port was busy, the launcher's start error otherwise (``offset``: where this
        start's output begins in ``log_path``, see :meth:`_output_since`).
        """

    def _start(self) -> None:
        self._start_process()

    def _restart(self) -> None:
        self._stop_process()
        self._start_process()

    def _start_process(self) -> None:
        env = self._environment()
        deadline = time.monotonic() + self._startup_timeout
        while True:
            log: IO[bytes]
            with open(self.log_path, "ab") as log:
                log.write(f"--- starting: {' '.join(self._command())}\n".encode())
                log.flush()
                offset = log.tell()
                process = subprocess.Popen(
                    self._command(),
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=log,
                    env=env,
                    cwd=self.workdir,
                    start_new_session=True,
                )
            self._process = process
            try:
                self._wait_ready(process, deadline, offset)
                return
            except AddressInUse:
                terminate_process_group(process, timeout=5)
                if time.monotonic() >= deadline:
                    raise self.start_error(
                        f"port {self.port} stayed busy:\n{log_tail(self.log_path)}"
                    ) from None
                time.sleep(0.2)
            except BaseException:
                terminate_process_group(process, timeout=5)
                raise

    def _output_since(self, offset: int) -> str:
        """What the log holds from ``offset`` on (one start's output), as text."""
        try:
            with open(self.log_path, "rb") as log:
                log.seek(offset)
                return log.read().decode("utf-8", "replace")
        except OSError:
            return ""

    def _stop_process(self) -> None:
        process, self._process = self._process, None
        if process is not None:
            terminate_process_group(process, timeout=10)


def find_broker_binary(name: str, *, env_var: str, package: str, missing_hint: str) -> Path:
    """Locate a broker executable: ``$env_var``, then ``bin/<name>`` inside the installed
    ``package``, then ``name`` on ``PATH``.

    Args:
        name: The executable's file name.
        env_var: Environment variable that overrides the search.
        package: Importable package that ships the binary in its ``bin`` folder.
        missing_hint: What to do when none is found (ends the error message).

    Returns:
        Absolute path of an executable file.

    Raises:
        FileNotFoundError: If ``$env_var`` names no executable file, or none is found.

    """
    override = os.environ.get(env_var)
    if override:
        path = Path(override)
        if path.is_file() and os.access(path, os.X_OK):
            return path.resolve()
        raise FileNotFoundError(f"${env_var}={override!r} is not an executable file")
    if importlib.util.find_spec(package) is not None:
        resource = importlib.resources.files(package).joinpath("bin", name)
        if resource.is_file():
            path = Path(str(resource))
            if os.access(path, os.X_OK):
                return path.resolve()
    on_path = shutil.which(name)
    if on_path:
        return Path(on_path).resolve()
    raise FileNotFoundError(f"no {name} binary: {missing_hint}")
