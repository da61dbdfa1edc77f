"""Checking native pass-through options (``kafka.producer.*``, ``kafka.consumer.*``,
``kafka.admin.*``) before a client is built, so a typo fails naming the option.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping
from typing import Any

from omconnect.config.types import Password
from omconnect.errors import ConfigError

__all__ = ["check_native_options", "reveal"]

_TRUE = {"true", "yes", "1", "on"}
_FALSE = {"false", "no", "0", "off"}


def reveal(value: Any) -> Any:
    """``value``, with a :class:`~omconnect.config.types.Password` replaced by its secret."""
    return value.value() if isinstance(value, Password) else value


def check_native_options(
    options: Mapping[str, Any],
    *,
    prefix: str,
    spell: Callable[[str], str],
    known: Mapping[str, Any] | None,
    managed: Mapping[str, str],
) -> dict[str, Any]:
    """Native options in the client's spelling, with values of the client's types.

    Args:
        options: Options as the user wrote them (without ``prefix``), e.g.
            ``{"linger.ms": "5"}``.
        prefix: How the user wrote them, e.g. ``"kafka.producer."`` (for messages).
        spell: The client's spelling of a key (kafka-python: dots become underscores).
        known: The client's options with their defaults (values are converted to the
            default's type), or ``None`` when the client checks keys itself.
        managed: Keys (client spelling) the transport sets itself, each with the fix to
            suggest.

    Raises:
        ConfigError: A key is unknown to the client (with a "did you mean"), is set by
            the transport, or has a value of the wrong type.

    """
    result: dict[str, Any] = {}
    errors: dict[str, list[str]] = {}
    for key, value in options.items():
        name = spell(key)
        shown = prefix + key
        if name in managed:
            errors[shown] = [f"set by the transport; {managed[name]}"]
            continue
        value = reveal(value)
        if known is not None:
            if name not in known:
                close = difflib.get_close_matches(name, list(known), n=1, cutoff=0.7)
                hint = f"; did you mean {prefix}{close[0]}?" if close else ""
                errors[shown] = [f"not an option of the client{hint}"]
                continue
            try:
                value = _like(value, known[name])
            except (TypeError, ValueError) as exc:
                errors[shown] = [f"{exc}; fix the value of {shown}"]
                continue
        result[name] = value
    if errors:
        raise ConfigError.from_errors(errors, what="transport 'kafka' native options")
    return result


def _like(value: Any, default: Any) -> Any:
    """``value`` converted to the type of ``default`` when it is a string."""
    if not isinstance(value, str) or default is None or isinstance(default, str):
        return value
    text = value.strip()
    if isinstance(default, bool):
        lowered = text.lower()
        if lowered in _TRUE:
            return True
        if lowered in _FALSE:
            return False
        raise ValueError(f"expected true or false, got {value!r}")
    if isinstance(default, int):
        try:
            return int(text)
        except ValueError:
            raise ValueError(f"expected an integer, got {value!r}") from None
    if isinstance(default, float):
        try:
            return float(text)
        except ValueError:
            raise ValueError(f"expected a number, got {value!r}") from None
    if isinstance(default, (list, tuple)):
        return [part.strip() for part in text.split(",") if part.strip()]
    return value
