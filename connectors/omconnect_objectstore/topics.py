"""The topic of an object's records: a fixed name, or a template over the object's name.

``topic`` may contain placeholders in braces:

* ``{object}``: the object's name (``2024/05/orders.csv``), with each character other
  than ``A-Z a-z 0-9 . _ -`` replaced by ``_`` (``2024_05_orders.csv``);
* ``{stem}``: the last part of the name without its extensions (``orders``), likewise;
* ``{<group>}``: a named group of ``file.name.pattern``, as matched (e.g.
  ``{partition}`` or ``{table}``).

``{{`` and ``}}`` stand for literal braces.
"""

from __future__ import annotations

import re
import string
from typing import Any

from omconnect.errors import ConfigError
from omconnect.source_base.formats import strip_compression

__all__ = ["TopicTemplate"]

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")
_BUILT_IN = ("object", "stem")


def _safe(text: str) -> str:
    return _UNSAFE.sub("_", text)


def _stem(name: str) -> str:
    base = strip_compression(name.rpartition("/")[2])
    return base.split(".", 1)[0] or base


class TopicTemplate:
    """The ``topic`` setting, checked once and applied per object.

    Args:
        template: The ``topic`` value.
        pattern: ``file.name.pattern`` compiled, whose named groups may be used.

    Raises:
        ConfigError: Empty, unbalanced braces, a format spec, or a placeholder that is
            neither built in nor a group of the pattern (names ``topic``).

    """

    def __init__(self, template: str, pattern: re.Pattern[str] | None = None) -> None:
        if not template or not template.strip():
            raise ConfigError("topic must name a topic (or a template such as "
                              "'orders-{stem}')", key="topic")
        groups = tuple(pattern.groupindex) if pattern is not None else ()
        fields: list[str] = []
        try:
            parsed = list(string.Formatter().parse(template))
        except ValueError as exc:
            raise ConfigError(f"topic {template!r} is not a valid template: {exc}; write "
                              "literal braces as {{ and }}", key="topic") from None
        for _, field, spec, conversion in parsed:
            if field is None:
                continue
            if spec or conversion or not field:
                raise ConfigError(f"topic {template!r}: write placeholders as {{name}}, "
                                  "without format specs or conversions", key="topic")
            if field not in _BUILT_IN and field not in groups:
                known = ", ".join(f"{{{n}}}" for n in (*_BUILT_IN, *groups))
                hint = "" if groups else " (named groups of file.name.pattern also work)"
                raise ConfigError(f"topic {template!r}: unknown placeholder {{{field}}}; "
                                  f"use {known}{hint}", key="topic")
            fields.append(field)
        self.template = template
        self.fields = tuple(fields)
        self._pattern = pattern
        self._fixed = template.replace("{{", "{").replace("}}", "}") if not fields else None

    @property
    def fixed(self) -> str | None:
        """The topic when the template has no placeholders, else ``None``."""
        return self._fixed

    def topic_for(self, name: str) -> str:
        """The topic of object ``name``'s records.

        Raises:
            ConfigError: A group the template uses did not take part in the match.

        """
        if self._fixed is not None:
            return self._fixed
        values: dict[str, Any] = {}
        match = self._pattern.search(name) if self._pattern is not None else None
        for field in self.fields:
            if field == "object":
                values[field] = _safe(name)
            elif field == "stem":
                values[field] = _safe(_stem(name))
            else:
                value = match.group(field) if match is not None else None
                if value is None:
                    raise ConfigError(f"topic {self.template!r}: group {field!r} of "
                                      f"file.name.pattern matched nothing in object {name!r}",
                                      key="topic")
                values[field] = value
        return self.template.format(**values)
