"""Translating nats-py exceptions into omconnect errors.

Every call into the client goes through :func:`translated_errors` (or :func:`translate`,
for a failure a callback receives), so no ``nats`` exception escapes the transport raw.
The mapping, with the client's message kept and the original chained:

==================================================  ======================================
client failure                                      omconnect error
==================================================  ======================================
``nats.errors.TimeoutError`` (and flush timeouts)   TransportTimeoutError (retriable),
                                                    naming the servers and the timeout
``MaxPayloadError``; JetStream error 10054          MessageTooLargeError naming the limit
(message size exceeds the stream's maximum)
``NoServersError``, ``StaleConnectionError``,       RetriableTransportError
``UnexpectedEOF``, ``OutboundBufferLimitError``,
``ConnectionReconnectingError``, OS connection
errors; no responders (no stream on the subject);
JetStream API errors 408, 429, 500, 503
``AuthorizationError``,                             TransportError naming the credentials
``InvalidUserCredentialsError``, TLS failures       options
``ConnectionClosedError``                           IllegalStateError
any other JetStream API error, anything else        TransportError
==================================================  ======================================
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from omconnect.errors import (
    ConnectError,
    IllegalStateError,
    MessageTooLargeError,
    RetriableTransportError,
    TransportError,
    TransportTimeoutError,
)

__all__ = ["ErrorContext", "translate", "translated_errors"]

_TIMEOUT = frozenset({"TimeoutError", "FlushTimeoutError", "FetchTimeoutError",
                      "DrainTimeoutError"})
_TOO_BIG = frozenset({"MaxPayloadError"})
_RETRIABLE = frozenset({
    "NoServersError", "StaleConnectionError", "UnexpectedEOF", "OutboundBufferLimitError",
    "ConnectionReconnectingError", "SlowConsumerError", "NoRespondersError",
    "NoStreamResponseError", "ServiceUnavailableError", "ServerError",
    "TooManyStalledMsgsError", "ConnectionDrainingError",
})
_AUTH = frozenset({"AuthorizationError", "InvalidUserCredentialsError",
                   "SecureConnRequiredError", "SecureConnWantedError",
                   "SecureConnFailedError"})
_CLOSED = frozenset({"ConnectionClosedError"})
_RETRIABLE_API_CODES = frozenset({408, 429, 500, 503})
_TOO_BIG_ERR_CODES = frozenset({10054})
_NO_RESPONDERS = frozenset({"NoRespondersError", "NoStreamResponseError"})


class ErrorContext:
    """What the transport knows when the client fails: the servers it connects to, the
    timeout in force and the message size limit; the error message names them.

    Args:
        servers: The server URLs (``nats.servers``).
        timeout_s: The request timeout in seconds.
        max_message_bytes: The message size limit in force.

    """

    __slots__ = ("max_message_bytes", "servers", "timeout_s")

    def __init__(self, servers: str, timeout_s: float, max_message_bytes: int) -> None:
        self.servers = servers
        self.timeout_s = timeout_s
        self.max_message_bytes = max_message_bytes


def _names(failure: BaseException) -> set[str]:
    return {cls.__name__ for cls in type(failure).__mro__}


def translate(
    failure: BaseException,
    action: str,
    where: ErrorContext,
    *,
    size: int | None = None,
    **context: Any,
) -> ConnectError:
    """The omconnect error for a client exception.

    Args:
        failure: What the client raised.
        action: What the transport was doing, e.g. ``"sending to topic 'orders'"``.
        where: Servers, timeout and size limit, named in the message.
        size: The size of the message that failed, when one did.
        **context: Error context (topic, partition, offset, key).

    Returns:
        The error to raise, chained to ``failure``.

    """
    if isinstance(failure, ConnectError):
        return failure
    names = _names(failure)
    text = str(failure) or type(failure).__name__
    code = getattr(failure, "code", None)
    err_code = getattr(failure, "err_code", None)
    error: ConnectError
    if names & _TOO_BIG or err_code in _TOO_BIG_ERR_CODES:
        error = MessageTooLargeError(size if size is not None else -1, where.max_message_bytes,
                                     **{"key": "nats.max.message.bytes", **context})
        error.message = (f"{error.message} (the server refused it: {text}; the server's "
                         "own limits are max_payload and the stream's max_msg_size)")
    elif names & _TIMEOUT or isinstance(failure, TimeoutError):
        error = TransportTimeoutError(
            f"nats: {action}: no answer from {where.servers} within {where.timeout_s:g} s "
            f"(nats.request.timeout.ms); check nats.servers and that the server is running "
            f"with JetStream ({text})", **context)
    elif names & _AUTH:
        error = TransportError(
            f"nats: {action}: the server refused access: {text}; check nats.user, "
            "nats.password, nats.token, nats.creds.file and nats.tls.*", **context)
    elif names & _CLOSED:
        error = IllegalStateError(f"nats: {action}: the connection is closed ({text})",
                                  **context)
    elif names & _NO_RESPONDERS:
        error = RetriableTransportError(
            f"nats: {action}: no JetStream stream answered ({text}); is JetStream enabled "
            "on the server (nats-server -js), and does the topic exist?", **context)
    elif (names & _RETRIABLE or code in _RETRIABLE_API_CODES
          or isinstance(failure, (ConnectionError, OSError))):
        error = RetriableTransportError(
            f"nats: {action}: the server at {where.servers} failed: {text}", **context)
    else:
        error = TransportError(f"nats: {action} failed: {text}", **context)
    error.__cause__ = failure
    return error


@contextlib.contextmanager
def translated_errors(action: str, where: ErrorContext, **context: Any) -> Iterator[None]:
    """Translate any client exception raised in the block (see :func:`translate`).

    Args:
        action: What the block does, for the message.
        where: Servers, timeout and size limit.
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
