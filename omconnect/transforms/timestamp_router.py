"""TimestampRouter: rename the topic after the record's timestamp.

Kafka Connect's ``org.apache.kafka.connect.transforms.TimestampRouter``, typically used to
write into time-bucketed tables or indexes. The topic becomes ``topic.format`` with
``${topic}`` replaced by the topic and ``${timestamp}`` by the record's timestamp written in
``timestamp.format`` (a ``java.text.SimpleDateFormat`` pattern, in UTC: ``yyyy``, ``MM``,
``dd``, ``HH``, ``mm``, ``ss`` and the rest listed in :mod:`omconnect.transforms.java`).
A record without a timestamp is an error. Formatted timestamps are cached per unit of
the pattern (per day for ``yyyyMMdd``), so the hot path does not format every record.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, TypeVar

from omconnect.config.definition import ConfigDef
from omconnect.config.types import ConfigType, Importance
from omconnect.errors import ConfigError, DataError
from omconnect.records import ConnectRecord
from omconnect.transforms.base import Transformation
from omconnect.transforms.java import JavaDateFormat
from omconnect.transforms.support import with_topic

__all__ = ["TimestampRouter"]

R = TypeVar("R", bound=ConnectRecord)

_CACHE_SIZE = 1024


class TimestampRouter(Transformation):
    """Rename topics after the record timestamp, e.g. ``orders`` → ``orders-20240305``."""

    config_def: ClassVar[ConfigDef] = (
        ConfigDef()
        .define("topic.format", ConfigType.STRING, "${topic}-${timestamp}",
                importance=Importance.HIGH,
                documentation="The new topic; ${topic} and ${timestamp} are replaced.")
        .define("timestamp.format", ConfigType.STRING, "yyyyMMdd", importance=Importance.HIGH,
                documentation="A java.text.SimpleDateFormat pattern for ${timestamp} (UTC).")
    )

    def configure(self, config: Mapping[str, Any]) -> None:
        """Read the topic template and compile the timestamp format."""
        values = self.config_def.parse(config)
        self._template: str = values["topic.format"]
        try:
            self._format = JavaDateFormat(values["timestamp.format"])
        except ValueError as exc:
            raise ConfigError(str(exc), key="timestamp.format") from None
        self._unit = self._format.granularity_ms
        self._formatted: dict[int, str] = {}

    def timestamp_text(self, epoch_millis: int) -> str:
        """``epoch_millis`` written in ``timestamp.format``."""
        bucket = epoch_millis // self._unit
        text = self._formatted.get(bucket)
        if text is None:
            text = self._format.format_millis(epoch_millis)
            if len(self._formatted) >= _CACHE_SIZE:
                self._formatted.clear()
            self._formatted[bucket] = text
        return text

    def apply(self, record: R) -> R | None:
        """The record with its topic renamed after its timestamp."""
        if record.timestamp is None:
            raise DataError("TimestampRouter needs a record timestamp, and this record has "
                            "none", topic=record.topic)
        topic = self._template.replace("${topic}", record.topic).replace(
            "${timestamp}", self.timestamp_text(record.timestamp))
        return with_topic(record, topic)
