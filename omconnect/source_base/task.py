"""IteratorSourceTask: write a source as an iterator of records; the base does the rest.

An author implements three methods (plus ``version``):

- :meth:`IteratorSourceTask.configure` turns the task config into a config object (a
  :class:`~omconnect.source_base.SourceCommonConfig` or a subclass of it), checking it;
- :meth:`IteratorSourceTask.iterator` returns an iterator of
  :class:`~omconnect.records.SourceRecord`; it yields ``None`` when nothing is available
  right now;
- :meth:`IteratorSourceTask.close_resources` closes connections and files.

The base implements ``start``/``poll``/``stop``/``commit``/``commit_record``: batching,
idle backoff, prompt stop and the offset manager's bookkeeping.

The columnar path: the iterator may also yield :class:`~omconnect.columnar.SourceBatch`
objects (Arrow rows of one source partition, with the offset reached after them), which
count as their number of rows. Subclass :class:`IteratorBatchSourceTask` to have the
runtime poll them as batches (``poll_batch``: the batches, and the records between
them, in order); ``poll`` turns each batch into records. :attr:`~IteratorSourceTask.columnar`
tells the iterator which of the two the runtime polls, so it yields batches only where
they go on as batches.

Poll, exactly:

1. ``poll()`` takes records from the iterator until it has ``max.poll.records`` of them,
   ``poll.timeout.ms`` has passed, the iterator has nothing right now (it yields ``None``
   or ends), or stop was requested; it returns them (``None`` when there are none).
2. When the iterator has nothing and the batch is empty, the base backs off: it does not
   ask the iterator again before the next idle delay (``poll.backoff.initial.ms``, doubling
   per consecutive empty read, at most ``poll.backoff.max.ms`` and never above 5 s;
   reset by any record). The wait happens inside ``poll`` but never beyond its timeout: a
   later ``poll`` waits out the rest.
3. When the iterator ends, the base calls :meth:`~IteratorSourceTask.iterator` again for a
   new pass: at once if the pass produced records, else after an idle delay. A pass may
   therefore be a single listing of what is there now.
4. An exception from the iterator ends that iterator. ``poll`` returns the records already
   taken (if any) and raises the exception on the next call (at once if there were none);
   the call after that starts a new iterator (a :class:`~omconnect.errors.RetriableError`
   the runtime retries thus resumes from the offset manager's state).

Stop, exactly: ``stop()`` (from any thread) sets the stop flag. A ``poll`` in progress
stops asking the iterator for records as soon as the current ``next()`` returns, returns
every record it already took (what was read is delivered) and wakes from any backoff at
once. Resources are closed on the thread that is not busy: by ``stop()`` itself when no
``poll`` is running, else by that ``poll`` just before it returns. Closing closes the
iterator (a generator's ``finally`` blocks run) and calls ``close_resources``, and should
finish within 5 s (a longer close is logged as a warning). Every later ``poll`` returns
``None``. A record the iterator had read but not yet yielded is not delivered; its offset
was not recorded, so it is read again after a restart.
"""

from __future__ import annotations

import abc
import logging
import threading
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from omconnect.connector.task import SourceTask
from omconnect.errors import IllegalStateError
from omconnect.records import RecordMetadata, SourceRecord
from omconnect.source_base.backoff import (
    MAX_IDLE_DELAY,
    SYSTEM_CLOCK,
    Backoff,
    BackoffConfig,
    Clock,
)
from omconnect.source_base.config import SourceCommonConfig
from omconnect.source_base.offset_manager import OffsetManager

if TYPE_CHECKING:
    from omconnect.columnar import SourceBatch

__all__ = ["CLOSE_TIMEOUT", "IteratorBatchSourceTask", "IteratorSourceTask"]

_log = logging.getLogger(__name__)

CLOSE_TIMEOUT = 5.0
"""Seconds closing (the iterator and ``close_resources``) should take at most."""

C = TypeVar("C", bound=SourceCommonConfig)

_FULL, _IDLE, _ENDED = 0, 1, 2

Item = Any
"""What an iterator yields: a SourceRecord, a SourceBatch, or None (nothing right now)."""


class IteratorSourceTask(SourceTask, Generic[C]):
    """A source task written as an iterator of records (see the module docstring).

    Subclasses that define ``__init__`` must call ``super().__init__()``. The base keeps
    its state in name-mangled attributes, so a subclass may use any ``_name`` of its own.

    Args:
        clock: Where waits happen; tests pass a fake clock to observe backoff delays.

    Attributes:
        config: What :meth:`configure` returned (set by :meth:`start`).
        offset_manager: The task's offset entries, reading the context's offset storage
            (set by :meth:`start`, before :meth:`configure` runs).

    """

    config: C
    offset_manager: OffsetManager

    def __init__(self, *, clock: Clock = SYSTEM_CLOCK) -> None:
        super().__init__()
        self.__clock = clock
        self.__stop = threading.Event()
        self.__stop_requested = False
        self.__lock = threading.Lock()
        self.__started = False
        self.__closed = False
        self.__iterator: Iterator[Item] | None = None
        self.__rows = 0
        self.__rows_in_batches = False
        self.__columnar = False
        self.__pass_yielded = False
        self.__resume_at: float | None = None
        self.__pending_error: Exception | None = None
        self.__commit_seen = False
        self.__max_records = 1
        self.__poll_timeout = 1.0
        self.__idle = Backoff(stop=self.__stop, clock=clock)
        self.__backoff = Backoff(stop=self.__stop, clock=clock)

    # -- what an author implements ------------------------------------------------------
    @abc.abstractmethod
    def configure(self, config: Mapping[str, Any]) -> C:
        """Parse and check the task config; return the config object.

        Raises:
            ConfigError: Naming each bad key and its fix.

        """

    @abc.abstractmethod
    def iterator(self, backoff: Backoff) -> Iterator[SourceRecord | SourceBatch | None]:
        """The records to send, in order; ``None`` when nothing is available right now.
        Where :attr:`columnar` is true, rows may come as
        :class:`~omconnect.columnar.SourceBatch` objects too.

        Use :attr:`offset_manager` to resume where the last committed (or, within this
        task, the last yielded) record left off. The iterator may end: the base then asks
        for a new one (see the module docstring).

        Args:
            backoff: A backoff with the configured profile, cut short by stop, for the
                iterator's own waits (e.g. retrying a recoverable storage error).

        """

    @abc.abstractmethod
    def close_resources(self) -> None:
        """Close connections and files; called once, within 5 s of stop."""

    def create_idle_backoff(self, config: BackoffConfig) -> Backoff:
        """The backoff between empty reads (override for another profile; its delays are
        capped at 5 s).
        """
        capped = BackoffConfig(
            initial_delay=min(config.initial_delay, MAX_IDLE_DELAY),
            max_delay=min(config.max_delay, MAX_IDLE_DELAY),
            multiplier=config.multiplier,
        )
        return Backoff(capped, stop=self.__stop, clock=self.__clock)

    # -- SourceTask ----------------------------------------------------------------------
    @property
    def columnar(self) -> bool:
        """Whether the runtime polls this task for Arrow batches (``poll_batch``): set by
        the first poll, before the iterator is first asked for anything.
        """
        return self.__columnar

    @property
    def stopping(self) -> bool:
        """Whether stop was requested (an iterator may check it between slow steps)."""
        return self.__stop_requested

    def start(self, config: Mapping[str, Any]) -> None:
        """Create the offset manager, call :meth:`configure`, then :meth:`iterator`."""
        context = self._context
        self.offset_manager = OffsetManager(
            context.offset_storage_reader if context is not None else None)
        self.config = self.configure(config)
        self.__max_records = self.config.max_poll_records
        self.__poll_timeout = self.config.poll_timeout
        self.__idle = self.create_idle_backoff(self.config.backoff)
        self.__backoff = Backoff(self.config.backoff, stop=self.__stop, clock=self.__clock)
        self.__started = True
        self.__iterator = iter(self.iterator(self.__backoff))
        self.__pass_yielded = False

    def poll(self) -> list[SourceRecord] | None:
        """A batch of records, or ``None`` (see the module docstring for the rules)."""
        items = self._poll_items()
        if items is None:
            return None
        if not self.__rows_in_batches:
            return items
        from omconnect.columnar.records import records_of

        return records_of(items)

    def _poll_items(self) -> list[Any] | None:
        """What the iterator yields until the poll rules say stop (records and batches)."""
        if not self.__started:
            raise IllegalStateError("poll() called before start()")
        try:
            with self.__lock:
                if self.__closed or self.__stop_requested:
                    return None
                error = self.__pending_error
                if error is not None:
                    self.__pending_error = None
                    raise error
                if self.__commit_seen:
                    self.__commit_seen = False
                    self.offset_manager.evict_committed()
                return self.__gather() or None
        finally:
            if self.__stop_requested:
                self.__close_if_idle()

    def stop(self) -> None:
        """Request stop (any thread): wakes ``poll``; resources close within 5 s."""
        self.__stop_requested = True
        self.__stop.set()
        self.__close_if_idle()

    def commit_record(self, record: SourceRecord, metadata: RecordMetadata | None) -> None:
        """The runtime acknowledged ``record``: tell the offset manager (any thread)."""
        self.offset_manager.remove_record(record)

    def commit(self) -> None:
        """The runtime committed offsets: the next ``poll`` evicts committed entries."""
        self.__commit_seen = True

    # -- internals -----------------------------------------------------------------------
    def _set_columnar(self) -> None:
        self.__columnar = True

    def __gather(self) -> list[Any]:
        now = self.__clock.now
        deadline = now() + self.__poll_timeout
        batch: list[Any] = []
        self.__rows = 0
        self.__rows_in_batches = False
        while not self.__stop_requested:
            resume_at = self.__resume_at
            if resume_at is not None:
                current = now()
                if current < resume_at:
                    if batch or current >= deadline:
                        break
                    self.__clock.wait(self.__stop, min(resume_at, deadline) - current)
                    continue
                self.__resume_at = None
            before = len(batch)
            try:
                iterator = self.__iterator
                if iterator is None:
                    iterator = self.__iterator = iter(self.iterator(self.__backoff))
                    self.__pass_yielded = False
                outcome = self.__read(iterator, batch, deadline)
            except Exception as exc:
                self.__iterator = None
                if len(batch) > before:
                    self.__idle.reset()
                if not batch:
                    raise
                self.__pending_error = exc
                break
            if len(batch) > before:
                self.__idle.reset()
                self.__pass_yielded = True
            if outcome == _FULL:
                break
            if outcome == _ENDED:
                self.__iterator = None
                if self.__pass_yielded:
                    continue  # a pass that produced records: start the next one at once
            # Nothing right now: do not ask again before the next idle delay.
            self.__resume_at = now() + self.__idle.next_delay()
            if batch:
                break
        return batch

    def __read(self, iterator: Iterator[Item], batch: list[Any], deadline: float) -> int:
        """Append records (and batches) to ``batch``; why it stopped: full (or time,
        stop), idle, ended.
        """
        append = batch.append
        now = self.__clock.now
        limit = self.__max_records
        batch_type: Any = _batch_type()
        for record in iterator:
            if record is None:
                return _IDLE
            append(record)
            if type(record) is batch_type:
                self.__rows += record.num_rows - 1
                self.__rows_in_batches = True
            if len(batch) + self.__rows >= limit or self.__stop_requested or \
                    now() >= deadline:
                return _FULL
        return _ENDED

    def __close_if_idle(self) -> None:
        if not self.__lock.acquire(blocking=False):
            return  # a poll is running; it closes when it returns
        try:
            if not self.__closed:
                self.__closed = True
                self.__close()
        finally:
            self.__lock.release()

    def __close(self) -> None:
        started = self.__clock.now()
        iterator, self.__iterator = self.__iterator, None
        self.__pending_error = None
        close_iterator = getattr(iterator, "close", None)
        try:
            if callable(close_iterator):
                close_iterator()
        except Exception:
            _log.warning("closing the source iterator failed", exc_info=True)
        if self.__started:
            try:
                self.close_resources()
            except Exception:
                _log.warning("close_resources() failed", exc_info=True)
        took = self.__clock.now() - started
        if took > CLOSE_TIMEOUT:
            _log.warning("closing the source took %.1f s, more than the %.0f s allowed",
                         took, CLOSE_TIMEOUT)


_BATCH_TYPE: list[type] = []


def _batch_type() -> type:
    """:class:`~omconnect.columnar.SourceBatch`, or a type nothing is when pyarrow is
    missing (no iterator can then have made a batch).
    """
    if not _BATCH_TYPE:
        try:
            from omconnect.columnar import SourceBatch
        except ImportError:
            _BATCH_TYPE.append(_NoBatch)
        else:
            _BATCH_TYPE.append(SourceBatch)
    return _BATCH_TYPE[0]


class _NoBatch:
    pass


class IteratorBatchSourceTask(IteratorSourceTask[C]):
    """An :class:`IteratorSourceTask` the runtime polls for Arrow batches: where the
    columnar path is on, :meth:`poll_batch` returns what the iterator yields (batches,
    and records between them) and :attr:`~IteratorSourceTask.columnar` is true; the
    per-record path calls :meth:`~IteratorSourceTask.poll` as before.

    No ``commit_record``: the runtime takes the columnar path only for tasks that need
    no per-record callback. The offset manager learns which entries were handed over
    from the polls instead (:meth:`~omconnect.source_base.OffsetManager.handed_over`),
    and evicts them once the storage holds their state, as before.
    """

    commit_record = SourceTask.commit_record

    def poll(self) -> list[SourceRecord] | None:
        """A batch of records (the per-record path; see the module docstring)."""
        return self._hand_over(super().poll())

    def poll_batch(self) -> list[Any] | None:
        """The iterator's batches and records, in order, up to ``max.poll.records`` rows
        (or ``None``); see the module docstring for the rules.
        """
        self._set_columnar()
        return self._hand_over(self._poll_items())

    def _hand_over(self, items: list[Any] | None) -> list[Any] | None:
        """``items`` (or ``None`` for none), once the offset manager knows the source
        partitions they carry.
        """
        if not items:
            return None
        handed_over = self.offset_manager.handed_over
        last = None
        for item in items:
            if item.source_partition is not last:
                last = item.source_partition
                handed_over(last)
        return items
