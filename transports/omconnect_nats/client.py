"""The nats-py side of the transport: one connection and one event loop per transport.

nats-py is asyncio-only; the Transport SPI is synchronous and threaded. A
:class:`NatsClient` runs an event loop of its own on a daemon thread, connects on it
(lazily: a transport that is only built never connects) and bridges every call with
:func:`asyncio.run_coroutine_threadsafe`: :meth:`NatsClient.call` blocks the caller until
the coroutine is done (bounded by a timeout), :meth:`NatsClient.submit` returns a
:class:`concurrent.futures.Future` at once. Every producer, consumer, store and admin of a
transport shares the connection, so publishes, pull requests and API calls of one process
travel on one TCP connection in the order they were made.

Closing drains nothing: pending acknowledgements are failed by their owners, then the
connection closes, the loop stops and the thread ends. A client still open when the
interpreter exits is closed by an :mod:`atexit` hook (before daemon threads are torn
down), so a process that used the transport exits 0 without ``close``.

nats-py is imported lazily (:func:`nats_module`): every module of this package imports
without it, and the error names the ``nats`` extra.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextlib
import logging
import threading
import weakref
from collections.abc import Callable, Coroutine, Mapping
from typing import Any, TypeVar

from omconnect import plugins
from omconnect.errors import IllegalStateError, TransportTimeoutError

__all__ = ["CLIENT_LOGGER", "NatsClient", "nats_module"]

CLIENT_LOGGER = logging.getLogger("omconnect_nats.client")
"""Where connection events (disconnected, reconnected, errors) are logged."""

_T = TypeVar("_T")

_open_clients: weakref.WeakSet[NatsClient] = weakref.WeakSet()


def nats_module() -> Any:
    """The ``nats`` package, or a MissingExtraError naming the ``nats`` extra."""
    return plugins.require("nats", plugin="nats transport", extra="nats")


def _close_all_at_exit() -> None:
    for client in list(_open_clients):
        with contextlib.suppress(Exception):
            client.close(timeout=2.0)


atexit.register(_close_all_at_exit)


class NatsClient:
    """A NATS connection driven by an event loop on a thread of its own.

    Args:
        servers: The server URLs.
        connect_options: Keyword arguments of ``nats.connect`` (timeouts, credentials,
            TLS, pass-through options).
        request_timeout: Seconds a JetStream API call may take.
        name: Names the thread and the connection.
        on_disconnected: Called on the loop when the connection is lost.
        on_reconnected: Called on the loop once it is back.

    """

    def __init__(self, servers: list[str], connect_options: Mapping[str, Any], *,
                 request_timeout: float, name: str,
                 on_disconnected: Callable[[], None] | None = None,
                 on_reconnected: Callable[[], None] | None = None) -> None:
        self.servers = servers
        self.request_timeout = request_timeout
        self._options = dict(connect_options)
        self._name = name
        self._on_disconnected = on_disconnected
        self._on_reconnected = on_reconnected
        self._lock = threading.Lock()
        self._closed = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._nc: Any = None
        self._js: Any = None
        self._connecting: asyncio.Task[Any] | None = None

    # -- the loop ------------------------------------------------------------------------

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        """The client's event loop (started on first use)."""
        with self._lock:
            if self._closed:
                raise IllegalStateError("the nats transport is closed")
            if self._loop is None:
                loop = asyncio.new_event_loop()
                ready = threading.Event()
                thread = threading.Thread(target=self._run, args=(loop, ready), daemon=True,
                                          name=f"omconnect-nats-{self._name}")
                thread.start()
                ready.wait()
                self._loop, self._thread = loop, thread
                _open_clients.add(self)
            return self._loop

    @staticmethod
    def _run(loop: asyncio.AbstractEventLoop, ready: threading.Event) -> None:
        asyncio.set_event_loop(loop)
        loop.call_soon(ready.set)
        try:
            loop.run_forever()
        finally:
            with contextlib.suppress(Exception):
                pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
                for task in pending:
                    task.cancel()
                if pending:
                    loop.run_until_complete(
                        asyncio.gather(*pending, return_exceptions=True))
                loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()

    def on_loop(self) -> bool:
        """Whether the caller runs on the client's loop thread."""
        return self._thread is threading.current_thread()

    def submit(self, coroutine: Coroutine[Any, Any, _T]) -> concurrent.futures.Future[_T]:
        """Run ``coroutine`` on the loop; return at once with its future."""
        try:
            loop = self.loop
        except BaseException:
            coroutine.close()
            raise
        return asyncio.run_coroutine_threadsafe(coroutine, loop)

    def call(self, coroutine: Coroutine[Any, Any, _T], timeout: float | None = None,
             action: str = "calling the server") -> _T:
        """Run ``coroutine`` on the loop and wait for its result.

        Raises:
            IllegalStateError: Called from the loop thread (it would wait for itself).
            TransportTimeoutError: Not done within ``timeout`` seconds (default: the
                request timeout plus the connect timeout); the coroutine is cancelled.
            Exception: Whatever the coroutine raised.

        """
        if self.on_loop():
            coroutine.close()
            raise IllegalStateError("a blocking nats call on the transport's own loop "
                                    "thread (from an acknowledgement callback?)")
        future = self.submit(coroutine)
        limit = timeout if timeout is not None else self.request_timeout + float(
            self._options.get("connect_timeout", 2)) + 1
        try:
            return future.result(limit)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise TransportTimeoutError(
                f"nats: {action}: no answer from {', '.join(self.servers)} within "
                f"{limit:g} s (nats.request.timeout.ms); check nats.servers and that the "
                "server is running") from None

    def soon(self, callback: Callable[..., Any], *args: Any) -> None:
        """Call ``callback(*args)`` on the loop, soon (from any thread)."""
        if self.on_loop():
            callback(*args)
        else:
            self.loop.call_soon_threadsafe(callback, *args)

    # -- the connection ------------------------------------------------------------------

    async def connection(self) -> Any:
        """The connection (on the loop). The first call starts connecting; every caller
        waits for that one attempt, which goes on (reconnecting forever) even when a
        caller stops waiting, until it succeeds or the client closes.
        """
        if self._nc is not None:
            return self._nc
        if self._connecting is None or (self._connecting.done()
                                        and self._connecting.exception() is not None):
            self._connecting = asyncio.get_running_loop().create_task(self._connect())
        return await asyncio.shield(self._connecting)

    async def _connect(self) -> Any:
        nats = nats_module()
        nc = await nats.connect(
            self.servers, name=f"omconnect-{self._name}",
            disconnected_cb=self._disconnected, reconnected_cb=self._reconnected,
            error_cb=self._error, **self._options)
        self._js = nc.jetstream(timeout=self.request_timeout)
        self._nc = nc
        return nc

    async def jetstream(self) -> Any:
        """The JetStream context of the connection (on the loop)."""
        await self.connection()
        return self._js

    @property
    def connected(self) -> Any:
        """The connection once made (``None`` before), for code already on the loop."""
        return self._nc

    @property
    def js(self) -> Any:
        """The JetStream context once connected (``None`` before), for code on the loop."""
        return self._js

    async def _disconnected(self) -> None:
        CLIENT_LOGGER.info("nats: disconnected from %s", ", ".join(self.servers))
        if self._on_disconnected is not None:
            self._on_disconnected()

    async def _reconnected(self) -> None:
        CLIENT_LOGGER.info("nats: reconnected to %s", self._nc.connected_url.netloc
                           if self._nc is not None and self._nc.connected_url else "?")
        if self._on_reconnected is not None:
            self._on_reconnected()

    async def _error(self, error: Exception) -> None:
        CLIENT_LOGGER.debug("nats: %s", error)

    # -- closing -------------------------------------------------------------------------

    def close(self, timeout: float = 5.0) -> None:
        """Close the connection, stop the loop and end its thread. Idempotent; from any
        thread but the loop's (there it only schedules the close).
        """
        with self._lock:
            if self._closed:
                return
            self._closed = True
            loop, thread = self._loop, self._thread
        _open_clients.discard(self)
        if loop is None or thread is None:
            return

        async def shut() -> None:
            nc, self._nc = self._nc, None
            connecting = self._connecting
            if connecting is not None and not connecting.done():
                connecting.cancel()
            if nc is not None and not nc.is_closed:
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(nc.close(), timeout)
            asyncio.get_running_loop().stop()

        if thread is threading.current_thread():
            loop.create_task(shut())
            return
        with contextlib.suppress(RuntimeError):  # the loop already stopped
            asyncio.run_coroutine_threadsafe(shut(), loop)
        thread.join(timeout + 1)
