"""Isolated RabbitMQ test brokers: a fresh vhost per test on the local server.

Unlike the Kafka and Pulsar launchers this module does not launch a broker
process: the machine (and CI) already runs RabbitMQ on ``127.0.0.1:5672``
(``guest``/``guest``), and an Erlang node is too slow to start per test. Instead
:func:`start_broker` creates a private vhost ``omconnect-test-<random>`` with
``rabbitmqctl add_vhost`` and grants ``guest`` full permissions on it, so tests
never see each other's exchanges, queues or messages; :meth:`BrokerHandle.stop`
deletes the vhost (and with it everything declared inside)::

    with start_broker(tmp_path) as broker:
        connection = pika.BlockingConnection(pika.URLParameters(broker.url))

:meth:`BrokerHandle.restart` restarts the *shared* RabbitMQ application
(``rabbitmqctl stop_app`` + ``start_app``), which drops every client connection
on the server, not only this vhost's. Durable queues and persistent messages
survive it; transient ones do not. Tests that restart must not run concurrently
with other RabbitMQ tests.

:func:`ensure_server_running` starts the server (``rabbitmq-server -detached``,
or ``rabbitmqctl start_app`` if the node is up but the app is stopped) when
nothing answers on the AMQP port; CI calls it before the RabbitMQ tests.

Measured (RabbitMQ 3.10.8, 2-core machine): every ``rabbitmqctl`` call costs
~0.4-0.6 s, almost all of it starting the Erlang CLI VM, so :func:`start_broker`
(``add_vhost`` + ``set_permissions`` + a pika connection check) takes ~1.1-1.3 s
and :meth:`BrokerHandle.stop` ~0.5 s; prefer one vhost per test module over one
per test when a suite has many tests. ``stop_app`` takes ~0.6 s and ``start_app``
~1.1 s, so :meth:`BrokerHandle.restart` takes ~2 s until a connection to the
vhost succeeds again. ``rabbitmqctl`` must run as root (or the ``rabbitmq`` user)
to read the Erlang cookie.

All vhosts created by this process are deleted by an :mod:`atexit` hook if the
test run forgets to stop them.
"""

from __future__ import annotations

import secrets
import shutil
import socket
import subprocess
import time
import urllib.parse
from pathlib import Path
from typing import TYPE_CHECKING

from omconnect_testbrokers.handles import BrokerHandleBase, BrokerStartError

if TYPE_CHECKING:
    from omconnect.testing.profile import TransportProfile

__all__ = [
    "BrokerHandle",
    "BrokerStartError",
    "RabbitmqctlError",
    "conformance_profile",
    "ensure_server_running",
    "rabbitmqctl",
    "start_broker",
]

DEFAULT_HOST = "127.0.0.1"
"""Address of the local RabbitMQ server."""

DEFAULT_PORT = 5672
"""AMQP port of the local RabbitMQ server."""

VHOST_PREFIX = "omconnect-test-"
"""Prefix of every vhost created by :func:`start_broker`."""

_CTL_CANDIDATES = ("/usr/sbin/rabbitmqctl", "/usr/lib/rabbitmq/bin/rabbitmqctl")
_SERVER_CANDIDATES = ("/usr/sbin/rabbitmq-server", "/usr/lib/rabbitmq/bin/rabbitmq-server")


class RabbitmqctlError(RuntimeError):
    """Raised when a ``rabbitmqctl`` command exits non-zero."""


def _find(name: str, candidates: tuple[str, ...]) -> str:
    found = shutil.which(name)
    if found:
        return found
    for candidate in candidates:
        if Path(candidate).is_file():
            return candidate
    raise FileNotFoundError(f"{name} not found on PATH or in {', '.join(candidates)}")


def rabbitmqctl(*args: str, timeout: float = 60.0) -> str:
    """Run ``rabbitmqctl`` with ``args`` and return its standard output.

    Args:
        *args: Command and arguments, e.g. ``("add_vhost", "name")``.
        timeout: Seconds before the command is killed.

    Returns:
        The command's standard output.

    Raises:
        RabbitmqctlError: If the command exits non-zero.
        FileNotFoundError: If ``rabbitmqctl`` is not installed.
    """
    command = [_find("rabbitmqctl", _CTL_CANDIDATES), *args]
    result = subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False)
    if result.returncode != 0:
        raise RabbitmqctlError(
            f"{' '.join(command)} exited with {result.returncode}: "
            f"{(result.stderr or result.stdout).strip()}"
        )
    return result.stdout


def _port_open(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return True
    except OSError:
        return False


def _amqp_url(host: str, port: int, user: str, password: str, vhost: str) -> str:
    quote = urllib.parse.quote
    return (
        f"amqp://{quote(user, safe='')}:{quote(password, safe='')}@{host}:{port}/"
        f"{quote(vhost, safe='')}"
    )


def _wait_for_connection(url: str, timeout: float) -> None:
    """Poll until a pika ``BlockingConnection`` to ``url`` opens (then close it)."""
    import pika

    parameters = pika.URLParameters(url)
    parameters.connection_attempts = 1
    parameters.socket_timeout = 2
    parameters.blocked_connection_timeout = 2
    deadline = time.monotonic() + timeout
    last_error = "not attempted"
    while time.monotonic() < deadline:
        try:
            connection = pika.BlockingConnection(parameters)
        except Exception as exc:  # any pika/socket failure means "retry"
            last_error = repr(exc)
            time.sleep(0.2)
            continue
        connection.close()
        return
    raise BrokerStartError(f"no AMQP connection to {url} after {timeout:.0f}s: {last_error}")


def ensure_server_running(
    *,
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    user: str = "guest",
    password: str = "guest",
    timeout: float = 90.0,
) -> None:
    """Make sure the local RabbitMQ server accepts AMQP connections.

    Does nothing when the port already answers. Otherwise starts the
    application with ``rabbitmqctl start_app`` if the Erlang node is up (e.g.
    after an interrupted :meth:`BrokerHandle.restart`), or the whole server
    with ``rabbitmq-server -detached``, and waits until a pika connection to
    the default vhost succeeds.

    Args:
        host: AMQP host; only the local server can be started.
        port: AMQP port.
        user: User for the readiness connection.
        password: Password for the readiness connection.
        timeout: Seconds to wait for the server.

    Raises:
        BrokerStartError: If the server does not accept connections in time.
    """
    if _port_open(host, port):
        return
    try:
        rabbitmqctl("ping", timeout=30)
        node_up = True
    except (RabbitmqctlError, subprocess.TimeoutExpired):
        node_up = False
    if node_up:
        rabbitmqctl("start_app", timeout=timeout)
    else:
        server = _find("rabbitmq-server", _SERVER_CANDIDATES)
        subprocess.run(
            [server, "-detached"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=60,
            check=False,
        )
    _wait_for_connection(_amqp_url(host, port, user, password, "/"), timeout)


class BrokerHandle(BrokerHandleBase):
    """A private vhost on the local RabbitMQ server, made by :func:`start_broker`.

    :meth:`stop` deletes the vhost and everything in it (raising
    :class:`RabbitmqctlError` if ``rabbitmqctl delete_vhost`` fails for a reason other
    than the vhost being gone already). :meth:`restart` runs ``rabbitmqctl stop_app``
    then ``start_app`` on the shared server, which disconnects every client of every
    vhost; durable queues and persistent messages survive. It raises
    :class:`BrokerStartError` if the vhost does not accept connections in time.

    Attributes:
        url: AMQP URL of the vhost, ``amqp://guest:guest@127.0.0.1:5672/<vhost>``
            (vhost percent-encoded), usable with ``pika.URLParameters``.
        vhost: The vhost name (not encoded).
        host: Server address.
        port: AMQP port.
    """

    def __init__(
        self, *, host: str, port: int, user: str, password: str, vhost: str, timeout: float
    ) -> None:
        super().__init__()
        self.host = host
        self.port = port
        self.vhost = vhost
        self.url = _amqp_url(host, port, user, password, vhost)
        self._user = user
        self._timeout = timeout

    @property
    def running(self) -> bool:
        """Whether the vhost still exists (i.e. :meth:`stop` was not called)."""
        return not self._closed

    def __repr__(self) -> str:
        """Return a short description of the handle."""
        return f"BrokerHandle(vhost={self.vhost!r}, running={self.running})"

    def _start(self) -> None:
        rabbitmqctl("set_permissions", "-p", self.vhost, self._user, ".*", ".*", ".*")
        _wait_for_connection(self.url, self._timeout)

    def _restart(self) -> None:
        rabbitmqctl("stop_app", timeout=self._timeout)
        rabbitmqctl("start_app", timeout=self._timeout)
        _wait_for_connection(self.url, self._timeout)

    def _release(self) -> None:
        try:
            rabbitmqctl("delete_vhost", self.vhost)
        except RabbitmqctlError as exc:
            if "does not exist" not in str(exc) and "no_such_vhost" not in str(exc):
                raise


def start_broker(
    workdir: Path | None = None,
    *,
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    user: str = "guest",
    password: str = "guest",
    timeout: float = 60.0,
) -> BrokerHandle:
    """Create a fresh vhost on the local RabbitMQ server and return its handle.

    Args:
        workdir: Accepted for symmetry with the other brokers' ``start_broker``;
            unused (RabbitMQ keeps its own data directory).
        host: AMQP host of the running server.
        port: AMQP port of the running server.
        user: Existing user that gets full permissions on the vhost.
        password: That user's password (goes into ``url``).
        timeout: Seconds to wait for the vhost to accept connections (also
            used by :meth:`BrokerHandle.restart`).

    Returns:
        A handle whose ``url`` points at the new vhost.

    Raises:
        RabbitmqctlError: If the vhost cannot be created.
        BrokerStartError: If the vhost does not accept connections in time.
    """
    del workdir  # unused; see docstring
    vhost = f"{VHOST_PREFIX}{secrets.token_hex(6)}"
    rabbitmqctl("add_vhost", vhost)
    handle = BrokerHandle(
        host=host, port=port, user=user, password=password, vhost=vhost, timeout=timeout
    )
    handle._launch()
    return handle


STREAM_MODE_LIMITS = {
    "test_replay_from_offset": "RabbitMQ publisher confirms carry no stream offset, so "
                               "acknowledgements report offset None",
}
"""Cases of the suite that cannot pass on RabbitMQ stream topics, with the reason."""


def conformance_profile(workdir: Path) -> TransportProfile:
    """The suite's profile for ``omconnect conformance --transport rabbitmq``.

    Creates a private vhost (deleted at the end of the run), restarts the RabbitMQ
    application for the broker-restart case, and points the unreachable-broker case at a
    closed port. The transport runs with its default, stream topics: most cases of the suite make a
    fresh group *after* producing, which classic topics (a group receives only what is
    published after its queues exist) do not support; ``tests/rabbitmq`` runs classic
    mode with the groups declared first.

    Args:
        workdir: Unused (RabbitMQ keeps its own data directory).

    """
    from omconnect.testing.profile import TransportProfile

    ensure_server_running()
    broker = start_broker(workdir)
    with socket.socket() as probe:
        probe.bind((DEFAULT_HOST, 0))
        closed_port = probe.getsockname()[1]
    profile = TransportProfile(
        config={"url": broker.url, "heartbeat.interval.ms": 200,
                "session.timeout.ms": 2000},
        broker=broker,
        unreachable_config={"url": f"amqp://guest:guest@{DEFAULT_HOST}:{closed_port}/%2F",
                            "connection.timeout.ms": 3000},
        unreachable_timeout=3.0,
        stop=broker.stop,
    )
    expected = getattr(profile, "expected_failures", None)
    if isinstance(expected, dict):
        expected.update(STREAM_MODE_LIMITS)
    return profile
