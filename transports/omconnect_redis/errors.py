"""Translating redis-py exceptions into omconnect errors.

Every call into redis-py goes through :func:`translated_errors` (or :func:`translate`),
so no ``redis`` exception escapes the transport raw. The mapping, with the server's
message kept and the original chained:

===============================================  =========================================
redis-py failure                                 omconnect error
===============================================  =========================================
``TimeoutError`` (no answer in time)             TransportTimeoutError (retriable), naming
                                                 the URL and ``redis.operation.timeout.ms``
``AuthenticationError``, ``AuthorizationError``,  TransportError (fatal): the credentials
``NoPermissionError`` (ACL)                      or the user's ACL must change
``ConnectionError`` (refused, reset, closed),    RetriableTransportError: the server may
``BusyLoadingError`` (loading its data),         come back, or have room again
``ReadOnlyError`` (a replica after a
fail-over), ``OutOfMemoryError``,
``TryAgainError``, ``OSError``
``ResponseError`` ``WRONGTYPE``                  TransportError naming ``redis.key.prefix``
                                                 (a key of another type is in the way)
anything else                                    TransportError
===============================================  =========================================
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from omconnect.errors import (
    ConnectError,
    RetriableTransportError,
    TransportError,
    TransportTimeoutError,
)

__all__ = ["ErrorContext", "translate", "translated_errors"]

_AUTH = frozenset({"AuthenticationError", "AuthorizationError", "NoPermissionError",
                   "AuthenticationWrongNumberOfArgsError", "ExternalAuthProviderError"})
_RETRIABLE = frozenset({"ConnectionError", "BusyLoadingError", "ReadOnlyError",
                        "OutOfMemoryError", "TryAgainError", "MaxConnectionsError",
                        "ClusterDownError", "MasterDownError"})
_TIMEOUT = frozenset({"TimeoutError"})


class ErrorContext:
    """What the transport knows when redis-py fails: the server it talks to (its URL
    without credentials) and the operation timeout; the error message names them.

    Args:
        url: The server's URL, credentials removed.
        timeout_s: The operation timeout in seconds.

    """

    __slots__ = ("timeout_s", "url")

    def __init__(self, url: str, timeout_s: float) -> None:
        self.url = url
        self.timeout_s = timeout_s


def _names(failure: BaseException) -> set[str]:
    """The names of the failure's classes (``ConnectionError`` for its subclasses too)."""
    return {cls.__name__ for cls in type(failure).__mro__}


def translate(failure: BaseException, action: str, where: ErrorContext,
              **context: Any) -> ConnectError:
    """The omconnect error for a redis-py exception.

    Args:
        failure: What redis-py raised.
        action: What the transport was doing, e.g. ``"sending to topic 'orders'"``.
        where: The URL and timeout, named in the message.
        **context: Error context (topic, partition, offset, key).

    Returns:
        The error to raise, chained to ``failure``; an omconnect error is returned as it
        is.

    """
    if isinstance(failure, ConnectError):
        return failure
    name = type(failure).__name__
    names = _names(failure)
    text = str(failure) or name
    error: ConnectError
    if name in _AUTH or names & _AUTH:
        error = TransportError(
            f"redis: {action}: the server refused access: {text}; check the user and "
            "password of redis.url (or redis.password) and the user's ACL", **context)
    elif name in _TIMEOUT and "redis" in type(failure).__module__:
        error = TransportTimeoutError(
            f"redis: {action}: no answer from {where.url} within {where.timeout_s:g} s "
            f"(redis.operation.timeout.ms); check redis.url and that the server is running "
            f"({text})", **context)
    elif names & _RETRIABLE or isinstance(failure, (OSError, TimeoutError)):
        error = RetriableTransportError(
            f"redis: {action}: the server at {where.url} is not available: {text}",
            **context)
    elif text.startswith("WRONGTYPE"):
        error = TransportError(
            f"redis: {action}: {text}; another application holds a key of another type "
            "where the transport keeps its data: set redis.key.prefix to a prefix of its "
            "own", **context)
    else:
        error = TransportError(f"redis: {action} failed: {text}", **context)
    error.__cause__ = failure
    return error


@contextlib.contextmanager
def translated_errors(action: str, where: ErrorContext, **context: Any) -> Iterator[None]:
    """Translate any redis-py exception raised in the block (see :func:`translate`).

    Args:
        action: What the block does, for the message.
        where: The URL and timeout.
        **context: Error context (topic, partition, offset, key).

    Raises:
        ConnectError: The translated error, chained to redis-py's.

    """
    try:
        yield
    except ConnectError:
        raise
    except Exception as exc:
        raise translate(exc, action, where, **context) from exc
