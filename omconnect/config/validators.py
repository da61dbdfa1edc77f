"""Validators for config values. Each returns ``None`` when fine, else a message that
says what is wrong and what would be right.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

import attrs

__all__ = ["NonEmptyString", "OneOf", "Range", "Regex", "ValidList", "Validator"]

Validator = Callable[[Any], "str | None"]


@attrs.frozen
class Range:
    """A number within [``min``, ``max``] (either bound may be ``None``)."""

    min: float | None = None
    max: float | None = None

    def __call__(self, value: Any) -> str | None:
        """A message saying what is wrong with ``value``, or ``None``."""
        if value is None:
            return None
        if self.min is not None and value < self.min:
            return f"must be at least {self.min}, got {value}"
        if self.max is not None and value > self.max:
            return f"must be at most {self.max}, got {value}"
        return None


def _strings(values: Iterable[str]) -> tuple[str, ...]:
    return tuple(values)


@attrs.frozen
class OneOf:
    """A string among ``choices`` (case-insensitive unless ``case_sensitive``)."""

    choices: tuple[str, ...] = attrs.field(converter=_strings)
    case_sensitive: bool = False

    def __call__(self, value: Any) -> str | None:
        """A message saying what is wrong with ``value``, or ``None``."""
        if value is None:
            return None
        if self.case_sensitive:
            ok = value in self.choices
        else:
            ok = str(value).lower() in {c.lower() for c in self.choices}
        return None if ok else f"must be one of {', '.join(self.choices)}; got {value!r}"


@attrs.frozen
class NonEmptyString:
    """A string that is not empty or blank."""

    def __call__(self, value: Any) -> str | None:
        """A message saying what is wrong with ``value``, or ``None``."""
        if value is not None and not str(value).strip():
            return "must not be empty"
        return None


@attrs.frozen
class Regex:
    """A string matching ``pattern`` (whole string); ``hint`` explains the form."""

    pattern: str
    hint: str = ""

    def __call__(self, value: Any) -> str | None:
        """A message saying what is wrong with ``value``, or ``None``."""
        if value is None or re.fullmatch(self.pattern, str(value)):
            return None
        return f"must match {self.hint or self.pattern}; got {value!r}"


@attrs.frozen
class ValidList:
    """A list whose items each pass ``item`` (and, unless ``allow_empty``, not empty)."""

    item: Validator | None = None
    allow_empty: bool = True

    def __call__(self, value: Any) -> str | None:
        """A message saying what is wrong with ``value``, or ``None``."""
        if value is None:
            return None
        items: Iterable[Any] = value
        if not self.allow_empty and not value:
            return "must list at least one item"
        if self.item is not None:
            for item in items:
                problem = self.item(item)
                if problem:
                    return f"item {item!r} {problem}"
        return None
