"""What ``omconnect standalone`` shows while it runs: one progress line per task.

:class:`ProgressTracker` turns the runtime's metric snapshots into :class:`TaskProgress`
(records so far, records per second over the last few seconds, lag or records in flight,
errors). On a terminal, :class:`LiveDisplay` keeps one line per task at the bottom of
standard error and redraws it in place, with log lines scrolling above it; elsewhere the
same figures are logged as structured ``progress`` lines every few seconds.
"""

from __future__ import annotations

import shutil
import threading
from collections import deque
from collections.abc import Iterable, Mapping
from typing import TextIO

import attrs

from omconnect.runtime.metrics import TaskMetricsSnapshot

__all__ = ["LiveDisplay", "ProgressTracker", "TaskProgress"]

_RATE_WINDOW_S = 3.0


@attrs.frozen(kw_only=True)
class TaskProgress:
    """One task's progress at one moment.

    Attributes:
        connector: The connector's name.
        task: The task's number.
        kind: ``"source"`` or ``"sink"``.
        state: The task's state (``RUNNING``, ``FAILED`` ...).
        records: Records moved so far: acknowledged by the transport (source) or handed
            to ``put`` (sink).
        rate: Records per second over the last few seconds.
        in_flight: Records sent but not acknowledged yet (source).
        lag: Records waiting in the transport (sink), where the transport tells.
        committed: Records whose offsets are committed.
        errors: Failed records or calls.
        dead_lettered: Records written to the dead-letter topic.

    """

    connector: str
    task: int
    kind: str
    state: str
    records: int
    rate: float
    in_flight: int
    lag: int | None
    committed: int
    errors: int
    dead_lettered: int

    def fields(self) -> dict[str, object]:
        """The figures as log fields."""
        fields: dict[str, object] = {
            "connector": self.connector, "task": self.task, "kind": self.kind,
            "state": self.state, "records": self.records, "rate": round(self.rate, 1),
            "committed": self.committed, "errors": self.errors,
        }
        if self.kind == "source":
            fields["in_flight"] = self.in_flight
        elif self.lag is not None:
            fields["lag"] = self.lag
        if self.dead_lettered:
            fields["dead_lettered"] = self.dead_lettered
        return fields

    def line(self) -> str:
        """The progress line shown on a terminal."""
        name = f"{self.connector}-{self.task}"
        extra = f"in-flight {self.in_flight:,}" if self.kind == "source" else \
            f"lag {self.lag:,}" if self.lag is not None else "lag ?"
        errors = f"errors {self.errors:,}"
        if self.dead_lettered:
            errors += f" (dead-lettered {self.dead_lettered:,})"
        return (f"{name:<20} {self.kind:<6} {self.state:<8} {self.records:>12,} records "
                f"{self.rate:>10,.0f}/s   {extra:<16} {errors}")


class ProgressTracker:
    """Computes :class:`TaskProgress` from successive metric snapshots."""

    def __init__(self) -> None:
        self._history: dict[tuple[str, int], deque[tuple[float, int]]] = {}

    def update(self, snapshots: Iterable[TaskMetricsSnapshot],
               states: Mapping[tuple[str, int], str]) -> list[TaskProgress]:
        """The progress of each task in ``snapshots``, given their ``states``."""
        result = []
        seen = set()
        for snap in snapshots:
            key = (snap.connector, snap.task)
            seen.add(key)
            records = snap.acknowledged if snap.kind == "source" else snap.put
            history = self._history.setdefault(key, deque())
            history.append((snap.taken_at, records))
            while len(history) > 2 and snap.taken_at - history[1][0] >= _RATE_WINDOW_S:
                history.popleft()
            first_time, first_records = history[0]
            elapsed = snap.taken_at - first_time
            rate = (records - first_records) / elapsed if elapsed > 0 else 0.0
            result.append(TaskProgress(
                connector=snap.connector, task=snap.task, kind=snap.kind,
                state=states.get(key, "UNASSIGNED"), records=records, rate=rate,
                in_flight=snap.in_flight, lag=snap.lag, committed=snap.committed,
                errors=snap.errors, dead_lettered=snap.dead_lettered))
        for key in list(self._history):
            if key not in seen:
                del self._history[key]
        return result


class LiveDisplay:
    """A block of lines at the bottom of a terminal, redrawn in place.

    Log lines written through :meth:`write_log` appear above the block. Thread-safe.

    Args:
        stream: The terminal (standard error).

    """

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._lock = threading.Lock()
        self._lines: list[str] = []
        self._drawn = 0

    def _clear(self) -> None:
        if self._drawn:
            self._stream.write(f"\x1b[{self._drawn}F\x1b[J")
            self._drawn = 0

    def _draw(self) -> None:
        width = max(20, shutil.get_terminal_size((120, 24)).columns - 1)
        for line in self._lines:
            self._stream.write(line[:width] + "\n")
        self._drawn = len(self._lines)

    def update(self, lines: list[str]) -> None:
        """Show ``lines`` instead of the previous ones."""
        with self._lock:
            self._clear()
            self._lines = list(lines)
            self._draw()
            self._stream.flush()

    def write_log(self, text: str) -> None:
        """Write a log line (ending with a newline) above the block."""
        with self._lock:
            self._clear()
            self._stream.write(text)
            self._draw()
            self._stream.flush()

    def close(self) -> None:
        """Leave the last lines on the screen and stop redrawing them."""
        with self._lock:
            self._drawn = 0
            self._lines = []
            self._stream.flush()
