"""The omconnect error hierarchy.

Every error omconnect raises derives from :class:`ConnectError`; a driver's own exception
(kafka-python, pika, pulsar-client, sqlite3) never escapes a transport raw, it is translated
at the boundary and chained with ``raise ... from exc`` so the broker's message is kept::

    ConnectError
    ├── ConfigError (ValueError)            bad configuration; names the key and the fix
    │   └── MissingTopicsError *            a Spark read names topics that do not exist
    ├── PluginError (LookupError)           unknown or invalid plugin
    │   └── MissingExtraError (ImportError) plugin needs an extra that is not installed
    ├── DataError (ValueError)              a value does not match its schema, cannot convert
    │   └── SchemaProjectionError           schemas are not compatible for projection
    ├── DataLossError *                     records a Spark query must read are gone
    ├── IllegalStateError (RuntimeError)    an SPI method called in the wrong state
    ├── RetriableError                      transient: the runtime retries with backoff
    │   └── RetriableTransportError (+ TransportError)
    └── TransportError                      a transport failed (fatal unless also retriable)
        ├── TransportTimeoutError (TimeoutError)  broker unreachable within the timeout
        ├── MessageTooLargeError (ValueError)     a message over the transport's limit
        ├── UnsupportedOperationError (NotImplementedError)  capability not offered
        └── SendError                       some messages of a batch were not acknowledged

``*``: defined where it is raised, not here: ``omconnect_spark.topic_selection`` and
``omconnect_spark.offsets`` (the Spark adapter).

Errors carry context where it is known: connector, task, topic, partition, offset and
config key, as keyword attributes that also appear in ``str(error)``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = [
    "ConfigError",
    "ConnectError",
    "DataError",
    "IllegalStateError",
    "MessageTooLargeError",
    "MissingExtraError",
    "PluginError",
    "RetriableError",
    "RetriableTransportError",
    "SchemaProjectionError",
    "SendError",
    "TransportError",
    "TransportTimeoutError",
    "UnsupportedOperationError",
]

_CONTEXT_KEYS = ("connector", "task", "topic", "partition", "offset", "key")


class ConnectError(Exception):
    """Root of every omconnect error.

    Args:
        message: What went wrong and, where there is one, the fix.
        **context: Where it went wrong: any of ``connector``, ``task``, ``topic``,
            ``partition``, ``offset``, ``key`` (a config key). Unknown names are kept too.

    """

    def __init__(self, message: str, **context: Any) -> None:
        super().__init__(message)
        self.message = message
        self.context: dict[str, Any] = {k: v for k, v in context.items() if v is not None}

    def __str__(self) -> str:
        if not self.context:
            return self.message
        ordered = [k for k in _CONTEXT_KEYS if k in self.context]
        ordered += sorted(k for k in self.context if k not in _CONTEXT_KEYS)
        where = ", ".join(f"{k}={self.context[k]!r}" for k in ordered)
        return f"{self.message} [{where}]"

    def __reduce__(self) -> tuple[Any, ...]:
        # Keep context and every attribute a subclass added (ConfigError.errors,
        # SendError.outcomes, ...) across pickling: Spark ships errors between processes.
        return (_rebuild, (type(self), self.message, self.context), dict(self.__dict__))


def _rebuild(cls: type[ConnectError], message: str, context: dict[str, Any]) -> ConnectError:
    error = cls.__new__(cls)
    ConnectError.__init__(error, message, **context)
    return error


class ConfigError(ConnectError, ValueError):
    """A configuration is invalid.

    Args:
        message: What is wrong and how to fix it.
        errors: Per-key messages, for configurations with several problems.
        **context: As for :class:`ConnectError`; ``key`` names the offending config key.

    """

    def __init__(
        self,
        message: str,
        errors: Mapping[str, Sequence[str]] | None = None,
        **context: Any,
    ) -> None:
        super().__init__(message, **context)
        self.errors: dict[str, list[str]] = {k: list(v) for k, v in (errors or {}).items()}

    @classmethod
    def from_errors(
        cls, errors: Mapping[str, Sequence[str]], *, what: str = "configuration"
    ) -> ConfigError:
        """Build one error that lists every per-key message.

        Args:
            errors: Messages by config key (keys with no messages are ignored).
            what: What was being validated, e.g. ``"connector 'orders'"``.

        """
        bad = {k: list(v) for k, v in errors.items() if v}
        lines = [f"  {key}: {msg}" for key, msgs in sorted(bad.items()) for msg in msgs]
        noun = "error" if len(lines) == 1 else "errors"
        message = f"invalid {what} ({len(lines)} {noun}):\n" + "\n".join(lines)
        key = next(iter(sorted(bad))) if len(bad) == 1 else None
        return cls(message, errors=bad, key=key)


class PluginError(ConnectError, LookupError):
    """A plugin name could not be resolved, or a plugin does not honour its SPI."""


class MissingExtraError(PluginError, ImportError):
    """A plugin needs an optional dependency (an extra) that is not installed.

    Args:
        plugin: The plugin that needs it.
        extra: The extra to install, as in ``pip install 'omconnect[extra]'``.
        module: The module that could not be imported.

    """

    def __init__(self, plugin: str, extra: str, module: str) -> None:
        super().__init__(
            f"{plugin} needs the '{module}' package, which is not installed; "
            f"install it with: pip install 'omconnect[{extra}]'"
        )
        self.plugin = plugin
        self.extra = extra
        self.module = module


class DataError(ConnectError, ValueError):
    """A value does not match its schema, or data cannot be converted."""


class SchemaProjectionError(DataError):
    """A value cannot be projected from its schema onto another (incompatible change)."""


class IllegalStateError(ConnectError, RuntimeError):
    """An operation was called in a state that does not allow it (e.g. after close)."""


class RetriableError(ConnectError):
    """A transient failure: the operation may succeed if retried after a backoff."""


class TransportError(ConnectError):
    """A transport operation failed. Fatal unless it is also a :class:`RetriableError`."""


class RetriableTransportError(TransportError, RetriableError):
    """A transport failure that may succeed when retried (connection lost, broker busy)."""


class TransportTimeoutError(RetriableTransportError, TimeoutError):
    """The broker did not answer within the configured timeout."""


class MessageTooLargeError(TransportError, ValueError):
    """A message is larger than the transport accepts.

    Args:
        size: The message size in bytes.
        limit: The transport's limit in bytes.
        **context: As for :class:`ConnectError`.

    """

    def __init__(self, size: int, limit: int, **context: Any) -> None:
        super().__init__(
            f"message of {size} bytes exceeds the transport's limit of {limit} bytes",
            **context,
        )
        self.size = size
        self.limit = limit

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild_too_large, (self.size, self.limit, self.context))


def _rebuild_too_large(size: int, limit: int, context: dict[str, Any]) -> MessageTooLargeError:
    return MessageTooLargeError(size, limit, **context)


class UnsupportedOperationError(TransportError, NotImplementedError):
    """The transport does not offer this capability (see its ``Capabilities``)."""


class SendError(TransportError):
    """Some messages of a batch were not acknowledged.

    Args:
        message: Summary of the failure.
        outcomes: One entry per message of the batch, in order: the message's
            :class:`~omconnect.records.RecordMetadata` (topic, partition, offset) when it
            was acknowledged, or the exception that failed it.

    """

    def __init__(self, message: str, outcomes: Sequence[Any], **context: Any) -> None:
        super().__init__(message, **context)
        self.outcomes = list(outcomes)
