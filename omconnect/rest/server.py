"""Serving the REST API with uvicorn on a thread beside the worker.

The socket is bound before the server thread starts, so a port in use is an error at
once (naming the address) and port 0 picks a free port, readable as
:attr:`RestServer.port`. uvicorn leaves signals to the main thread (the CLI's) and
logging to the application's configuration; its access log is the ``uvicorn.access``
logger (paths and status codes only: bodies, where configs and secrets are, are never
logged).
"""

from __future__ import annotations

import logging
import socket
import threading
import time

import uvicorn

from omconnect.errors import ConnectError
from omconnect.rest.app import create_app
from omconnect.rest.auth import RestAuth
from omconnect.runtime.herder_api import Herder

__all__ = ["DEFAULT_HOST", "DEFAULT_PORT", "RestServer", "start_server"]

_log = logging.getLogger("omconnect.rest")

DEFAULT_HOST = "127.0.0.1"
"""Only this machine can connect unless told otherwise."""

DEFAULT_PORT = 8083
"""Kafka Connect's port."""

_STARTUP_TIMEOUT_S = 10.0


class RestServer:
    """The REST API of one herder, served on a background thread.

    Args:
        herder: The herder to serve.
        host: The address to listen on.
        port: The port (0: any free port).
        auth: Who may call it; default the worker config's ``rest.auth.*``.
        graceful_timeout_s: On :meth:`stop`, how long requests in progress may finish.

    Raises:
        ConfigError: The ``rest.auth.*`` settings are invalid.

    """

    def __init__(self, herder: Herder, *, host: str = DEFAULT_HOST,
                 port: int = DEFAULT_PORT, auth: RestAuth | None = None,
                 graceful_timeout_s: int = 5) -> None:
        self.app = create_app(herder, auth=auth)
        self.host = host
        self._requested_port = port
        self._graceful_timeout_s = graceful_timeout_s
        self._socket: socket.socket | None = None
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._failure: BaseException | None = None

    @property
    def port(self) -> int:
        """The port listened on (the one picked, when 0 was asked for)."""
        if self._socket is None:
            return self._requested_port
        return int(self._socket.getsockname()[1])

    @property
    def url(self) -> str:
        """``http://host:port``."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    def start(self) -> RestServer:
        """Listen and serve; returns once requests are accepted.

        Raises:
            ConnectError: The address cannot be listened on, or the server did not start.

        """
        if self._thread is not None:
            return self
        self._socket = _listen(self.host, self._requested_port)
        if not self.app.state.auth.enabled and self.host not in ("127.0.0.1", "::1",
                                                                 "localhost"):
            _log.warning("the REST API listens on %s without authentication: anyone who "
                         "can reach it can run code through connector configs; set "
                         "rest.auth.token", self.url)
        config = uvicorn.Config(self.app, log_config=None, lifespan="off",
                                proxy_headers=False, server_header=False,
                                timeout_graceful_shutdown=self._graceful_timeout_s)
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._serve, name="omconnect-rest",
                                        daemon=True)
        self._thread.start()
        deadline = time.monotonic() + _STARTUP_TIMEOUT_S
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                self.stop()
                raise ConnectError(f"the REST API did not start on {self.url}: "
                                   f"{self._failure or 'timed out'}")
            time.sleep(0.01)
        return self

    def _serve(self) -> None:
        assert self._server is not None and self._socket is not None
        try:
            self._server.run(sockets=[self._socket])
        except BaseException as exc:  # SystemExit from uvicorn included: keep it here
            self._failure = exc
            _log.error("the REST API server stopped: %r", exc)

    def stop(self) -> None:
        """Stop accepting requests, let those in progress finish (within the graceful
        timeout), and close the socket. Idempotent.
        """
        server, thread, sock = self._server, self._thread, self._socket
        if server is not None:
            server.should_exit = True
        if thread is not None:
            thread.join(self._graceful_timeout_s + 5)
        if sock is not None:
            sock.close()
        self._thread = self._server = None

    def __enter__(self) -> RestServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def start_server(herder: Herder, *, host: str = DEFAULT_HOST,
                 port: int = DEFAULT_PORT, auth: RestAuth | None = None) -> RestServer:
    """Serve ``herder``'s REST API on a background thread; returns once it accepts
    requests. Stop it with :meth:`RestServer.stop` (before stopping the herder).

    Args:
        herder: The herder to serve.
        host: The address to listen on (default 127.0.0.1: this machine only).
        port: The port (0: any free port; see :attr:`RestServer.port`).
        auth: Who may call it; default the worker config's ``rest.auth.*`` settings.

    Raises:
        ConfigError: The ``rest.auth.*`` settings are invalid.
        ConnectError: The address cannot be listened on.

    """
    return RestServer(herder, host=host, port=port, auth=auth).start()


def _listen(host: str, port: int) -> socket.socket:
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[0]
        sock = socket.socket(family, kind, proto)
    except OSError as exc:
        raise ConnectError(f"the REST API cannot listen on {host}:{port}: {exc}; check "
                           "--rest-host") from exc
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(2048)
    except OSError as exc:
        sock.close()
        reason = exc.strerror or str(exc)
        raise ConnectError(f"the REST API cannot listen on {host}:{port}: {reason}; "
                           "choose another --rest-port (0 picks a free one)") from exc
    return sock
