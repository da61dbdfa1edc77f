"""The null sink: counts records and discards them.

The cheapest possible sink, to measure everything else in a pipeline (consume, convert,
transform, commit); it takes Arrow batches too (``put_batch``), so a pipeline on the
columnar path reaches it with no per-record object. ``put`` only adds the batch size to a
counter; ``flush`` has nothing to make durable, so every put record's offset is committed
at the next commit. The counts of every task in the process are kept in :data:`COUNTS`
(task config's connector name → records), for benchmarks and tests that run the worker
in-process; the runtime's own metrics (``put``) say the same from outside.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from omconnect import __version__
from omconnect.config import ConfigDef
from omconnect.connector import SinkConnector, SinkTask
from omconnect.records import SinkRecord

__all__ = ["COUNTS", "NullSinkConnector", "NullSinkTask"]

COUNTS: Counter[str] = Counter()
"""Records discarded so far in this process, by connector name (``name`` of its config)."""

_counts_lock = threading.Lock()


class NullSinkConnector(SinkConnector):
    """Discards records (entry point ``null``); ``tasks.max`` tasks share the partitions."""

    def __init__(self) -> None:
        super().__init__()
        self._name = ""

    def version(self) -> str:
        """The omconnect version."""
        return __version__

    def config_def(self) -> ConfigDef:
        """No settings of its own (``topics`` is common to every sink)."""
        return ConfigDef()

    def start(self, config: Mapping[str, Any]) -> None:
        """Remember the connector's name for :data:`COUNTS`."""
        self._name = str(config.get("name") or "null")

    def task_class(self) -> type[SinkTask]:
        """:class:`NullSinkTask`."""
        return NullSinkTask

    def task_configs(self, max_tasks: int) -> list[dict[str, Any]]:
        """``max_tasks`` identical tasks; the consumer group splits the partitions."""
        return [{"null.connector": self._name} for _ in range(max_tasks)]

    def stop(self) -> None:
        """Nothing to release."""

    def exactly_once_support(self) -> bool:
        """Discarding a record twice is the same as once."""
        return True


class NullSinkTask(SinkTask):
    """Counts what it is given."""

    def __init__(self) -> None:
        super().__init__()
        self.count = 0
        """Records this task was given."""
        self._name = "null"

    def version(self) -> str:
        """The omconnect version."""
        return __version__

    def start(self, config: Mapping[str, Any]) -> None:
        """Nothing to open."""
        self._name = str(config.get("null.connector") or "null")

    def put(self, records: Sequence[SinkRecord]) -> None:
        """Count ``records`` and forget them."""
        n = len(records)
        self.count += n
        with _counts_lock:
            COUNTS[self._name] += n

    def put_batch(self, batch: Any) -> None:
        """Count the rows of an Arrow batch (the columnar path) and forget them."""
        self.put(range(batch.num_rows))  # type: ignore[arg-type]

    def stop(self) -> None:
        """Nothing to close."""
