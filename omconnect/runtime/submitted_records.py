"""Which source offsets are safe to commit: acknowledged, with everything before them.

A source record's offset may be committed only when the transport acknowledged that
record **and** every earlier record of the same source partition; committing it earlier
would skip a record that might still be lost. :class:`SubmittedRecords` tracks this per
source partition, in submission order.

The unit of completion is a :class:`Submission`: the records of one ``poll``, which are
sent as one batch. It is complete when everything it waits for has completed: the send's
acknowledgement (including any resend of failed messages) and the dead-letter writes of
its tolerated records. Records a transform dropped wait for nothing. Within a submission,
consecutive records of one source partition form a *run*, whose offset is that of its last
record; per partition, runs complete strictly in order, so a run is committable only once
every run before it (of that partition) is.

Used from one thread at a time (the task thread, or the herder's thread after the task
thread was abandoned, under the runner's lock): no locking inside.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping, Sequence
from operator import attrgetter
from typing import Any

from omconnect.records import JsonScalar, SourceRecord

__all__ = ["PartitionKey", "Submission", "SubmittedRecords"]

PartitionKey = tuple[tuple[str, JsonScalar], ...]
"""A hashable source partition: its sorted (key, value) pairs."""

_SOURCE_PARTITION = attrgetter("source_partition")


class _Run:
    """Consecutive records of one source partition within one submission."""

    __slots__ = ("count", "offset", "partition", "submission")

    def __init__(self, submission: Submission, partition: Mapping[str, JsonScalar],
                 offset: Mapping[str, Any], count: int) -> None:
        self.submission = submission
        self.partition = partition
        self.offset = offset
        self.count = count


class Submission:
    """The records of one poll, tracked until everything they wait for completed.

    It keeps their number, not the records: a completed submission waits in the runs'
    queues until the next offset flush, and holding a poll's records that long would keep
    every record of a flush interval alive (and make each full garbage collection walk
    them).

    Attributes:
        count: How many records were polled (before transforms).
        waiting: How many acknowledgements are outstanding (a send, dead-letter writes).

    """

    __slots__ = ("count", "waiting")

    def __init__(self, count: int) -> None:
        self.count = count
        self.waiting = 0

    @property
    def complete(self) -> bool:
        """Whether nothing is outstanding."""
        return self.waiting <= 0


def _runs(partitions: list[Mapping[str, JsonScalar]]) -> list[tuple[int, int]]:
    """(start, end) of each run of consecutive equal source partitions."""
    bounds = []
    n = len(partitions)
    i = 0
    while i < n:
        partition = partitions[i]
        j = i + 1
        while j < n:
            other = partitions[j]
            if other is not partition and other != partition:
                break
            j += 1
        bounds.append((i, j))
        i = j
    return bounds


class SubmittedRecords:
    """Submitted source records per source partition, in submission order."""

    def __init__(self) -> None:
        self._runs: dict[PartitionKey, deque[_Run]] = {}
        self.in_flight = 0
        """Records of incomplete submissions (for back-pressure)."""

    def submit(self, records: Sequence[SourceRecord]) -> Submission:
        """Track ``records`` (one poll, in order); set ``waiting`` on the result."""
        n = len(records)
        submission = Submission(n)
        runs = self._runs
        partitions = list(map(_SOURCE_PARTITION, records))
        # The usual poll has one source partition: decided at C speed (identity first).
        bounds = [(0, n)] if n and partitions.count(partitions[0]) == n else _runs(partitions)
        for i, j in bounds:
            partition = partitions[i]
            key = tuple(sorted(partition.items()))
            run = _Run(submission, partition, records[j - 1].source_offset, j - i)
            queue = runs.get(key)
            if queue is None:
                runs[key] = deque((run,))
            else:
                queue.append(run)
        self.in_flight += n
        return submission

    def submit_batch(self, count: int, partition: Mapping[str, JsonScalar],
                     offset: Mapping[str, Any]) -> Submission:
        """Track a columnar batch of ``count`` rows from one source partition, reaching
        ``offset``: one run (see :meth:`submit`); set ``waiting`` on the result.

        Raises:
            TypeError: ``partition`` is not a dict of str to JSON scalars.

        """
        submission = Submission(count)
        key = tuple(sorted(partition.items()))
        hash(key)
        run = _Run(submission, partition, offset, count)
        queue = self._runs.get(key)
        if queue is None:
            self._runs[key] = deque((run,))
        else:
            queue.append(run)
        self.in_flight += count
        return submission

    def completed(self, submission: Submission) -> None:
        """Note that ``submission`` is complete (for the in-flight count)."""
        self.in_flight -= submission.count

    def committable(self) -> tuple[dict[PartitionKey, tuple[Mapping[str, JsonScalar],
                                                            Mapping[str, Any]]], int]:
        """Take the offsets that became safe to commit since the last call.

        Returns:
            The newest safe offset per source partition (partition key → (partition,
            offset)), and how many records those offsets newly cover.

        """
        safe: dict[PartitionKey, tuple[Mapping[str, JsonScalar], Mapping[str, Any]]] = {}
        covered = 0
        emptied = []
        for key, queue in self._runs.items():
            last = None
            while queue and queue[0].submission.waiting <= 0:
                last = queue.popleft()
                covered += last.count
            if last is not None:
                safe[key] = (last.partition, last.offset)
            if not queue:
                emptied.append(key)
        for key in emptied:
            del self._runs[key]
        return safe, covered

    @property
    def partitions_in_flight(self) -> int:
        """How many source partitions have records not yet committable."""
        return len(self._runs)
