"""The built-in predicates: TopicNameMatches, HasHeaderKey, RecordIsTombstone.

Kafka Connect's ``org.apache.kafka.connect.transforms.predicates.*``. A predicate guards a
transformation (``transforms.<alias>.predicate=<predicate alias>``, optionally with
``transforms.<alias>.negate=true``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from omconnect.config.definition import ConfigDef
from omconnect.config.types import ConfigType, Importance
from omconnect.config.validators import NonEmptyString
from omconnect.errors import ConfigError
from omconnect.records import ConnectRecord
from omconnect.transforms.base import Predicate
from omconnect.transforms.java import java_regex

__all__ = ["HasHeaderKey", "RecordIsTombstone", "TopicNameMatches"]

_TOPIC_CACHE_SIZE = 1024


class TopicNameMatches(Predicate):
    """True for records whose whole topic name matches ``pattern`` (a Java regex)."""

    config_def: ClassVar[ConfigDef] = ConfigDef().define(
        "pattern", ConfigType.STRING, importance=Importance.MEDIUM,
        validators=[NonEmptyString()],
        documentation="A (Java) regular expression the whole topic name must match.")

    def configure(self, config: Mapping[str, Any]) -> None:
        """Compile the pattern."""
        try:
            self._regex = java_regex(self.config_def.parse(config)["pattern"])
        except ValueError as exc:
            raise ConfigError(str(exc), key="pattern") from None
        self._results: dict[str, bool] = {}

    def test_columns(self, batch: Any) -> Any:
        """Whether each row's topic matches (decided once per distinct topic)."""
        from omconnect.columnar.transforms import topic_mask

        return topic_mask(batch, lambda topic: self._regex.fullmatch(topic) is not None)

    def test(self, record: ConnectRecord) -> bool:
        """Whether the record's topic matches the pattern (cached per topic)."""
        topic = record.topic
        result = self._results.get(topic)
        if result is None:
            result = self._regex.fullmatch(topic) is not None
            if len(self._results) >= _TOPIC_CACHE_SIZE:
                self._results.clear()
            self._results[topic] = result
        return result


class HasHeaderKey(Predicate):
    """True for records with at least one header with key ``name``."""

    config_def: ClassVar[ConfigDef] = ConfigDef().define(
        "name", ConfigType.STRING, importance=Importance.MEDIUM,
        validators=[NonEmptyString()], documentation="The header key to look for.")

    def configure(self, config: Mapping[str, Any]) -> None:
        """Read the header key."""
        self._name: str = self.config_def.parse(config)["name"]

    def test_columns(self, batch: Any) -> Any:
        """Whether each row has a header with the key."""
        from omconnect.columnar.transforms import has_header

        return has_header(batch, self._name)

    def test(self, record: ConnectRecord) -> bool:
        """Whether the record has a header with the key."""
        name = self._name
        return any(header.key == name for header in record.headers)


class RecordIsTombstone(Predicate):
    """True for tombstones: records whose value is null."""

    def test_columns(self, batch: Any) -> Any:
        """Whether each row's value is null."""
        return batch.column("value").is_null()

    def test(self, record: ConnectRecord) -> bool:
        """Whether the record's value is null."""
        return record.value is None
