r"""RegexRouter: rename the topic with a regular expression and a replacement.

Kafka Connect's ``org.apache.kafka.connect.transforms.RegexRouter``. When ``regex`` matches
the whole topic, the topic becomes ``replacement`` with ``$1``/``${name}`` references to
the regex's groups (Java's syntax; ``\$`` is a literal dollar sign); otherwise the record
is left as it is. The regex is Java's dialect as far as Python's ``re`` shares it, named
groups ``(?<name>…)`` included. Results are cached per topic.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, TypeVar

from omconnect.config.definition import ConfigDef
from omconnect.config.types import ConfigType, Importance
from omconnect.errors import ConfigError
from omconnect.records import ConnectRecord
from omconnect.transforms.base import Transformation
from omconnect.transforms.java import java_regex, java_replacement
from omconnect.transforms.support import with_topic

__all__ = ["RegexRouter"]

R = TypeVar("R", bound=ConnectRecord)

_TOPIC_CACHE_SIZE = 1024


class RegexRouter(Transformation):
    """Rename topics that match a regular expression."""

    config_def: ClassVar[ConfigDef] = (
        ConfigDef()
        .define("regex", ConfigType.STRING, importance=Importance.HIGH,
                documentation="A (Java) regular expression the whole topic must match.")
        .define("replacement", ConfigType.STRING, importance=Importance.HIGH,
                documentation="The new topic; $1, ${name} refer to the regex's groups.")
    )

    def configure(self, config: Mapping[str, Any]) -> None:
        """Compile the regex and the replacement."""
        values = self.config_def.parse(config)
        try:
            self._regex = java_regex(values["regex"])
        except ValueError as exc:
            raise ConfigError(str(exc), key="regex") from None
        try:
            self._expand = java_replacement(values["replacement"], self._regex)
        except ValueError as exc:
            raise ConfigError(str(exc), key="replacement") from None
        self._routes: dict[str, str | None] = {}

    def route(self, topic: str) -> str | None:
        """The new name of ``topic``, or ``None`` when the regex does not match it."""
        routes = self._routes
        if topic in routes:
            return routes[topic]
        match = self._regex.fullmatch(topic)
        routed = self._expand(match) if match else None
        if len(routes) >= _TOPIC_CACHE_SIZE:
            routes.clear()
        routes[topic] = routed
        return routed

    def apply_columns(self, batch: Any, serialize_header: Any) -> Any:
        """The ``topic`` column renamed, per distinct topic."""
        from omconnect.columnar.transforms import map_topics

        return map_topics(batch, lambda topic: self.route(topic) or topic), None

    def apply(self, record: R) -> R | None:
        """The record with its topic renamed, if the regex matches it."""
        routed = self.route(record.topic)
        if routed is None or routed == record.topic:
            return record
        return with_topic(record, routed)
