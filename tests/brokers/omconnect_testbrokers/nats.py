"""Start and stop a NATS server with JetStream on a free local port.

The server is Debian's ``nats-server`` (``/usr/sbin/nats-server``, v2.9 on this machine;
``$OMCONNECT_NATS_SERVER_BIN`` overrides it). :func:`start_broker` runs
``nats-server -js -a 127.0.0.1 -p PORT -sd WORKDIR/store`` in ``workdir`` (its log in
``workdir/nats-server.log``), waits until JetStream answers an API request, and returns
a :class:`BrokerHandle`::

    with start_broker(tmp_path) as broker:
        transport = NatsTransport({"servers": broker.url})

:meth:`BrokerHandle.restart` stops the server (SIGTERM: it writes what it holds) and
starts it again on the same port with the same store directory, so streams, their
messages and key/value buckets survive it. The server restores every stream before
JetStream answers, so a restart takes longer the more streams the store holds. The
machine's own NATS server (port 4222) is never used or touched.

The readiness check speaks the NATS protocol over a plain socket (``CONNECT``, a
request to ``$JS.API.INFO``), so this module imports without nats-py. Every started
server is stopped by an :mod:`atexit` hook if the test run forgets to.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
from pathlib import Path
from typing import TYPE_CHECKING

from omconnect.testing.processes import free_port
from omconnect.testing.processes import log_tail as _tail
from omconnect_testbrokers.handles import (
    AddressInUse,
    BrokerProcessHandle,
    BrokerStartError,
    find_broker_binary,
)

if TYPE_CHECKING:
    from omconnect.testing.profile import TransportProfile

__all__ = [
    "BrokerHandle",
    "BrokerStartError",
    "conformance_profile",
    "find_nats_server_binary",
    "jetstream_ready",
    "profile_options",
    "start_broker",
    "unreachable_options",
]

NATS_SERVER_BIN_ENV = "OMCONNECT_NATS_SERVER_BIN"
"""Environment variable that overrides which ``nats-server`` executable is used."""

_HOST = "127.0.0.1"
_DEBIAN_PATH = Path("/usr/sbin/nats-server")


def find_nats_server_binary() -> Path:
    """Locate ``nats-server``: ``$OMCONNECT_NATS_SERVER_BIN``, then ``PATH``, then
    Debian's ``/usr/sbin/nats-server``.

    Raises:
        FileNotFoundError: If none is found.

    """
    try:
        return find_broker_binary(
            "nats-server", env_var=NATS_SERVER_BIN_ENV, package="omconnect_nats_server_bin",
            missing_hint=f"apt-get install nats-server, or set ${NATS_SERVER_BIN_ENV}")
    except FileNotFoundError:
        if _DEBIAN_PATH.is_file() and os.access(_DEBIAN_PATH, os.X_OK) and not os.environ.get(
                NATS_SERVER_BIN_ENV):
            return _DEBIAN_PATH
        raise


def jetstream_ready(port: int, host: str = _HOST, timeout: float = 2.0) -> bool:
    """Whether the server on ``host:port`` answers a JetStream API request (with a
    plain socket: the NATS protocol is text).
    """
    try:
        with socket.create_connection((host, port), timeout=timeout) as sock:
            sock.settimeout(timeout)
            received = b""
            while b"\r\n" not in received:
                chunk = sock.recv(65536)
                if not chunk:
                    return False
                received += chunk
            if not received.startswith(b"INFO") or b'"jetstream":true' not in received:
                return False
            sock.sendall(b'CONNECT {"verbose":false,"headers":true}\r\n'
                         b"SUB _INBOX.omc-probe 1\r\n"
                         b"PUB $JS.API.INFO _INBOX.omc-probe 0\r\n\r\nPING\r\n")
            deadline = time.monotonic() + timeout
            buffer = b""
            while time.monotonic() < deadline:
                chunk = sock.recv(65536)
                if not chunk:
                    return False
                buffer += chunk
                if b"MSG _INBOX.omc-probe" in buffer and b'"type":"io.nats.jetstream.api' \
                        in buffer and b'"error"' not in buffer:
                    return True
                if b"-ERR" in buffer:
                    return False
            return False
    except OSError:
        return False


class BrokerHandle(BrokerProcessHandle):
    """A running nats-server started by :func:`start_broker`.

    Attributes:
        url: ``nats://127.0.0.1:PORT``.
        port: The TCP port (kept across restarts).
        workdir: The server's working directory (log, store).
        store_dir: JetStream's store directory (kept across restarts).
        log_path: The server's log file.

    """

    start_error = BrokerStartError

    def __init__(self, *, binary: Path, workdir: Path, port: int,
                 startup_timeout: float) -> None:
        super().__init__(port=port, workdir=workdir, log_path=workdir / "nats-server.log",
                         startup_timeout=startup_timeout)
        self.url = f"nats://{_HOST}:{port}"
        self.store_dir = workdir / "store"
        self._binary = binary

    def __repr__(self) -> str:
        """Return a short description of the handle."""
        return f"BrokerHandle(url={self.url!r}, pid={self.pid})"

    def _command(self) -> list[str]:
        return [str(self._binary), "-js", "-a", _HOST, "-p", str(self.port),
                "-sd", str(self.store_dir), "-n", f"omconnect-test-{self.port}"]

    def _environment(self) -> dict[str, str]:
        return dict(os.environ)

    def _wait_ready(self, process: subprocess.Popen[bytes], deadline: float,
                    offset: int) -> None:
        while time.monotonic() < deadline:
            if process.poll() is not None:
                output = self._output_since(offset)
                if "address already in use" in output:
                    raise AddressInUse
                raise BrokerStartError(
                    f"nats-server exited with {process.returncode} before becoming ready; "
                    f"log tail:\n{_tail(self.log_path)}")
            if jetstream_ready(self.port, timeout=min(2.0, max(0.2, deadline -
                                                                   time.monotonic()))):
                return
            time.sleep(0.05)
        raise BrokerStartError(f"nats-server on {self.url} not ready after "
                               f"{self._startup_timeout:.0f}s; log tail:\n"
                               f"{_tail(self.log_path)}")


def start_broker(workdir: Path, *, startup_timeout: float = 120.0) -> BrokerHandle:
    """Start nats-server with JetStream on a free 127.0.0.1 port and wait until
    JetStream serves.

    Args:
        workdir: Directory for the log and the store; created if missing. Reusing a
            directory reuses its streams.
        startup_timeout: Seconds to wait for readiness (each start/restart). A start
            restores every stream of the store before JetStream answers: on a loaded
            2-core machine, 30 s were not enough for the several hundred streams and
            buckets of a server that had run 150 pipeline trials.

    Returns:
        A handle whose ``url`` is ``nats://127.0.0.1:PORT``.

    Raises:
        BrokerStartError: If the server does not become ready in time (with the tail of
            its log).
        FileNotFoundError: If no ``nats-server`` binary is installed.

    """
    binary = find_nats_server_binary()
    workdir = Path(workdir).resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    handle = BrokerHandle(binary=binary, workdir=workdir, port=free_port(),
                          startup_timeout=startup_timeout)
    handle.store_dir.mkdir(exist_ok=True)
    handle._launch()
    return handle


def conformance_profile(workdir: Path) -> TransportProfile:
    """The kit's profile for ``omconnect conformance --transport nats``: starts a
    nats-server in ``workdir`` (stopped at the end of the run), restarts it for the
    broker-restart cases and points the unreachable-broker case at a closed port.
    """
    from omconnect.testing.profile import TransportProfile

    broker = start_broker(Path(workdir) / "nats-server")
    return TransportProfile(
        config=profile_options(broker.url),
        broker=broker,
        unreachable_config=unreachable_options(),
        unreachable_timeout=3.0,
        stop=broker.stop,
    )


def profile_options(url: str) -> dict[str, object]:
    """Transport options for a test server: its URL, with the group timings shortened so
    that hand-over cases finish quickly (the transport's defaults otherwise).
    """
    return {"servers": url, "session.timeout.ms": 3000, "heartbeat.interval.ms": 200}


def unreachable_options() -> dict[str, object]:
    """Options pointing at a port nothing listens on, with short timeouts."""
    return {"servers": f"nats://{_HOST}:{free_port()}", "connection.timeout.ms": 1000,
            "request.timeout.ms": 2000, "send.timeout.ms": 3000}
