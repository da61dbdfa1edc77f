"""Which partitions a read covers: ``subscribe``/``topics``, ``subscribePattern`` or
``assign``, as in Spark's Kafka source (exactly one of them).

* ``subscribe`` (or ``topics``, this source's older name): every partition of the named
  topics. A named topic that does not exist is an error naming it
  (``missingTopics=fail``, the default) or, for a stream, waited for
  (``missingTopics=wait``: its partitions join the query once it exists).
* ``subscribePattern``: every partition of every topic whose whole name matches the Java
  or Python regular expression (the subset both share); looked up again at every
  trigger, so topics created later join the query. Needs a transport that lists topics.
* ``assign``: exactly the partitions of a JSON object ``{"orders": [0, 1]}``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Literal

import attrs

from omconnect.errors import ConfigError
from omconnect.records import TopicPartition

__all__ = ["MissingTopicsError", "TopicSelection", "parse_assign"]

_ASSIGN_EXAMPLE = '{"orders":[0,1]}'


class MissingTopicsError(ConfigError):
    """Named topics do not exist (``missingTopics=fail``)."""


@attrs.frozen(kw_only=True)
class TopicSelection:
    """The partitions a read covers. Picklable.

    Attributes:
        kind: ``subscribe``, ``pattern`` or ``assign``.
        topics: ``subscribe``: the topics; ``assign``: the topics of the partitions.
        pattern: ``pattern``: the regular expression.
        assigned: ``assign``: the partitions.
        wait_for_missing: ``subscribe``: a missing topic is waited for, not an error.

    """

    kind: Literal["subscribe", "pattern", "assign"]
    topics: tuple[str, ...] = ()
    pattern: str | None = None
    assigned: tuple[TopicPartition, ...] = ()
    wait_for_missing: bool = False

    @property
    def option(self) -> str:
        """The option that made this selection."""
        return {"subscribe": "subscribe", "pattern": "subscribePattern",
                "assign": "assign"}[self.kind]

    def covers_topic(self, topic: str) -> bool:
        """Whether ``topic`` may hold partitions of this selection."""
        if self.kind == "pattern":
            assert self.pattern is not None
            return re.fullmatch(self.pattern, topic) is not None
        return topic in self.topics

    def partitions(self, listed: Mapping[str, int]) -> list[TopicPartition]:
        """The partitions covered, given the topics that exist and their partition counts.

        Raises:
            MissingTopicsError: A named topic or an assigned partition does not exist
                (unless ``wait_for_missing``).

        """
        if self.kind == "pattern":
            names = sorted(t for t in listed if self.covers_topic(t))
            return [TopicPartition(t, p) for t in names for p in range(listed[t])]
        if self.kind == "assign":
            missing = [tp for tp in self.assigned
                       if tp.topic not in listed or tp.partition >= listed[tp.topic]]
            if missing:
                raise MissingTopicsError(
                    f"assign names {', '.join(str(tp) for tp in missing)}, which does not "
                    "exist; create the topic with enough partitions or fix assign",
                    key="assign")
            return sorted(self.assigned)
        missing_topics = [t for t in self.topics if t not in listed]
        if missing_topics and not self.wait_for_missing:
            raise MissingTopicsError(
                f"topic{'s' if len(missing_topics) > 1 else ''} "
                f"{', '.join(repr(t) for t in missing_topics)} "
                f"{'do' if len(missing_topics) > 1 else 'does'} not exist on the transport; "
                "check the name in subscribe, or set missingTopics=wait to wait for it "
                "(streams)", key="subscribe")
        return [TopicPartition(t, p) for t in self.topics if t in listed
                for p in range(listed[t])]


def parse_assign(text: str) -> tuple[TopicPartition, ...]:
    """The partitions of an ``assign`` JSON object.

    Raises:
        ConfigError: Not a JSON object of topics to lists of partition numbers.

    """
    fix = f"write JSON such as {_ASSIGN_EXAMPLE}"
    try:
        parsed = json.loads(text)
    except ValueError as exc:
        raise ConfigError(f"assign is not valid JSON ({exc}); {fix}", key="assign") from None
    if not isinstance(parsed, dict) or not parsed:
        raise ConfigError(f"assign must be a non-empty object of topics; {fix}", key="assign")
    partitions: list[TopicPartition] = []
    for topic, numbers in parsed.items():
        if not isinstance(numbers, Sequence) or isinstance(numbers, str) or not all(
                isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in numbers):
            raise ConfigError(f"assign: topic {topic!r} must map to a list of partition "
                              f"numbers, got {numbers!r}; {fix}", key="assign")
        partitions += [TopicPartition(topic, int(n)) for n in numbers]
    return tuple(dict.fromkeys(partitions))
