"""One pika connection on an I/O thread of its own, reconnecting with backoff.

pika connections are not thread-safe, so every producer, consumer, key/value store and
admin owns one :class:`IoConnection`: a ``SelectConnection`` whose ioloop runs on a
dedicated daemon thread. Other threads never touch a pika object; they hand work to the
loop with :meth:`IoConnection.call` (run a function there and wait for its result, which
may be a :class:`~concurrent.futures.Future` completed by a pika callback) or
:meth:`IoConnection.post` (run it, don't wait).

When the connection is lost the owner's ``on_lost`` is called on the loop (it fails what
was in flight), then the connection is re-opened after ``backoff.ms``, doubling up to
``backoff.max.ms``; ``on_connected`` runs again on each new connection so the owner can
re-declare its channels.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
import urllib.parse
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any

import attrs

from omconnect import plugins
from omconnect.errors import (
    ConnectError,
    IllegalStateError,
    RetriableError,
    TransportTimeoutError,
)
from omconnect_rabbitmq.errors import ErrorContext, translate, translated_errors

__all__ = ["ChannelOps", "ConnectionSettings", "IoConnection", "chain", "gather", "pika_module"]

_log = logging.getLogger(__name__)


def pika_module() -> Any:
    """The ``pika`` package, or a MissingExtraError naming the ``rabbitmq`` extra."""
    return plugins.require("pika", plugin="rabbitmq transport", extra="rabbitmq")


@attrs.frozen(kw_only=True)
class ConnectionSettings:
    """How to connect: the parsed ``rabbitmq.*`` connection options.

    Attributes:
        url: The AMQP URL (``amqp://user:password@host:port/vhost``; ``amqps://`` for TLS).
        timeout: Seconds to open a connection (TCP, TLS and AMQP handshakes) before failing.
        backoff: Seconds before the first reconnection attempt.
        backoff_max: The most seconds between reconnection attempts.
        heartbeat: AMQP heartbeat in seconds (``None``: the broker's proposal).
        tls: ``ssl.SSLContext`` keyword settings (``ca.file``, ``cert.file``, ``key.file``,
            ``verify``, ``server.name``) or empty for the URL's own.
        client: pika ``ConnectionParameters`` attributes passed through (native options).

    """

    url: str
    timeout: float = 10.0
    backoff: float = 0.1
    backoff_max: float = 5.0
    heartbeat: int | None = None
    tls: Mapping[str, Any] = attrs.field(factory=dict)
    client: Mapping[str, Any] = attrs.field(factory=dict)

    @property
    def target(self) -> ErrorContext:
        """Host, port, user and vhost, for error messages."""
        parts = urllib.parse.urlsplit(self.url)
        vhost = urllib.parse.unquote(parts.path[1:]) if len(parts.path) > 1 else "/"
        port = parts.port or (5671 if parts.scheme == "amqps" else 5672)
        return ErrorContext(parts.hostname or "localhost", port,
                                urllib.parse.unquote(parts.username or "guest"), vhost)

    def parameters(self) -> Any:
        """Pika connection parameters for these settings."""
        pika = pika_module()
        parameters = pika.URLParameters(self.url)
        parameters.socket_timeout = self.timeout
        parameters.stack_timeout = self.timeout
        parameters.blocked_connection_timeout = max(self.timeout, 1.0)
        parameters.connection_attempts = 1
        if self.heartbeat is not None:
            parameters.heartbeat = self.heartbeat
        if self.tls:
            parameters.ssl_options = _ssl_options(pika, self.tls, self.target.host)
        for name, value in self.client.items():
            setattr(parameters, name, value)
        return parameters


def _ssl_options(pika: Any, tls: Mapping[str, Any], host: str) -> Any:
    import ssl

    context = ssl.create_default_context(cafile=tls.get("ca.file") or None)
    if tls.get("cert.file"):
        context.load_cert_chain(tls["cert.file"], tls.get("key.file") or None)
    if not tls.get("verify", True):
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    return pika.SSLOptions(context, tls.get("server.name") or host)


class ChannelOps:
    """A channel's synchronous AMQP methods as futures; loop thread only.

    Every future still pending when the channel closes fails with the translated close
    reason, so a caller waiting in :meth:`IoConnection.call` never hangs on a dead channel.

    Args:
        channel: An open pika channel.
        action: What the channel is for, in error messages.
        target: The connection's broker/user/vhost.

    """

    def __init__(self, channel: Any, action: str, target: ErrorContext) -> None:
        self.channel = channel
        self.action = action
        self.target = target
        self.closed: BaseException | None = None
        self._pending: set[Future[Any]] = set()
        self._on_close: list[Callable[[BaseException], None]] = []
        channel.add_on_close_callback(self._closed)

    @classmethod
    def open(cls, connection: Any, action: str, target: ErrorContext) -> Future[ChannelOps]:
        """Open a channel on ``connection``; the future completes once it is open."""
        future: Future[ChannelOps] = Future()

        def opened(channel: Any) -> None:
            future.set_result(cls(channel, action, target))

        try:
            connection.channel(on_open_callback=opened)
        except Exception as exc:
            future.set_exception(translate(exc, action=action, where=target))
        return future

    def on_close(self, callback: Callable[[BaseException], None]) -> None:
        """Call ``callback(reason)`` on the loop when the channel closes."""
        self._on_close.append(callback)

    def _closed(self, _channel: Any, reason: BaseException) -> None:
        self.closed = reason
        error = translate(reason, action=self.action, where=self.target)
        pending, self._pending = self._pending, set()
        for future in pending:
            if not future.done():
                future.set_exception(error)
        for callback in self._on_close:
            try:
                callback(reason)
            except Exception:
                _log.exception("channel close callback failed")

    def do(self, method: str, *args: Any, **kwargs: Any) -> Future[Any]:
        """Call the channel's ``method`` with a completion callback; its future."""
        future: Future[Any] = Future()
        if self.closed is not None:
            future.set_exception(translate(self.closed, action=self.action, where=self.target))
            return future
        self._pending.add(future)

        def done(frame: Any) -> None:
            self._pending.discard(future)
            if not future.done():
                future.set_result(frame)

        try:
            getattr(self.channel, method)(*args, callback=done, **kwargs)
        except Exception as exc:
            self._pending.discard(future)
            future.set_exception(translate(exc, action=self.action, where=self.target))
        return future

    def close(self) -> None:
        """Close the channel (if it is still open)."""
        with contextlib.suppress(Exception):
            if self.channel.is_open:
                self.channel.close()


class IoConnection:
    """A pika ``SelectConnection`` on its own I/O thread; see the module docstring.

    Args:
        settings: Where and how to connect.
        name: What the connection serves (thread name, error messages).
        on_connected: Called on the loop with the connection each time it opens; may
            return a future (the owner's channel setup) that must complete before the
            connection counts as ready.
        on_lost: Called on the loop with the translated error when it is lost.
        reconnect: Re-open a lost connection (with backoff) rather than stay down.

    """

    def __init__(
        self,
        settings: ConnectionSettings,
        *,
        name: str,
        on_connected: Callable[[Any], Future[Any] | None] | None = None,
        on_lost: Callable[[ConnectError], None] | None = None,
        reconnect: bool = True,
    ) -> None:
        self.settings = settings
        self.name = name
        self.target = settings.target
        self._on_connected = on_connected
        self._on_lost = on_lost
        self._reconnect = reconnect
        self._pika = pika_module()
        self._ioloop: Any = None
        self._connection: Any = None
        self._thread: threading.Thread | None = None
        self._opened: Future[None] = Future()
        self._closing = False
        self._stopped = threading.Event()
        self._delay = settings.backoff
        self._start_deadline = 0.0  # set by start(): until then a retriable setup is retried
        self.connected = threading.Event()
        self.generation = 0
        """Counts connections opened so far; owners compare it to spot a reconnection."""

    # -- lifecycle -----------------------------------------------------------------------
    def start(self) -> IoConnection:
        """Open the connection; return once it is open.

        Raises:
            TransportTimeoutError: No connection within the configured timeout.
            TransportError: The broker refused the connection (credentials, vhost).
            RetriableTransportError: The broker is unreachable.

        """
        from pika.adapters.select_connection import IOLoop

        self._ioloop = IOLoop()
        self._start_deadline = time.monotonic() + self.settings.timeout
        self._thread = threading.Thread(target=self._run, name=f"omconnect-rabbitmq-{self.name}",
                                        daemon=True)
        self._open()
        self._thread.start()
        try:
            self._opened.result(timeout=self.settings.timeout + 2.0)
        except FutureTimeout:
            self.close()
            raise TransportTimeoutError(
                f"connecting for {self.name} failed: no answer from the broker ({self.target}) "
                f"within {self.settings.timeout:g} s; check rabbitmq.url and that RabbitMQ is "
                "running") from None
        except BaseException:
            self.close()
            raise
        return self

    def _run(self) -> None:
        try:
            self._ioloop.start()
        except Exception:  # a bug in a callback: log it, never die silently
            _log.exception("%s: the I/O loop failed", self.name)
        finally:
            self._closing = True
            self._stopped.set()
            with contextlib.suppress(Exception):
                self._ioloop.close()

    def _open(self) -> None:
        try:
            self._connection = self._pika.SelectConnection(
                self.settings.parameters(),
                on_open_callback=self._opened_cb,
                on_open_error_callback=self._open_failed,
                on_close_callback=self._lost,
                custom_ioloop=self._ioloop,
            )
        except Exception as exc:  # bad parameters: fail the first start, else retry
            self._open_failed(None, exc)

    def _opened_cb(self, connection: Any) -> None:
        self._delay = self.settings.backoff
        self.generation += 1
        try:
            setup = self._on_connected(connection) if self._on_connected is not None else None
        except Exception as exc:
            self._setup_failed(connection, exc)
            return
        if isinstance(setup, Future):
            setup.add_done_callback(lambda done: self._setup_done(connection, done))
        else:
            self._ready()

    def _setup_done(self, connection: Any, done: Future[Any]) -> None:
        exc = done.exception()
        if exc is not None:
            self._setup_failed(connection, exc)
        else:
            self._ready()

    def _ready(self) -> None:
        self.connected.set()
        if not self._opened.done():
            self._opened.set_result(None)

    def _setup_failed(self, connection: Any, exc: BaseException) -> None:
        """The owner could not set up its channels: treat it as a lost connection (close
        it; the close handler reconnects), except that the first start fails at once when
        the error is not retriable or the connection timeout has passed (a stream queue
        still recovering right after a broker restart is retried).
        """
        _log.warning("%s: setting up the connection failed: %s", self.name, exc)
        error = translate(exc, action=f"setting up {self.name}", where=self.target)
        if not self._opened.done() and (not isinstance(error, RetriableError)
                                        or time.monotonic() >= self._start_deadline):
            self._opened.set_exception(error)
            self._reconnect = False
        with contextlib.suppress(Exception):
            connection.close()

    def _open_failed(self, _connection: Any, exc: BaseException) -> None:
        error = translate(exc, action=f"connecting for {self.name}", where=self.target,
                          timeout=self.settings.timeout)
        if self._closing:
            self._ioloop.stop()
            return
        if not self._opened.done():
            self._opened.set_exception(error)
            self._ioloop.stop()
            return
        _log.info("%s: reconnecting failed (%s); retrying in %.1f s", self.name, error,
                  self._delay)
        self._schedule_reconnect(error)

    def _lost(self, _connection: Any, reason: BaseException) -> None:
        self.connected.clear()
        if self._closing:
            self._ioloop.stop()
            return
        error = translate(reason, action=f"{self.name}", where=self.target)
        _log.info("%s: connection lost (%s); reconnecting in %.1f s", self.name, error,
                  self._delay)
        if self._on_lost is not None:
            try:
                self._on_lost(error)
            except Exception:
                _log.exception("%s: connection-lost handler failed", self.name)
        self._schedule_reconnect(error)

    def _schedule_reconnect(self, error: ConnectError) -> None:
        del error  # logged by the caller
        if self._closing or not self._reconnect:
            self._ioloop.stop()
            return
        delay, self._delay = self._delay, min(self._delay * 2, self.settings.backoff_max)
        self._ioloop.call_later(delay, self._open)

    def close(self, timeout: float = 5.0) -> None:
        """Close the connection and stop the thread. Idempotent; any thread but the loop's."""
        if self._thread is None or self._closing:
            self._closing = True
            return
        self._closing = True

        def shut() -> None:
            connection = self._connection
            if connection is not None and not (connection.is_closed or connection.is_closing):
                try:
                    connection.close()  # its close callback stops the loop
                    return
                except Exception as exc:
                    _log.debug("%s: closing the connection failed: %s", self.name, exc)
            self._ioloop.stop()

        with contextlib.suppress(Exception):
            self._ioloop.add_callback_threadsafe(shut)
        if threading.current_thread() is not self._thread and not self._stopped.wait(timeout):
            with contextlib.suppress(Exception):
                self._ioloop.add_callback_threadsafe(self._ioloop.stop)
            self._stopped.wait(1.0)

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called."""
        return self._closing

    # -- handing work to the loop ----------------------------------------------------------
    def on_loop(self) -> bool:
        """Whether the calling thread is the I/O thread."""
        return threading.current_thread() is self._thread

    def post(self, work: Callable[[], Any]) -> None:
        """Run ``work()`` on the loop soon; don't wait. Errors are logged."""
        if self._closing:
            raise IllegalStateError(f"the {self.name} connection is closed")

        def run() -> None:
            try:
                work()
            except Exception:
                _log.exception("%s: work on the I/O thread failed", self.name)

        self._hand_over(run)

    def _hand_over(self, work: Callable[[], None]) -> None:
        try:
            self._ioloop.add_callback_threadsafe(work)
        except Exception as exc:  # the loop stopped under us
            raise IllegalStateError(f"the {self.name} connection is closed") from exc

    def call(self, work: Callable[[], Any], *, timeout: float | None = None,
             action: str = "") -> Any:
        """Run ``work()`` on the loop and return its result; if that is a Future, wait for
        it and return its result.

        Raises:
            TransportTimeoutError: Not done within ``timeout`` (default: the connection
                timeout).
            ConnectError: What ``work`` raised or its future failed with (translated).

        """
        if self._closing:
            raise IllegalStateError(f"the {self.name} connection is closed")
        outer: Future[Any] = Future()

        def run() -> None:
            try:
                result = work()
            except BaseException as exc:
                outer.set_exception(exc)
                return
            if isinstance(result, Future):
                result.add_done_callback(lambda f: _copy(f, outer))
            else:
                outer.set_result(result)

        limit = self.settings.timeout if timeout is None else timeout
        if self.on_loop():
            raise IllegalStateError("IoConnection.call from the I/O thread would deadlock")
        self._hand_over(run)
        with translated_errors(action or self.name, where=self.target):
            try:
                return outer.result(timeout=limit)
            except FutureTimeout:
                raise TransportTimeoutError(
                    f"{action or self.name} got no answer from the broker ({self.target}) "
                    f"within {limit:g} s") from None

    def channel(self, action: str) -> Future[ChannelOps]:
        """Open a channel (loop thread only)."""
        return ChannelOps.open(self._connection, action, self.target)

    @property
    def connection(self) -> Any:
        """The current pika connection (loop thread only)."""
        return self._connection

    def call_later(self, delay: float, work: Callable[[], Any]) -> Any:
        """Run ``work`` on the loop after ``delay`` seconds (loop thread only)."""
        return self._ioloop.call_later(delay, work)

    def cancel_timer(self, handle: Any) -> None:
        """Cancel a :meth:`call_later` (loop thread only)."""
        with contextlib.suppress(Exception):
            self._ioloop.remove_timeout(handle)


def _copy(source: Future[Any], target: Future[Any]) -> None:
    if target.done():
        return
    exc = source.exception()
    if exc is not None:
        target.set_exception(exc)
    else:
        target.set_result(source.result())


def chain(first: Future[Any], then: Callable[[Any], Future[Any] | Any]) -> Future[Any]:
    """A future of ``then(first's result)`` (which may itself be a future); loop thread."""
    result: Future[Any] = Future()

    def step(done: Future[Any]) -> None:
        exc = done.exception()
        if exc is not None:
            result.set_exception(exc)
            return
        try:
            value = then(done.result())
        except BaseException as error:
            result.set_exception(error)
            return
        if isinstance(value, Future):
            value.add_done_callback(lambda f: _copy(f, result))
        else:
            result.set_result(value)

    first.add_done_callback(step)
    return result


def gather(futures: list[Future[Any]]) -> Future[list[Any]]:
    """A future of every result of ``futures`` (fails with the first failure)."""
    result: Future[list[Any]] = Future()
    if not futures:
        result.set_result([])
        return result
    remaining = [len(futures)]

    def one(done: Future[Any]) -> None:
        if result.done():
            return
        exc = done.exception()
        if exc is not None:
            result.set_exception(exc)
            return
        remaining[0] -= 1
        if remaining[0] == 0:
            result.set_result([f.result() for f in futures])

    for future in futures:
        future.add_done_callback(one)
    return result
