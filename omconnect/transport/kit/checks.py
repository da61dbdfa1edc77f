"""Checks the transports apply to what their callers hand them.

The in-core transports use them all; the broker transports use the option and
consumer-argument checks.
"""

from __future__ import annotations

import operator
from collections.abc import Mapping, Sequence
from typing import Any

from omconnect.config.definition import ConfigDef
from omconnect.errors import ConfigError, MessageTooLargeError, SendError, TransportError
from omconnect.transport.messages import Message, TopicSpec

__all__ = [
    "MAX_PARTITIONS",
    "check_consumer_args",
    "check_message_sizes",
    "check_topic_spec",
    "failed_batch",
    "no_native_options",
    "reject_unknown_options",
]

MAX_PARTITIONS = 1024
"""The most partitions a topic of an in-core transport can have."""

_KEY = operator.attrgetter("key")
_VALUE = operator.attrgetter("value")
_HEADERS = operator.attrgetter("headers")


def check_message_sizes(messages: Sequence[Message], limit: int) -> None:
    """Raise if any message is over ``limit`` bytes (key + value + headers).

    Raises:
        MessageTooLargeError: Naming the first message over the limit, its topic and
            its index in the batch.

    """
    # Fast path, at C speed: no message can be over the limit if all of them together
    # are not (the usual case: batches are far smaller than a message may be).
    total = sum(map(len, filter(None, map(_KEY, messages))))
    total += sum(map(len, filter(None, map(_VALUE, messages))))
    if total <= limit and not any(map(_HEADERS, messages)):
        return
    for index, message in enumerate(messages):
        size = message.size
        if size > limit:
            raise MessageTooLargeError(size, limit, topic=message.topic, index=index)


def failed_batch(size: int, index: int, error: Exception) -> SendError:
    """The error for a batch of ``size`` messages of which none was stored because the
    message at ``index`` failed with ``error``.
    """
    skipped = TransportError(f"not stored: message {index} of the batch failed ({error})")
    outcomes: list[Exception] = [skipped] * size
    outcomes[index] = error
    return SendError(f"batch not stored: message {index} failed: {error}", outcomes)


def reject_unknown_options(
    definition: ConfigDef,
    options: Mapping[str, Any],
    *,
    prefix: str,
    pass_through: tuple[str, ...] = (),
    otherwise: str | None = None,
) -> None:
    """Raise if ``options`` holds a key ``definition`` does not declare.

    An undeclared key is a typo unless it starts with one of ``pass_through`` (the
    prefixes of native client settings of a broker transport; the in-core transports
    have none). The error names each key as the user wrote it (``prefix`` + key) with
    the closest declared key, or, when none is close, ``otherwise`` (default: the list
    of declared keys).

    Raises:
        ConfigError: Listing each unknown key with a "did you mean".

    """
    errors: dict[str, list[str]] = {}
    for name in options:
        if name in definition or name.startswith(pass_through):
            continue
        close = definition.suggest(name)
        if close:
            hint = f"did you mean {prefix}{close}?"
        elif otherwise is not None:
            hint = otherwise
        else:
            hint = "known options: " + ", ".join(prefix + known for known in definition.names())
        errors[prefix + name] = [f"unknown option; {hint}"]
    if errors:
        raise ConfigError.from_errors(errors, what=f"transport '{prefix.rstrip('.')}'")


def check_topic_spec(spec: TopicSpec) -> None:
    """Raise if ``spec`` has no name or a partition count outside 1 to
    :data:`MAX_PARTITIONS`.

    Raises:
        ValueError: Naming the topic and the bad field.

    """
    if not isinstance(spec.name, str) or not spec.name:
        raise ValueError(f"a topic needs a non-empty name, got {spec.name!r}")
    partitions = spec.partitions
    if isinstance(partitions, bool) or not isinstance(partitions, int) or not (
            1 <= partitions <= MAX_PARTITIONS):
        raise ValueError(f"topic {spec.name!r}: partitions must be 1 to {MAX_PARTITIONS}, "
                         f"got {partitions!r}")


def no_native_options(options: Mapping[str, Any] | None, what: str) -> None:
    """Raise if ``options`` is not empty: the in-core transports have no native client.

    Raises:
        ConfigError: Naming the options to remove.

    """
    if options:
        keys = ", ".join(sorted(options))
        raise ConfigError(f"the in-core transports take no native {what} options; "
                          f"remove: {keys}", key=next(iter(sorted(options))))


def check_consumer_args(group: str | None, start: str) -> None:
    """Raise if ``group`` is not ``None`` or a non-empty string, or ``start`` is not
    ``"earliest"`` or ``"latest"``.

    Raises:
        ValueError: Naming the bad argument.

    """
    if group is not None and (not isinstance(group, str) or not group):
        raise ValueError(f"a consumer group must be a non-empty string, got {group!r}")
    if start not in ("earliest", "latest"):
        raise ValueError(f"start must be 'earliest' or 'latest', got {start!r}")
