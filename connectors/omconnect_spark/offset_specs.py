"""Where a read starts and stops: ``startingOffsets``, ``endingOffsets``, their
``...ByTimestamp`` forms and ``startingTimestamp``/``endingTimestamp``, with the names,
shapes and precedence of Spark's Kafka source.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, Literal

import attrs

from omconnect.errors import ConfigError
from omconnect.records import TopicPartition

__all__ = ["EARLIEST", "LATEST", "OFFSETS_EXAMPLE", "OffsetSpec", "ending_spec",
           "parse_offset_spec", "starting_spec"]

EARLIEST = -2
"""In an offsets JSON, the earliest offset still kept (as in Spark's Kafka source)."""
LATEST = -1
"""In an offsets JSON, the offset the next message will get (as in Spark's Kafka source)."""

OFFSETS_EXAMPLE = '{"orders":{"0":23,"1":-2}}'
TIMESTAMPS_EXAMPLE = '{"orders":{"0":1700000000000}}'


@attrs.frozen(kw_only=True)
class OffsetSpec:
    """Where reading starts or stops.

    Attributes:
        kind: ``earliest``, ``latest``, ``specific`` (offsets per partition) or
            ``timestamp`` (the earliest record at or after a time, per partition).
        offsets: For ``specific``: an offset per partition, :data:`EARLIEST` (-2) and
            :data:`LATEST` (-1) allowed; partitions not listed use ``default``.
        default: What unlisted partitions of a ``specific`` or ``timestamp`` spec use
            (EARLIEST or LATEST).
        timestamps: For ``timestamp``: milliseconds since the epoch per partition.
        every_timestamp: For ``timestamp``: the time of every partition
            (``startingTimestamp``/``endingTimestamp``).
        if_none: For ``timestamp``: a partition with no record that late fails the read
            (``error``) or uses its end (``latest``).
        option: The option the spec came from (for messages).

    """

    kind: Literal["earliest", "latest", "specific", "timestamp"]
    offsets: Mapping[TopicPartition, int] = attrs.field(factory=dict)
    default: int = EARLIEST
    timestamps: Mapping[TopicPartition, int] = attrs.field(factory=dict)
    every_timestamp: int | None = None
    if_none: Literal["error", "latest"] = "latest"
    option: str = ""

    def wanted(self, partition: TopicPartition) -> int:
        """The offset asked for ``partition``: a position, EARLIEST or LATEST (for a
        ``timestamp`` spec, the default of partitions it gives no time).
        """
        if self.kind == "earliest":
            return EARLIEST
        if self.kind == "latest":
            return LATEST
        return self.offsets.get(partition, self.default)

    def timestamp(self, partition: TopicPartition) -> int | None:
        """The time asked for ``partition`` (``None``: not a time; see :meth:`wanted`)."""
        if self.kind != "timestamp":
            return None
        if self.every_timestamp is not None:
            return self.every_timestamp
        return self.timestamps.get(partition)


def parse_offset_spec(
    text: str, *, option: str, covers: Callable[[str], bool], default: int,
    timestamps: bool = False,
) -> OffsetSpec:
    """Parse ``startingOffsets`` / ``endingOffsets`` (or, with ``timestamps``,
    ``startingOffsetsByTimestamp`` / ``endingOffsetsByTimestamp``).

    Args:
        text: ``earliest``, ``latest`` or JSON such as ``{"orders":{"0":23,"1":-2}}``
            (for timestamps, ``{"orders":{"0":1700000000000}}``).
        option: The option's name, for messages.
        covers: Whether a topic is among those read; the JSON may only name these.
        default: What partitions the JSON does not list use (EARLIEST or LATEST).
        timestamps: The values are times (ms since the epoch), not offsets.

    Raises:
        ConfigError: The text is neither keyword nor valid offsets JSON (naming
            ``option`` and showing the expected form).

    """
    stripped = text.strip()
    if stripped.lower() in ("earliest", "latest") and not timestamps:
        return OffsetSpec(kind=stripped.lower(), option=option)  # type: ignore[arg-type]
    fix = (f"write JSON such as {TIMESTAMPS_EXAMPLE} (milliseconds since the epoch)"
           if timestamps else
           f"write earliest, latest or JSON such as {OFFSETS_EXAMPLE} (-2 earliest, -1 "
           "latest)")
    try:
        parsed = json.loads(stripped)
    except ValueError as exc:
        raise ConfigError(f"{option} is neither earliest, latest nor valid JSON ({exc}); {fix}",
                          key=option) from None
    if not isinstance(parsed, dict) or not parsed:
        raise ConfigError(f"{option} JSON must be a non-empty object of topics; {fix}",
                          key=option)
    offsets: dict[TopicPartition, int] = {}
    for topic, partitions in parsed.items():
        if not covers(topic):
            raise ConfigError(f"{option} names topic {topic!r}, which is not among the "
                              "topics read; add it to subscribe (or assign) or remove it",
                              key=option)
        if not isinstance(partitions, dict):
            raise ConfigError(f"{option}: topic {topic!r} must map partition numbers to "
                              f"offsets, got {partitions!r}; {fix}", key=option)
        for number, offset in partitions.items():
            if not (isinstance(number, str) and number.isdigit()):
                raise ConfigError(f"{option}: partition {number!r} of {topic!r} is not a "
                                  f"partition number; {fix}", key=option)
            lowest = 0 if timestamps else EARLIEST
            if isinstance(offset, bool) or not isinstance(offset, int) or offset < lowest:
                what = ("a timestamp >= 0 (ms since the epoch)" if timestamps else
                        "an integer >= 0, -2 (earliest) or -1 (latest)")
                raise ConfigError(f"{option}: {offset!r} of {topic}-{number} must be {what}",
                                  key=option)
            offsets[TopicPartition(topic, int(number))] = offset
    if timestamps:
        return OffsetSpec(kind="timestamp", timestamps=offsets, default=default,
                          option=option)
    return OffsetSpec(kind="specific", offsets=offsets, default=default, option=option)


def starting_spec(values: Mapping[str, Any], specs: Mapping[str, OffsetSpec],
              strategy: Literal["error", "latest"]) -> OffsetSpec | None:
    """Where reading starts: startingTimestamp, then startingOffsetsByTimestamp, then
    startingOffsets (Spark's Kafka source's precedence); ``None``: the mode's default.
    """
    if values["startingTimestamp"] is not None:
        return OffsetSpec(kind="timestamp", every_timestamp=values["startingTimestamp"],
                          if_none=strategy, option="startingTimestamp")
    by_time = specs.get("startingOffsetsByTimestamp")
    if by_time is not None:
        return attrs.evolve(by_time, if_none=strategy)
    return specs.get("startingOffsets")


def ending_spec(values: Mapping[str, Any], specs: Mapping[str, OffsetSpec]) -> OffsetSpec:
    """Where a batch read stops: endingTimestamp, endingOffsetsByTimestamp, then
    endingOffsets (default latest). A partition with no record that late ends at its end.
    """
    if values["endingTimestamp"] is not None:
        return OffsetSpec(kind="timestamp", every_timestamp=values["endingTimestamp"],
                          default=LATEST, option="endingTimestamp")
    return specs.get("endingOffsetsByTimestamp") or specs.get(
        "endingOffsets", OffsetSpec(kind="latest"))
