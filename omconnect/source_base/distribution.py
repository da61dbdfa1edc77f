"""Distribution strategies: which task reads which object, decided from its name alone.

Every task of a connector runs the same strategy over the same names and keeps the
objects assigned to its own ``task.id``; so each object is read by exactly one task,
without the tasks talking to each other, and before any object is opened.

Config keys:

- ``distribution.type``: ``hash`` (default) assigns an object by a stable hash (CRC-32
  of its UTF-8 name) modulo the number of tasks; ``partition`` by the integer that the
  ``partition`` group of ``file.name.pattern`` captures, modulo the number of tasks (so
  objects of one partition stay in order on one task).
- ``file.name.pattern``: a regular expression searched in each name (anchor it with
  ``^``/``$`` to match whole names). Required for ``partition``, where it must have a
  named group ``partition`` capturing digits; optional for ``hash``, where it filters.
  Names that do not match are read by no task.
- ``task.id`` and ``tasks.max``: the task's number and the number of tasks; a connector
  sets both in each task config with :func:`task_configs`.
"""

from __future__ import annotations

import abc
import re
import zlib
from collections.abc import Mapping
from typing import Any

from omconnect.errors import ConfigError

__all__ = [
    "DISTRIBUTION_TYPES",
    "DistributionStrategy",
    "HashDistribution",
    "PartitionRegexDistribution",
    "create_distribution",
    "task_configs",
]

DISTRIBUTION_TYPES = ("hash", "partition")
"""Values of ``distribution.type``."""


def _compile(pattern: str | re.Pattern[str] | None) -> re.Pattern[str] | None:
    if pattern is None or isinstance(pattern, re.Pattern):
        return pattern
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise ConfigError(f"file.name.pattern {pattern!r} is not a valid regular expression: "
                          f"{exc}", key="file.name.pattern") from None


class DistributionStrategy(abc.ABC):
    """Assigns object names to tasks ``0 .. max_tasks - 1``.

    Args:
        max_tasks: How many tasks share the objects (at least 1).
        pattern: Only names containing a match are assigned (``file.name.pattern``).

    Raises:
        ConfigError: ``max_tasks`` below 1 or a bad pattern.

    """

    def __init__(self, max_tasks: int, pattern: str | re.Pattern[str] | None = None) -> None:
        if max_tasks < 1:
            raise ConfigError(f"tasks.max must be at least 1, got {max_tasks}", key="tasks.max")
        self.max_tasks = max_tasks
        self.pattern = _compile(pattern)

    @abc.abstractmethod
    def task_for(self, name: str) -> int | None:
        """The task that reads object ``name``, or ``None`` when no task should."""

    def is_assigned(self, name: str, task_id: int) -> bool:
        """Whether task ``task_id`` reads object ``name``."""
        return self.task_for(name) == task_id

    def __repr__(self) -> str:
        pattern = self.pattern.pattern if self.pattern is not None else None
        return f"{type(self).__name__}(max_tasks={self.max_tasks}, pattern={pattern!r})"


class HashDistribution(DistributionStrategy):
    """CRC-32 of the UTF-8 name modulo ``max_tasks`` (stable across processes and runs,
    unlike Python's ``hash``).
    """

    def task_for(self, name: str) -> int | None:
        """The task for ``name``; ``None`` when a pattern is set and does not match."""
        if self.pattern is not None and self.pattern.search(name) is None:
            return None
        return zlib.crc32(name.encode("utf-8", "surrogatepass")) % self.max_tasks


class PartitionRegexDistribution(DistributionStrategy):
    """The ``partition`` group of ``file.name.pattern`` (an integer) modulo ``max_tasks``.

    Raises:
        ConfigError: No pattern, or one without a ``partition`` group.

    """

    def __init__(self, max_tasks: int, pattern: str | re.Pattern[str] | None = None) -> None:
        super().__init__(max_tasks, pattern)
        if self.pattern is None or "partition" not in self.pattern.groupindex:
            raise ConfigError(
                "distribution.type=partition needs file.name.pattern with a named group "
                r"'partition', e.g. '(?P<partition>\d+)-\d+\.jsonl$'", key="file.name.pattern")

    def task_for(self, name: str) -> int | None:
        """The task for ``name``; ``None`` when the pattern does not match or the
        ``partition`` group is not an integer.
        """
        assert self.pattern is not None
        match = self.pattern.search(name)
        if match is None:
            return None
        text = match.group("partition")
        if text is None or not text.isdigit():
            return None
        return int(text) % self.max_tasks


def create_distribution(kind: str, max_tasks: int,
                        pattern: str | re.Pattern[str] | None = None) -> DistributionStrategy:
    """The strategy for ``distribution.type`` ``kind``.

    Raises:
        ConfigError: An unknown kind, or a bad pattern for it.

    """
    if kind == "hash":
        return HashDistribution(max_tasks, pattern)
    if kind == "partition":
        return PartitionRegexDistribution(max_tasks, pattern)
    raise ConfigError(f"distribution.type must be one of {', '.join(DISTRIBUTION_TYPES)}, got "
                      f"{kind!r}", key="distribution.type")


def task_configs(config: Mapping[str, Any], max_tasks: int) -> list[dict[str, Any]]:
    """``max_tasks`` task configs: ``config`` with ``task.id`` 0, 1, ... and ``tasks.max``
    set to ``max_tasks`` (what a connector's ``task_configs`` returns, so that every task
    computes assignments over the same number of tasks).
    """
    if max_tasks < 1:
        raise ConfigError(f"tasks.max must be at least 1, got {max_tasks}", key="tasks.max")
    return [{**config, "task.id": str(i), "tasks.max": str(max_tasks)} for i in range(max_tasks)]
