"""Start and stop a Redis test server (``redis-server``) on a free local port.

The machine runs Redis on 6379 for everyone, without persistence; tests never use it.
:func:`start_broker` runs a server of their own, as a child process in its own process
group::

    redis-server --port PORT --bind 127.0.0.1 --save "" --appendonly yes|no --dir WORKDIR

with its working directory (and its append-only file, when ``appendonly``) in
``workdir``, waits until it answers ``PING`` and returns a :class:`BrokerHandle`::

    with start_broker(tmp_path) as server:
        client = redis.Redis.from_url(server.url)

:meth:`BrokerHandle.restart` stops the server with SIGTERM (Redis then writes its
append-only file out) and starts it again on the same port and directory: with
``appendonly`` (the default) every stream, hash and committed position survives it,
without it everything is gone. The server is found on ``PATH`` or in
``$OMCONNECT_REDIS_SERVER_BIN`` (Debian's ``redis-server`` package).

Every started process is registered with :mod:`atexit`, so an interpreter that exits
without calling :meth:`BrokerHandle.stop` still leaves nothing running.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from pathlib import Path
from typing import TYPE_CHECKING

from omconnect.testing.processes import free_port, log_tail
from omconnect_testbrokers.handles import (
    AddressInUse,
    BrokerProcessHandle,
    BrokerStartError,
)

if TYPE_CHECKING:
    from omconnect.testing.profile import TransportProfile

__all__ = [
    "BrokerHandle",
    "BrokerStartError",
    "conformance_profile",
    "find_redis_server",
    "server_options",
    "start_broker",
]

REDIS_SERVER_BIN_ENV = "OMCONNECT_REDIS_SERVER_BIN"
"""Environment variable that overrides which ``redis-server`` executable is used."""

_HOST = "127.0.0.1"


def find_redis_server() -> Path:
    """The ``redis-server`` executable: ``$OMCONNECT_REDIS_SERVER_BIN``, else on ``PATH``.

    The path is kept as found, not resolved: Debian's ``redis-server`` is a link to
    ``redis-check-rdb``, which acts as the server only when called by that name.

    Raises:
        FileNotFoundError: If none is found.

    """
    override = os.environ.get(REDIS_SERVER_BIN_ENV)
    found = override or shutil.which("redis-server")
    if found and os.access(found, os.X_OK):
        return Path(found)
    raise FileNotFoundError(f"no redis-server binary: install Debian's redis-server or set "
                            f"${REDIS_SERVER_BIN_ENV}")


def _ping(port: int, timeout: float) -> bytes:
    """The server's answer to ``PING`` (``+PONG`` once it serves, ``-LOADING`` while it
    reads its data back).
    """
    with socket.create_connection((_HOST, port), timeout=timeout) as sock:
        sock.sendall(b"PING\r\n")
        return sock.recv(64)


class BrokerHandle(BrokerProcessHandle):
    """A running ``redis-server`` started by :func:`start_broker`.

    Attributes:
        url: ``redis://127.0.0.1:PORT/0``.
        port: The TCP port (kept across restarts).
        workdir: The server's directory (its append-only file; kept across restarts).
        appendonly: Whether the server keeps an append-only file.
        log_path: The server's log.

    """

    start_error = BrokerStartError

    def __init__(self, *, binary: Path, workdir: Path, port: int, appendonly: bool,
                 startup_timeout: float) -> None:
        super().__init__(port=port, workdir=workdir, log_path=workdir / "redis-server.log",
                         startup_timeout=startup_timeout)
        self.url = f"redis://{_HOST}:{port}/0"
        self.appendonly = appendonly
        self._binary = binary

    def __repr__(self) -> str:
        """Return a short description of the handle."""
        return f"BrokerHandle(url={self.url!r}, pid={self.pid})"

    def _command(self) -> list[str]:
        return [str(self._binary), "--port", str(self.port), "--bind", _HOST,
                "--save", "", "--appendonly", "yes" if self.appendonly else "no",
                "--dir", str(self.workdir), "--daemonize", "no", "--logfile", "",
                "--protected-mode", "yes"]

    def _environment(self) -> dict[str, str]:
        return {"PATH": "/usr/bin:/bin:/usr/sbin:/sbin"}

    def _wait_ready(self, process: subprocess.Popen[bytes], deadline: float,
                    offset: int) -> None:
        last = "no answer"
        while time.monotonic() < deadline:
            if process.poll() is not None:
                if "Address already in use" in self._output_since(offset):
                    raise AddressInUse
                raise BrokerStartError(
                    f"redis-server exited with {process.returncode} before serving; log "
                    f"tail:\n{log_tail(self.log_path)}")
            try:
                answer = _ping(self.port, 1.0)
            except OSError as exc:
                last = repr(exc)
            else:
                if answer.startswith(b"+PONG"):
                    return
                last = answer.decode("utf-8", "replace").strip()
            time.sleep(0.02)
        raise BrokerStartError(
            f"redis-server on {self.url} not ready after {self._startup_timeout:.0f}s "
            f"({last}); log tail:\n{log_tail(self.log_path)}")


def start_broker(workdir: Path, *, appendonly: bool = True,
                 startup_timeout: float = 30.0) -> BrokerHandle:
    """Start ``redis-server`` on a free 127.0.0.1 port and wait until it answers.

    Args:
        workdir: Its directory (created if missing); reusing one reuses its data.
        appendonly: Keep an append-only file (persistence across restarts).
        startup_timeout: Seconds to wait for it (each start and restart).

    Raises:
        BrokerStartError: If it does not answer in time (the message has its log's tail).
        FileNotFoundError: If no ``redis-server`` is installed.

    """
    binary = find_redis_server()
    workdir = Path(workdir).resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    handle = BrokerHandle(binary=binary, workdir=workdir, port=free_port(),
                          appendonly=appendonly, startup_timeout=startup_timeout)
    handle._launch()
    return handle


def server_options(url: str) -> dict[str, object]:
    """Transport options for a test server: its URL, and group timings short enough that
    a killed member's partitions move within seconds.
    """
    return {"url": url, "heartbeat.interval.ms": 200, "session.timeout.ms": 3000}


def conformance_profile(workdir: Path) -> TransportProfile:
    """The kit's profile for ``omconnect conformance --transport redis``: starts a server
    with an append-only file in ``workdir`` (stopped at the end of the run), restarts it
    for the broker-restart cases and points the unreachable-server case at a closed port.
    """
    from omconnect.testing.profile import TransportProfile

    server = start_broker(Path(workdir) / "redis")
    return TransportProfile(
        config=server_options(server.url),
        broker=server,
        unreachable_config={"url": f"redis://{_HOST}:{free_port()}/0",
                            "operation.timeout.ms": 3000, "connection.timeout.ms": 1000},
        unreachable_timeout=3.0,
        stop=server.stop,
    )
