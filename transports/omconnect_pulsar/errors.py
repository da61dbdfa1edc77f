"""Translating pulsar-client exceptions and result codes into omconnect errors.

Every call into the client goes through :func:`translated_errors` (or :func:`translate` for a
failed send's result code, which a callback receives), so no ``pulsar`` exception escapes
the transport raw. The mapping, with the client's message kept and the original chained:

==============================================  ==========================================
client failure                                  omconnect error
==============================================  ==========================================
``Timeout`` (no broker, no answer in time)      TransportTimeoutError (retriable), naming
                                                the service URL and the timeout
``MessageTooBig``                               MessageTooLargeError naming the limit
``ConnectError``, ``NotConnected``, lookups,    RetriableTransportError
``ServiceUnitNotReady``, ``ProducerQueueIsFull``,
``TooManyLookupRequestException``, broker
persistence errors
authentication / authorisation failures         TransportError (the broker's message)
``InvalidConfiguration``, ``InvalidUrl``,        ConfigError naming the option
``InvalidTopicName``
``AlreadyClosed``                               IllegalStateError
anything else                                   TransportError
==============================================  ==========================================
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from omconnect.errors import (
    ConfigError,
    ConnectError,
    IllegalStateError,
    MessageTooLargeError,
    RetriableTransportError,
    TransportError,
    TransportTimeoutError,
)

__all__ = ["ErrorContext", "translate", "translated_errors"]

_TIMEOUT = frozenset({"Timeout"})
_TOO_BIG = frozenset({"MessageTooBig"})
_RETRIABLE = frozenset({
    "ConnectError", "NotConnected", "LookupError", "ServiceUnitNotReady", "ReadError",
    "ProducerQueueIsFull", "MemoryBufferIsFull", "TooManyLookupRequestException",
    "BrokerPersistenceError", "BrokerMetadataError", "ProducerBusy", "ConsumerBusy",
    "ProducerBlockedQuotaExceededError", "ProducerBlockedQuotaExceededException",
    "ChecksumError", "Interrupted",
})
_AUTH = frozenset({"AuthenticationError", "AuthorizationError",
                   "ErrorGettingAuthenticationData"})
_CONFIG = frozenset({"InvalidConfiguration", "InvalidUrl", "InvalidTopicName"})
_CLOSED = frozenset({"AlreadyClosed", "ProducerNotInitialized", "ConsumerNotInitialized"})


class ErrorContext:
    """What the transport knows when the client fails: where it connects, the timeout in
    force and, for sends, the size limit; the error message names them.

    Args:
        service_url: The Pulsar service URL.
        timeout_s: The operation timeout in seconds.
        max_message_bytes: The message size limit in force.

    """

    __slots__ = ("max_message_bytes", "service_url", "timeout_s")

    def __init__(self, service_url: str, timeout_s: float, max_message_bytes: int) -> None:
        self.service_url = service_url
        self.timeout_s = timeout_s
        self.max_message_bytes = max_message_bytes


def _name(failure: Any) -> str:
    """The failure's name: the exception class (``Timeout``) or the ``Result`` member."""
    if isinstance(failure, BaseException):
        return type(failure).__name__
    return str(getattr(failure, "name", failure))


def translate(
    failure: Any,
    action: str,
    where: ErrorContext,
    *,
    size: int | None = None,
    **context: Any,
) -> ConnectError:
    """The omconnect error for a client exception or a failed ``Result`` code.

    Args:
        failure: What the client raised, or the ``pulsar.Result`` a callback received.
        action: What the transport was doing, e.g. ``"sending to topic 'orders'"``.
        where: Service URL, timeout and size limit, named in the message.
        size: The size of the message that failed, when one did.
        **context: Error context (topic, partition, offset, key).

    Returns:
        The error to raise; chained to ``failure`` when it is an exception.

    """
    if isinstance(failure, ConnectError):
        return failure
    name = _name(failure)
    text = str(failure) if isinstance(failure, BaseException) else f"Pulsar error: {name}"
    error: ConnectError
    if name in _TIMEOUT:
        error = TransportTimeoutError(
            f"pulsar: {action}: no answer from {where.service_url} within "
            f"{where.timeout_s:g} s (pulsar.operation.timeout.ms); check pulsar.service.url "
            f"and that the broker is running ({text})", **context)
    elif name in _TOO_BIG:
        error = MessageTooLargeError(size if size is not None else -1, where.max_message_bytes,
                                     **{"key": "pulsar.max.message.bytes", **context})
        error.message = (f"{error.message} (the broker refused it: {text}; the broker's own "
                         "limit is maxMessageSize)")
    elif name in _AUTH:
        error = TransportError(
            f"pulsar: {action}: the broker refused access: {text}; check pulsar.auth.* "
            "(credentials) and the role's permissions", **context)
    elif name in _CONFIG:
        error = ConfigError(f"pulsar: {action}: {text}; check pulsar.service.url, "
                            "pulsar.tenant, pulsar.namespace and the topic name", **context)
    elif name in _CLOSED:
        error = IllegalStateError(f"pulsar: {action}: the client is closed ({text})",
                                  **context)
    elif name in _RETRIABLE or isinstance(failure, (ConnectionError, OSError)):
        error = RetriableTransportError(
            f"pulsar: {action}: the connection to {where.service_url} failed: {text}",
            **context)
    else:
        error = TransportError(f"pulsar: {action} failed: {text}", **context)
    if isinstance(failure, BaseException):
        error.__cause__ = failure
    return error


@contextlib.contextmanager
def translated_errors(action: str, where: ErrorContext, **context: Any) -> Iterator[None]:
    """Translate any client exception raised in the block (see :func:`translate`).

    Args:
        action: What the block does, for the message.
        where: Service URL, timeout and size limit.
        **context: Error context (topic, partition, offset, key).

    Raises:
        ConnectError: The translated error, chained to the client's.

    """
    try:
        yield
    except ConnectError:
        raise
    except Exception as exc:
        raise translate(exc, action, where, **context) from exc
