"""Translating kafka-python and confluent-kafka exceptions into omconnect errors.

Every call into a client library goes through :func:`translated_errors` (or
:func:`translate` for an exception a callback received), so no driver exception escapes
the transport raw. The mapping, with the driver's message kept and the original chained:

==================================================  ====================================
client failure                                      omconnect error
==================================================  ====================================
timeouts, no broker reachable, queue full           TransportTimeoutError (retriable)
connection lost, leader moved, coordinator moving   RetriableTransportError
message too large (client or broker)                MessageTooLargeError, naming the limit
authentication / authorisation failed               TransportError (the broker's message)
bad native option                                   ConfigError naming the option
any other failure                                   TransportError, or RetriableTransportError
                                                    when the client marks it retriable
==================================================  ====================================
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from omconnect.errors import (
    ConfigError,
    ConnectError,
    MessageTooLargeError,
    RetriableTransportError,
    TransportError,
    TransportTimeoutError,
)

__all__ = ["ErrorContext", "ListenerFailed", "translate", "translated_errors"]

# kafka-python exception class names, by the omconnect error they become.
_KP_TIMEOUT = frozenset({"KafkaTimeoutError", "RequestTimedOutError", "NoBrokersAvailable"})
_KP_TOO_LARGE = frozenset({"MessageSizeTooLargeError", "RecordListTooLargeError",
                           "RecordTooLargeError"})
_KP_AUTH = frozenset({"SaslAuthenticationFailedError", "AuthenticationFailedError",
                      "AuthenticationMethodNotSupported", "UnsupportedSaslMechanismError",
                      "IllegalSaslStateError", "TopicAuthorizationFailedError",
                      "GroupAuthorizationFailedError", "ClusterAuthorizationFailedError",
                      "TransactionalIdAuthorizationFailedError"})
_KP_CONFIG = frozenset({"KafkaConfigurationError"})

# librdkafka error codes (confluent_kafka.KafkaError), by the omconnect error they become.
_RD_TIMEOUT = frozenset({-192, -185, -187, -184, -195})  # MSG_TIMED_OUT, TIMED_OUT,
# ALL_BROKERS_DOWN, QUEUE_FULL, TRANSPORT
_RD_TOO_LARGE = frozenset({10, 18})  # MSG_SIZE_TOO_LARGE, RECORD_LIST_TOO_LARGE
_RD_AUTH = frozenset({58, -169, 33, 34, 29, 30, 31, 53, -181})  # SASL, AUTHENTICATION,
# mechanism, SASL state, topic/group/cluster/txn authorisation, SSL
_RD_CONFIG = frozenset({-186})  # INVALID_ARG


class ListenerFailed(Exception):
    """Carries what a rebalance listener raised out of a driver, past
    :func:`translated_errors`, so the caller of ``poll`` (or ``close``) gets the listener's
    own exception, unchanged.

    Args:
        error: The listener's exception.

    """

    def __init__(self, error: BaseException) -> None:
        super().__init__(repr(error))
        self.error = error


class ErrorContext:
    """What the producer knows when a message turns out too large: its size and the
    limit in force, so the error can name both.

    Args:
        size: The message's size in bytes (key + value + headers), or -1 if unknown.
        limit: The limit in bytes.
        option: The option that sets the limit, e.g. ``kafka.max.request.size``.

    """

    __slots__ = ("limit", "option", "size")

    def __init__(self, size: int, limit: int, option: str) -> None:
        self.size = size
        self.limit = limit
        self.option = option


def translate(
    exc: BaseException | Any,
    action: str,
    *,
    where: ErrorContext | None = None,
    **context: Any,
) -> ConnectError:
    """The omconnect error for a client exception (an omconnect error is returned as is).

    Args:
        exc: What the client raised or reported (an exception, or a confluent-kafka
            ``KafkaError`` as delivery reports carry it).
        action: What the transport was doing, e.g. ``"sending to the broker"``.
        where: Size and limit, to name them when the failure is "message too large".
        **context: Error context (topic, partition, offset, key).

    Returns:
        The error to raise, with ``__cause__`` set to ``exc``.

    """
    if isinstance(exc, ConnectError):
        return exc
    if not isinstance(exc, BaseException):  # a confluent KafkaError from a delivery report
        error = _map_confluent_error(exc, str(exc), action, where, context)
        error.__cause__ = _kafka_exception(exc)
        return error
    error = _map(exc, action, where, context)
    error.__cause__ = exc
    return error


def _kafka_exception(error: Any) -> BaseException:
    """A ``KafkaException`` carrying ``error``, to chain (the class is the library's)."""
    try:
        from confluent_kafka import KafkaException
    except ImportError:  # pragma: no cover - the error came from confluent-kafka
        return RuntimeError(str(error))
    exception: BaseException = KafkaException(error)
    return exception


@contextlib.contextmanager
def translated_errors(
    action: str, *, where: ErrorContext | None = None, **context: Any
) -> Iterator[None]:
    """Translate any client exception raised in the block (see :func:`translate`).

    Args:
        action: What the block does, for the message.
        where: Size and limit, for a "message too large" failure.
        **context: Error context (topic, partition, offset, key).

    Raises:
        ConnectError: The translated error, chained to the client's.

    """
    try:
        yield
    except (ConnectError, ListenerFailed):
        raise
    except Exception as exc:
        raise translate(exc, action, where=where, **context) from exc


def _map(
    exc: BaseException,
    action: str,
    where: ErrorContext | None,
    context: dict[str, Any],
) -> ConnectError:
    module = type(exc).__module__ or ""
    if module.startswith("confluent_kafka") or type(exc).__name__ == "KafkaException":
        return _map_confluent(exc, action, where, context)
    if module.startswith("kafka"):
        return _map_kafka_python(exc, action, where, context)
    if isinstance(exc, BufferError):  # confluent's "local queue full"
        return TransportTimeoutError(f"kafka: {action}: the client's send queue is full "
                                     f"({exc})", **context)
    if isinstance(exc, TimeoutError):
        return TransportTimeoutError(f"kafka: {action}: {exc}", **context)
    if isinstance(exc, (ConnectionError, OSError)):
        return RetriableTransportError(f"kafka: {action}: {exc!r}", **context)
    return TransportError(f"kafka: {action} failed: {exc!r}", **context)


def _too_large(message: str, where: ErrorContext | None,
               context: dict[str, Any]) -> ConnectError:
    if where is None:
        return TransportError(f"{message} (a message is larger than the broker or the client "
                              "accepts; raise kafka.max.request.size and the broker's "
                              "message.max.bytes together)", **context)
    error = MessageTooLargeError(where.size, where.limit,
                                 **{"key": where.option, **context})
    error.message = f"{error.message}; {message}"
    return error


def _map_kafka_python(exc: BaseException, action: str, where: ErrorContext | None,
                      context: dict[str, Any]) -> ConnectError:
    name = type(exc).__name__
    message = f"kafka: {action}: {exc}"
    if name in _KP_TIMEOUT:
        return TransportTimeoutError(message, **context)
    if name in _KP_TOO_LARGE:
        return _too_large(message, where, context)
    if name in _KP_AUTH:
        return TransportError(f"kafka: {action}: the broker refused access: {exc}", **context)
    if name in _KP_CONFIG:
        return ConfigError(f"kafka: {action}: invalid client option: {exc}", **context)
    if getattr(exc, "retriable", False) or getattr(exc, "invalid_metadata", False):
        return RetriableTransportError(message, **context)
    if isinstance(exc, (TypeError, ValueError)):
        return TransportError(f"kafka: {action}: the client rejected a value: {exc}",
                              **context)
    return TransportError(message, **context)


def _map_confluent(exc: BaseException, action: str, where: ErrorContext | None,
                   context: dict[str, Any]) -> ConnectError:
    error: Any = exc.args[0] if exc.args else None
    if error is None or not callable(getattr(error, "code", None)):
        return TransportError(f"kafka: {action} failed: {exc}", **context)  # no KafkaError
    return _map_confluent_error(error, str(exc), action, where, context)


def _map_confluent_error(error: Any, fallback: str, action: str,
                         where: ErrorContext | None,
                         context: dict[str, Any]) -> ConnectError:
    if not callable(getattr(error, "code", None)):
        return TransportError(f"kafka: {action} failed: {fallback}", **context)
    code = error.code()
    text = error.str() if callable(getattr(error, "str", None)) else str(error)
    message = f"kafka: {action}: {text}"
    if code in _RD_TOO_LARGE:
        return _too_large(message, where, context)
    if code in _RD_AUTH:
        return TransportError(f"kafka: {action}: the broker refused access: {text}",
                              **context)
    if code in _RD_CONFIG:
        return ConfigError(f"kafka: {action}: invalid client option: {text}", **context)
    if code in _RD_TIMEOUT:
        return TransportTimeoutError(message, **context)
    fatal = getattr(error, "fatal", None)
    retriable = getattr(error, "retriable", None)
    if callable(retriable) and retriable() and not (callable(fatal) and fatal()):
        return RetriableTransportError(message, **context)
    return TransportError(message, **context)
