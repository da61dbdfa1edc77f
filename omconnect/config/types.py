"""Config value types and their parsing from strings (as config files give them)."""

from __future__ import annotations

import enum
from typing import Any

from omconnect.errors import DataError

__all__ = ["ConfigType", "Importance", "Password"]


class Importance(enum.Enum):
    """How much a user should care about a setting (for documentation)."""

    HIGH = "high"
    MEDIUM = "medium"
    LOW = "low"


class Password:
    """A secret config value: masked in ``repr``, ``str``, logs and every output.

    Read the secret with :meth:`value`.
    """

    __slots__ = ("_value",)
    MASK = "[hidden]"

    def __init__(self, value: str) -> None:
        self._value = value

    def value(self) -> str:
        """The secret itself."""
        return self._value

    def __repr__(self) -> str:
        return f"Password({self.MASK})"

    def __str__(self) -> str:
        return self.MASK

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Password) and other._value == self._value

    def __hash__(self) -> int:
        return hash(self._value)


_TRUE = {"true", "yes", "1", "on"}
_FALSE = {"false", "no", "0", "off"}


class ConfigType(enum.Enum):
    """The type of a config value; strings from files are parsed into it."""

    BOOLEAN = "boolean"
    STRING = "string"
    INT = "int"
    LONG = "long"
    DOUBLE = "double"
    LIST = "list"
    CLASS = "class"
    PASSWORD = "password"

    def parse(self, value: Any) -> Any:
        """``value`` (a string from a file, or already typed) as this type.

        Raises:
            DataError: It cannot be parsed; the message says what was expected.

        """
        if value is None:
            return None
        if self is ConfigType.BOOLEAN:
            if isinstance(value, bool):
                return value
            text = str(value).strip().lower()
            if text in _TRUE:
                return True
            if text in _FALSE:
                return False
            raise DataError(f"expected a boolean (true or false), got {value!r}")
        if self in (ConfigType.INT, ConfigType.LONG):
            if isinstance(value, bool):
                raise DataError(f"expected an integer, got {value!r}")
            if isinstance(value, int):
                result = value
            else:
                try:
                    result = int(str(value).strip())
                except ValueError:
                    raise DataError(f"expected an integer, got {value!r}") from None
            if self is ConfigType.INT and not -(2**31) <= result < 2**31:
                raise DataError(f"expected a 32-bit integer, got {value!r}")
            return result
        if self is ConfigType.DOUBLE:
            if isinstance(value, bool):
                raise DataError(f"expected a number, got {value!r}")
            try:
                return float(value)
            except (TypeError, ValueError):
                raise DataError(f"expected a number, got {value!r}") from None
        if self is ConfigType.LIST:
            if isinstance(value, (list, tuple)):
                return [str(v).strip() for v in value]
            text = str(value).strip()
            return [part.strip() for part in text.split(",") if part.strip()] if text else []
        if self is ConfigType.PASSWORD:
            return value if isinstance(value, Password) else Password(str(value))
        if self is ConfigType.CLASS:
            return value if isinstance(value, type) else str(value).strip()
        return value if isinstance(value, str) else str(value)
