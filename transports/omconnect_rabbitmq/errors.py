"""Translating pika's exceptions into omconnect's, at the transport's boundary.

No pika exception leaves the transport; each becomes one of::

    ConnectError
    ├── TransportError                   auth refused, vhost missing, channel closed by a
    │   │                                 broker precondition (e.g. inequivalent arguments)
    │   ├── MessageTooLargeError          a message over the broker's max_message_size or
    │   │                                 the transport's rabbitmq.max.message.bytes
    │   └── RetriableTransportError       connection lost, broker restarting, heartbeat
    │       └── TransportTimeoutError     no connection within rabbitmq.connection.timeout.ms
    └── ...

The original exception is chained (``raise ... from exc``) and the broker's own reply text
is kept in the message.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from typing import Any

from omconnect.errors import (
    ConnectError,
    MessageTooLargeError,
    RetriableTransportError,
    TransportError,
    TransportTimeoutError,
)

__all__ = ["ErrorContext", "translate", "translated_errors"]

_TOO_LARGE = re.compile(r"message size (\d+) is larger than (?:configured )?max size (\d+)")
_AUTH_CODES = (403, 530)
"""ACCESS_REFUSED and NOT_ALLOWED: wrong credentials, missing vhost or permissions."""
_PRECONDITION_FAILED = 406
_RETRIABLE_CODES = (320, 504, 505, 506, 541)
"""CONNECTION_FORCED (broker shutting down), CHANNEL_ERROR, UNEXPECTED_FRAME,
RESOURCE_ERROR and INTERNAL_ERROR: worth another try on a new connection."""
_NOT_FOUND = 404
_RECOVERING = "is down or inaccessible"
"""In a NOT_FOUND reply: the queue exists, but its home node has not recovered it yet
(right after a broker restart); worth another try."""


class ErrorContext:
    """Where a connection goes, for error messages (never the password).

    Args:
        host: The broker host.
        port: The AMQP port.
        user: The user name.
        vhost: The virtual host.

    """

    def __init__(self, host: str, port: int, user: str, vhost: str) -> None:
        self.host = host
        self.port = port
        self.user = user
        self.vhost = vhost

    def __str__(self) -> str:
        return f"user {self.user!r} on vhost {self.vhost!r} at {self.host}:{self.port}"


def _reply(exc: BaseException) -> tuple[int | None, str]:
    """(reply code, reply text) of a pika close error, or (None, its text)."""
    code = getattr(exc, "reply_code", None)
    text = getattr(exc, "reply_text", None)
    if isinstance(code, int):
        return code, str(text or "")
    if exc.args and isinstance(exc.args[0], BaseException):
        return _reply(exc.args[0])
    attempts = getattr(exc, "exceptions", None)  # pika's AMQPConnectionWorkflowFailed
    if isinstance(attempts, list) and attempts and isinstance(attempts[-1], BaseException):
        return _reply(attempts[-1])
    return None, str(exc) or repr(exc)


def translate(
    exc: BaseException,
    *,
    action: str,
    where: ErrorContext | None = None,
    timeout: float | None = None,
    **context: Any,
) -> ConnectError:
    """The omconnect error for a pika (or socket) exception raised while doing ``action``,
    with ``exc`` as its ``__cause__`` (also when it travels through a future rather than a
    ``raise ... from``).

    Args:
        exc: What pika raised or passed to a callback.
        action: What the transport was doing, e.g. ``"publishing to topic 'orders'"``.
        where: The connection's broker, user and vhost (named in connection errors).
        timeout: The connection timeout in seconds, named when the broker did not answer.
        **context: Error context (topic, partition, ...).

    Returns:
        The error to raise.

    """
    error = _translate(exc, action=action, where=where, timeout=timeout, **context)
    if error is not exc and error.__cause__ is None:
        error.__cause__ = exc
    return error


def _translate(
    exc: BaseException,
    *,
    action: str,
    where: ErrorContext | None = None,
    timeout: float | None = None,
    **context: Any,
) -> ConnectError:
    if isinstance(exc, ConnectError):
        return exc
    import pika.exceptions as pe

    at = f" ({where})" if where is not None else ""
    code, text = _reply(exc)
    too_large = _TOO_LARGE.search(text)
    if too_large:
        return MessageTooLargeError(int(too_large.group(1)), int(too_large.group(2)),
                                    broker_message=text, **context)
    if isinstance(exc, (pe.ProbableAuthenticationError, pe.AuthenticationError)) or (
            code in _AUTH_CODES and "login" in text.lower()):
        return TransportError(
            f"{action} failed: the broker refused the login of {where or 'the user'}; check "
            f"the user name and password in rabbitmq.url (broker said: {text})", **context)
    if isinstance(exc, pe.ProbableAccessDeniedError) or code in _AUTH_CODES:
        return TransportError(
            f"{action} failed: access denied for {where or 'the user'}; check that the "
            f"vhost exists and the user has permissions on it (broker said: {text})",
            **context)
    if code == _NOT_FOUND and _RECOVERING in text:
        return RetriableTransportError(
            f"{action} failed{at}: the queue is still recovering after a broker restart: "
            f"{text}", **context)
    if code == _PRECONDITION_FAILED or (isinstance(exc, pe.ChannelClosedByBroker) and (
            code not in _RETRIABLE_CODES)):
        return TransportError(f"{action} failed{at}: the broker refused it: {text}",
                              **context)
    if isinstance(exc, (TimeoutError, pe.AMQPHeartbeatTimeout)) or "timeout" in text.lower() \
            or "timed out" in text.lower():
        within = f" within {timeout:g} s" if timeout is not None else ""
        return TransportTimeoutError(
            f"{action} failed: no answer from the broker{at}{within}; check rabbitmq.url "
            f"and that RabbitMQ is running ({text})", **context)
    if isinstance(exc, (pe.AMQPConnectionError, pe.AMQPChannelError, OSError)) or \
            code in _RETRIABLE_CODES:
        return RetriableTransportError(
            f"{action} failed: the connection to the broker{at} was lost or refused: "
            f"{text}", **context)
    return TransportError(f"{action} failed{at}: {type(exc).__name__}: {text}", **context)


@contextlib.contextmanager
def translated_errors(action: str, *, where: ErrorContext | None = None,
                      timeout: float | None = None, **context: Any) -> Iterator[None]:
    """Translate any pika (or socket) exception raised in the block (see
    :func:`translate`); omconnect errors pass unchanged.
    """
    try:
        yield
    except ConnectError:
        raise
    except Exception as exc:
        raise translate(exc, action=action, where=where, timeout=timeout, **context) from exc
