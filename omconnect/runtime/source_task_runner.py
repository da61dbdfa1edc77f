"""The source path: poll → transforms → converters → send, and offsets only when safe.

One thread per task runs the loop. Acknowledgements arrive on the transport's threads; the
callbacks only put a note in the runner's inbox (a ``SimpleQueue``). The task thread
drains the inbox between polls: it marks submissions complete, calls ``commit_record`` on
the task, retries or routes failed sends, and every ``offset.flush.interval.ms`` writes
the offsets that became safe (see :mod:`omconnect.runtime.submitted_records`) to the
offset store, then calls the task's ``commit()``. So the task is only ever called from its
own thread, and the bookkeeping needs no per-record lock.

Back-pressure: when ``source.max.in.flight.records`` records are unacknowledged, the loop
waits for acknowledgements instead of polling.

A task that returns Arrow batches (``poll_batch``, see
:mod:`omconnect.connector.batch_tasks`) takes the columnar path when
:class:`~omconnect.runtime.columnar_stages.SourceColumns` can make the batch's wire
columns: one ``send_batch`` per batch, one submission whose single run carries the batch's
source offset, one acknowledgement; no object per record. Anything else about the batch
(no column form, a send that raises or fails) hands it to the per-record path above,
which converts, retries and routes exactly as for a per-record task.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import Future
from functools import partial
from operator import attrgetter
from typing import Any

from omconnect.connector.batch_tasks import batches_of, columnar_available, polls_batches
from omconnect.connector.context import OffsetStorageReader, SourceTaskContext
from omconnect.connector.task import SourceTask
from omconnect.converters.task_converters import build_converters
from omconnect.errors import (
    ConnectError,
    IllegalStateError,
    MessageTooLargeError,
    RetriableError,
    SendError,
)
from omconnect.records import ErrantSourceRecord, RecordMetadata, SourceRecord
from omconnect.runtime.dead_letter_queue import DeadLetterQueue
from omconnect.runtime.record_conversion import SourceRecordSerializer
from omconnect.runtime.retry_with_tolerance import (
    Failure,
    RetryWithTolerance,
    Stage,
    Tolerated,
    class_name,
)
from omconnect.runtime.source_offsets import KvOffsetStorageReader
from omconnect.runtime.submitted_records import Submission, SubmittedRecords
from omconnect.runtime.task_runner import TaskRunner, TaskSetup
from omconnect.runtime.transform_setup import TransformRunner
from omconnect.transport.messages import Message
from omconnect.transport.spi import Producer

__all__ = ["SourceTaskRunner"]

_log = logging.getLogger(__name__)

_TOPIC = attrgetter("topic")
_SENT = 0
_DEAD_LETTERED = 1
_WAKE = 2
_SENT_COLUMNS = 3
_IDLE_WAIT_S = 1.0


class _SourceContext(SourceTaskContext):
    def __init__(self, configs: Mapping[str, Any], reader: OffsetStorageReader) -> None:
        self._configs = configs
        self._reader = reader

    @property
    def offset_storage_reader(self) -> OffsetStorageReader:
        return self._reader

    @property
    def configs(self) -> Mapping[str, Any]:
        return self._configs


class _Send:
    """One ``producer.send`` of (part of) a submission, with where each message came from."""

    __slots__ = ("attempt", "first_failure", "messages", "origins", "submission")

    def __init__(self, submission: Submission, messages: list[Message],
                 origins: Sequence[SourceRecord]) -> None:
        self.submission = submission
        self.messages = messages
        self.origins = origins
        self.attempt = 0
        self.first_failure: float | None = None


class SourceTaskRunner(TaskRunner):
    """Runs a :class:`~omconnect.connector.SourceTask`.

    Args:
        setup: What the runner needs from the worker.
        task: The task instance.
        paused: Start paused.

    """

    kind = "source"

    def __init__(self, setup: TaskSetup, task: SourceTask, *, paused: bool = False) -> None:
        super().__init__(setup, task, paused=paused)
        self.source_task = task
        self._inbox: queue.SimpleQueue[tuple[Any, ...]] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._submitted = SubmittedRecords()
        self._pending_offsets: dict[Any, tuple[Mapping[str, Any], Mapping[str, Any]]] = {}
        self._pending_covered = 0
        self._resends: list[tuple[float, _Send]] = []
        self._producer: Producer | None = None
        self._transforms: TransformRunner | None = None
        worker = setup.worker
        self._flush_interval_s = worker["offset.flush.interval.ms"] / 1000.0
        self._flush_timeout_s = worker["offset.flush.timeout.ms"] / 1000.0
        self._max_in_flight = worker["source.max.in.flight.records"]
        self._calls_commit_record = type(task).commit_record is not SourceTask.commit_record
        self._outstanding = 0  # sends and dead-letter writes without a reply yet
        # Columnar: the task returns Arrow batches and needs no per-record callback.
        self._polls_batches = polls_batches(task) and not self._calls_commit_record and \
            bool(worker["columnar.enable"]) and columnar_available()
        self._columns: Any = None  # a SourceColumns when _polls_batches

    # -- setup ------------------------------------------------------------------------

    def _open(self) -> None:
        setup = self.setup
        settings = setup.settings
        producer_options = setup.worker.prefixed("producer.")
        self._producer = setup.transport.producer(producer_options or None)
        self._serializer = SourceRecordSerializer(
            build_converters(settings.values, setup.worker.values))
        dead_letters = None
        if settings.errors.dlq_topic:
            dead_letters = DeadLetterQueue(
                settings.errors.dlq_topic, producer=self._require_producer,
                topics=setup.topics, partitions=settings.errors.dlq_partitions,
                context_headers=settings.errors.dlq_context_headers,
                serialize=self._serializer.serialize_one)
        self._errors = RetryWithTolerance(
            settings.errors, connector=self.id.connector, task=self.id.task,
            metrics=self.metrics, stopping=self.stopping, dead_letter_queue=dead_letters)
        self._transforms = TransformRunner.from_config(settings.values, self._errors)
        if self._polls_batches:
            from omconnect.runtime.columnar_stages import SourceColumns

            self._columns = SourceColumns(self._serializer.converters,
                                          self._transforms.chain)
        self._producer_class = class_name(self._producer)
        assert setup.offsets is not None
        reader = KvOffsetStorageReader(setup.offsets)
        self.source_task.initialize(_SourceContext(setup.task_config, reader))
        self.source_task.start(setup.task_config)

    def _require_producer(self) -> Producer:
        if self._producer is None:
            raise IllegalStateError("the task's producer is closed")
        return self._producer

    # -- the loop -----------------------------------------------------------------------

    def _execute(self) -> None:
        next_flush = time.monotonic() + self._flush_interval_s
        metrics = self.metrics
        while not self.stopping.is_set():
            metrics.loops += 1
            now = time.monotonic()
            if now >= next_flush:
                self._commit_offsets()
                next_flush = time.monotonic() + self._flush_interval_s
            self._drain(0.0)
            if self._resends:
                self._resend_due()
            if self._paused or self._resends or \
                    self._submitted.in_flight >= self._max_in_flight:
                wait = min(max(0.0, next_flush - time.monotonic()), _IDLE_WAIT_S)
                if self._resends:
                    wait = min(wait, max(0.0, self._resends[0][0] - time.monotonic()))
                self._drain(wait)
                continue
            if self._polls_batches:
                polled = batches_of(self._poll())
                if self.stopping.is_set():
                    break
                self._process_polled(polled)
                continue
            records = self._poll()
            if self.stopping.is_set():
                break  # not sent: the offsets stay uncommitted, the records come again
            if records:
                self._process(records)

    def _poll(self) -> Any:
        started = time.monotonic()
        attempt = 0
        task: Any = self.source_task
        call = task.poll_batch if self._polls_batches else task.poll
        while True:
            try:
                return call()
            except RetriableError as exc:
                if self.stopping.is_set():
                    return None
                attempt += 1
                deadline = self.setup.settings.errors.retry_deadline(
                    started, zero_means_forever=True)
                _log.warning("task %s: poll failed (retriable), retry %d: %s", self.id,
                             attempt, exc)
                if not self._errors.wait_to_retry(attempt, deadline):
                    raise

    def _process(self, records: Sequence[SourceRecord]) -> None:
        if not isinstance(records[0], SourceRecord):
            raise IllegalStateError(
                f"{class_name(self.task)}.poll() returned {type(records[0]).__name__} "
                "objects; it must return SourceRecord objects", connector=self.id.connector,
                task=self.id.task)
        self.metrics.record_batch(len(records))
        polled = records
        errant: list[tuple[SourceRecord, Tolerated | None]] = []
        if ErrantSourceRecord in map(type, records):
            records, errant = self._errant(records)
        transforms = self._transforms
        assert transforms is not None
        transformed: Sequence[Any] = records if transforms.empty or not records \
            else transforms.apply(records)
        if transformed is records or all(type(r) is not Tolerated and r is not None
                                         for r in transformed):
            to_convert: Sequence[SourceRecord] = transformed
            origins: Sequence[SourceRecord] = records
            skipped: list[tuple[SourceRecord, Tolerated | None]] = []
        else:
            to_convert, origins, skipped = _split(records, transformed)
            self.metrics.filtered += sum(1 for _, t in skipped if t is None)
        skipped.extend(errant)
        messages, origins = self._convert(to_convert, origins, skipped)
        with self._lock:
            if self._abandoned:
                return
            self._submit(polled, messages, origins, skipped)

    def _process_polled(self, polled: Sequence[Any]) -> None:
        """What ``poll_batch`` returned, in order: each batch as columns, each run of
        records (rows the task could not give as columns) on the per-record path.
        """
        records: list[SourceRecord] = []
        for item in polled:
            if isinstance(item, SourceRecord):
                records.append(item)
                continue
            if records:
                self._process(records)
                records = []
            self._process_batch(item)
        if records:
            self._process(records)

    def _process_batch(self, batch: Any) -> None:
        """Send a :class:`~omconnect.columnar.SourceBatch` as columns (one send per topic
        its transforms route rows to), or hand its rows to the per-record path.
        """
        from omconnect.columnar.records import source_batch_to_records

        rows = batch.num_rows
        encoded = self._columns.encode(batch) if rows else None
        if rows and encoded is None:
            self.metrics.columnar_fallback += rows
            self._process(source_batch_to_records(batch))
            return
        self.metrics.record_batch(rows)
        with self._lock:
            if self._abandoned:
                return
            try:
                submission = self._submitted.submit_batch(rows, batch.source_partition,
                                                          batch.source_offset)
            except TypeError as exc:
                raise ConnectError(
                    f"a source batch's source_partition is not a dict of str to JSON "
                    f"scalars ({exc}); fix {class_name(self.task)}.poll_batch()",
                    connector=self.id.connector, task=self.id.task) from exc
            parts = encoded.parts if encoded is not None else []
            if encoded is not None and encoded.dropped:
                self.metrics.filtered += encoded.dropped
                self.metrics.columnar += encoded.dropped
            if not parts:  # nothing to send (all filtered, or an offset that moved alone)
                self._submitted.completed(submission)
                return
            submission.waiting = len(parts)
            for topic, columns in parts:
                self._send_columns(submission, batch, topic, columns)
            self.metrics.in_flight = self._submitted.in_flight

    def _send_columns(self, submission: Submission, batch: Any, topic: str,
                      columns: Any) -> None:
        assert self._producer is not None
        self.setup.topics.ensure({topic}, self.setup.settings.topic_partitions)
        try:
            future = self._producer.send_batch(topic, columns)
        except Exception as exc:  # too large, retriable, closed: the per-record send decides
            _log.debug("task %s: send_batch raised (%s); sending the batch per record",
                       self.id, exc)
            self._send(self._per_record(submission, batch, topic, columns))
            return
        rows = columns.num_rows
        self.metrics.sent += rows
        self.metrics.columnar += rows
        if self.setup.active_topics is not None:
            self.setup.active_topics.saw((topic,))
        self._outstanding += 1
        future.add_done_callback(
            lambda f: self._inbox.put((_SENT_COLUMNS, submission, batch, (topic, columns), f)))

    def _per_record(self, submission: Submission, batch: Any, topic: str,
                    columns: Any) -> _Send:
        """The per-record send of a columnar batch's sent rows (same submission): the
        messages of the wire columns, each with a record standing for its origin.
        """
        from omconnect.columnar.records import source_batch_to_records
        from omconnect.columnar.source_batch import SourceBatch
        from omconnect.transport.message_batches import batch_to_messages

        self.metrics.columnar_fallback += columns.num_rows
        origins = source_batch_to_records(SourceBatch(
            topic=topic, records=columns, source_partition=batch.source_partition,
            source_offset=batch.source_offset))
        return _Send(submission, batch_to_messages(topic, columns), origins)

    def _sent_columns(self, submission: Submission, batch: Any, part: Any,
                      future: Future[Any], handle_failures: bool) -> None:
        topic, columns = part
        if future.exception() is None:
            self.metrics.acknowledged += columns.num_rows
            self._done_waiting(submission)
            return
        self.metrics.columnar -= columns.num_rows
        self.metrics.sent -= columns.num_rows  # counted again below, per message
        send = self._per_record(submission, batch, topic, columns)
        self.metrics.sent += len(send.messages)
        self._sent(send, future, handle_failures)

    def _errant(self, records: Sequence[SourceRecord]
                ) -> tuple[list[SourceRecord], list[tuple[SourceRecord, Tolerated | None]]]:
        """Split off the records the task could not read (:class:`ErrantSourceRecord`):
        each is handled per ``errors.tolerance`` at stage ``TASK_POLL`` and never sent.

        Returns:
            The other records, in order; each errant record with how it was tolerated.

        Raises:
            ToleranceExceededError: ``errors.tolerance`` is ``none``.

        """
        kept: list[SourceRecord] = []
        errant: list[tuple[SourceRecord, Tolerated | None]] = []
        task_class = class_name(self.task)
        for record in records:
            if type(record) is ErrantSourceRecord:
                errant.append((record, self._errors.failed(Failure(
                    stage=Stage.TASK_POLL, executing_class=task_class, error=record.error,
                    source_record=record, connector=self.id.connector, task=self.id.task))))
            else:
                kept.append(record)
        return kept, errant

    def _convert(
        self,
        records: Sequence[SourceRecord],
        origins: Sequence[SourceRecord],
        skipped: list[tuple[SourceRecord, Tolerated | None]],
    ) -> tuple[list[Message], Sequence[SourceRecord]]:
        """Messages for ``records`` and the original record of each; a record tolerated
        here moves to ``skipped``.
        """
        if not records:
            return [], origins
        try:
            messages = self._serializer.serialize(records)
        except Exception:
            converted = self._serializer.serialize_each(records, self._errors)
            messages = []
            kept = []
            for origin, item in zip(origins, converted, strict=True):
                if isinstance(item, Tolerated):
                    skipped.append((origin, item))
                else:
                    messages.append(item)
                    kept.append(origin)
            origins = kept
        return messages, origins

    def _submit(
        self,
        records: Sequence[SourceRecord],
        messages: list[Message],
        origins: Sequence[SourceRecord],
        skipped: list[tuple[SourceRecord, Tolerated | None]],
    ) -> None:
        try:
            submission = self._submitted.submit(records)
        except TypeError as exc:
            raise ConnectError(
                f"a source record's source_partition is not a dict of str to JSON scalars "
                f"({exc}); fix {class_name(self.task)}.poll()", connector=self.id.connector,
                task=self.id.task) from exc
        waiting = 0
        for origin, tolerated in skipped:
            future = tolerated.future if tolerated is not None else None
            if future is None:
                self._commit_record(origin, None)
            else:
                waiting += 1
                self._outstanding += 1
                future.add_done_callback(partial(self._note_dead_letter, submission, origin))
        if messages:
            waiting += 1
            submission.waiting = waiting
            self._send(_Send(submission, messages, origins))
        else:
            submission.waiting = waiting
        if waiting == 0:
            self._submitted.completed(submission)
        self.metrics.in_flight = self._submitted.in_flight

    def _send(self, send: _Send) -> None:
        assert self._producer is not None
        topics = set(map(_TOPIC, send.messages))
        self.setup.topics.ensure(topics, self.setup.settings.topic_partitions)
        started = time.monotonic()
        attempt = 0
        while True:
            try:
                future = self._producer.send(send.messages)
                break
            except MessageTooLargeError as exc:
                # Nothing of the batch was stored: route the messages over the limit per
                # errors.tolerance and send the others.
                kept = self._too_large(send, exc)
                if kept is None:
                    return
                send = kept
            except RetriableError as exc:
                attempt += 1
                deadline = self.setup.settings.errors.send_deadline(started)
                if self.stopping.is_set() or not self._errors.wait_to_retry(attempt, deadline):
                    send.first_failure = send.first_failure or started
                    self._failed_send(send, exc, list(range(len(send.messages))))
                    return
            except Exception as exc:
                send.first_failure = send.first_failure or started
                self._failed_send(send, exc, list(range(len(send.messages))))
                return
        self.metrics.sent += len(send.messages)
        if self.setup.active_topics is not None:
            self.setup.active_topics.saw(topics)
        self._outstanding += 1
        future.add_done_callback(lambda f: self._inbox.put((_SENT, send, f)))

    # -- acknowledgements ---------------------------------------------------------------

    def _drain(self, wait: float, *, handle_failures: bool = True) -> None:
        """Process inbox notes; wait up to ``wait`` seconds for the first one."""
        inbox = self._inbox
        try:
            note = inbox.get(timeout=wait) if wait > 0 else inbox.get_nowait()
        except queue.Empty:
            return
        with self._lock:
            if self._abandoned and handle_failures:
                return
            while True:
                kind = note[0]
                if kind == _SENT:
                    self._outstanding -= 1
                    self._sent(note[1], note[2], handle_failures)
                elif kind == _DEAD_LETTERED:
                    self._outstanding -= 1
                    self._dead_lettered(note[1], note[2], note[3], handle_failures)
                elif kind == _SENT_COLUMNS:
                    self._outstanding -= 1
                    self._sent_columns(note[1], note[2], note[3], note[4], handle_failures)
                try:
                    note = inbox.get_nowait()
                except queue.Empty:
                    break
            self.metrics.in_flight = self._submitted.in_flight

    def _sent(self, send: _Send, future: Future[list[RecordMetadata]],
              handle_failures: bool) -> None:
        error = future.exception()
        if error is None:
            metadata = future.result()
            self.metrics.acknowledged += len(metadata)
            if self._calls_commit_record:
                for record, meta in zip(send.origins, metadata, strict=False):
                    self._commit_record(record, meta)
            self._done_waiting(send.submission)
            return
        outcomes = error.outcomes if isinstance(error, SendError) else None
        failed = []
        acked = 0
        for i, record in enumerate(send.origins):
            outcome = outcomes[i] if outcomes is not None and i < len(outcomes) else error
            if isinstance(outcome, BaseException):
                failed.append(i)
            else:
                acked += 1
                if self._calls_commit_record:
                    self._commit_record(record, outcome if isinstance(outcome, RecordMetadata)
                                        else None)
        self.metrics.acknowledged += acked
        if not handle_failures:
            return  # stopping: the submission stays incomplete, nothing past it commits
        first = next((outcomes[i] for i in failed if outcomes is not None
                      and i < len(outcomes) and isinstance(outcomes[i], BaseException)), error)
        assert isinstance(first, BaseException)
        self._failed_send(send, first, failed, outcomes)

    def _failed_send(self, send: _Send, error: BaseException, failed: list[int],
                     outcomes: list[Any] | None = None) -> None:
        """Retry the ``failed`` messages of ``send``, or tolerate / fail them."""
        now = time.monotonic()
        if send.first_failure is None:
            send.first_failure = now
        retriable = all(isinstance(outcomes[i] if outcomes is not None and i < len(outcomes)
                                   else error, RetriableError) for i in failed)
        deadline = self.setup.settings.errors.send_deadline(send.first_failure)
        retry = _Send(send.submission, [send.messages[i] for i in failed],
                      [send.origins[i] for i in failed])
        retry.first_failure = send.first_failure
        retry.attempt = send.attempt + 1
        delay = self.setup.settings.errors.backoff(retry.attempt)
        if retriable and not self.stopping.is_set() and now + delay <= deadline:
            _log.warning("task %s: %d message(s) not acknowledged (%s); resending in %.1f s",
                         self.id, len(failed), error, delay)
            self.metrics.retries += 1
            self._resends.append((now + delay, retry))
            self._resends.sort(key=lambda item: item[0])
            return
        self._errors_for_send(retry, error, failed, outcomes)

    def _too_large(self, send: _Send, error: MessageTooLargeError) -> _Send | None:
        """Tolerate (or fail on) the messages of ``send`` over the transport's limit;
        the rest as a new send, or ``None`` when nothing is left to send.
        """
        limit = error.limit
        large = [i for i, m in enumerate(send.messages) if m.size > limit]
        if not large:  # the transport counts differently: the whole batch failed
            send.first_failure = send.first_failure or time.monotonic()
            self._failed_send(send, error, list(range(len(send.messages))))
            return None
        waiting = 0
        for i in large:
            message, record = send.messages[i], send.origins[i]
            tolerated = self._errors.failed(Failure(
                stage=Stage.PRODUCE, executing_class=self._producer_class,
                error=MessageTooLargeError(message.size, limit, topic=message.topic),
                message=message, source_record=record, connector=self.id.connector,
                task=self.id.task))
            if tolerated.future is None:
                self._commit_record(record, None)
            else:
                waiting += 1
                self._outstanding += 1
                tolerated.future.add_done_callback(
                    partial(self._note_dead_letter, send.submission, record))
        send.submission.waiting += waiting
        drop = set(large)
        if len(drop) == len(send.messages):
            self._done_waiting(send.submission)
            return None
        kept = _Send(send.submission, [m for i, m in enumerate(send.messages) if i not in drop],
                     [o for i, o in enumerate(send.origins) if i not in drop])
        kept.first_failure, kept.attempt = send.first_failure, send.attempt
        return kept

    def _errors_for_send(self, send: _Send, error: BaseException, failed: list[int],
                         outcomes: list[Any] | None) -> None:
        waiting = 0
        for index, (message, record) in enumerate(zip(send.messages, send.origins,
                                                      strict=True)):
            original = failed[index]
            cause = outcomes[original] if outcomes is not None and original < len(outcomes) \
                else error
            tolerated = self._errors.failed(Failure(
                stage=Stage.PRODUCE, executing_class=self._producer_class,
                error=cause if isinstance(cause, BaseException) else error,
                message=message, source_record=record, connector=self.id.connector,
                task=self.id.task))
            if tolerated.future is None:
                self._commit_record(record, None)
            else:
                waiting += 1
                self._outstanding += 1
                tolerated.future.add_done_callback(
                    partial(self._note_dead_letter, send.submission, record))
        send.submission.waiting += waiting
        self._done_waiting(send.submission)

    def _note_dead_letter(self, submission: Submission, record: SourceRecord,
                          future: Future[None]) -> None:
        self._inbox.put((_DEAD_LETTERED, submission, record, future))

    def _resend_due(self) -> None:
        now = time.monotonic()
        while self._resends and self._resends[0][0] <= now:
            _, send = self._resends.pop(0)
            with self._lock:
                self._send(send)

    def _dead_lettered(self, submission: Submission, record: SourceRecord,
                       future: Future[None], handle_failures: bool = True) -> None:
        error = future.exception()
        if error is not None:
            if not handle_failures:
                return
            raise ConnectError(
                f"could not write a failed record to the dead-letter topic "
                f"{self.setup.settings.errors.dlq_topic!r}: {error}; its offset is not "
                "committed", connector=self.id.connector, task=self.id.task) from error
        self._commit_record(record, None)
        self._done_waiting(submission)

    def _done_waiting(self, submission: Submission) -> None:
        submission.waiting -= 1
        if submission.waiting == 0:
            self._submitted.completed(submission)

    def _commit_record(self, record: SourceRecord, metadata: RecordMetadata | None) -> None:
        if not self._calls_commit_record or self._abandoned:
            return
        try:
            self.source_task.commit_record(record, metadata)
        except Exception:
            _log.exception("task %s: commit_record() raised", self.id)

    # -- offsets -----------------------------------------------------------------------

    def _commit_offsets(self, *, call_task: bool = True) -> bool:
        """Write the offsets that became safe; then call the task's ``commit()``."""
        with self._lock:
            if self._abandoned:
                return False
            written = self._write_offsets()
        if written and call_task:
            try:
                self.source_task.commit()
            except Exception:
                _log.exception("task %s: commit() raised", self.id)
        return written

    def _write_offsets(self) -> bool:
        safe, covered = self._submitted.committable()
        self._pending_offsets.update(safe)
        self._pending_covered += covered
        if not self._pending_offsets:
            return False
        offsets = self.setup.offsets
        assert offsets is not None
        try:
            offsets.write((p, o) for p, o in self._pending_offsets.values() if o)
        except Exception:
            self.metrics.offset_commit_failures += 1
            _log.exception("task %s: writing %d source offset(s) failed; retrying at the "
                           "next flush", self.id, len(self._pending_offsets))
            return False
        self.metrics.record_offset_commit(self._pending_covered)
        self._pending_offsets.clear()
        self._pending_covered = 0
        return True

    # -- stop -------------------------------------------------------------------------

    def _wake(self) -> None:
        self._inbox.put((_WAKE,))

    def _close(self, *, failed: bool) -> None:
        try:
            if self._producer is not None:
                limit = min(self._flush_timeout_s, self._remaining_stop_time())
                deadline = time.monotonic() + limit
                while self._outstanding > 0:
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        break
                    self._drain(remaining, handle_failures=False)
                self._drain(0.0, handle_failures=False)
                if self._submitted.in_flight:
                    _log.info("task %s: %d record(s) not acknowledged at stop; their offsets "
                              "are not committed", self.id, self._submitted.in_flight)
                self._commit_offsets(call_task=not failed)
        finally:
            if self._transforms is not None:
                self._transforms.close()
            if self._producer is not None:
                producer, self._producer = self._producer, None
                try:
                    producer.close(timeout=max(0.0, self._remaining_stop_time()))
                except Exception:
                    _log.exception("task %s: closing the producer failed", self.id)

    def _abandon(self) -> None:
        if not self._lock.acquire(timeout=1.0):
            _log.warning("task %s: could not commit on abandon (busy)", self.id)
            return
        try:
            inbox = self._inbox
            while True:
                try:
                    note = inbox.get_nowait()
                except queue.Empty:
                    break
                if note[0] == _SENT:
                    self._sent(note[1], note[2], False)
                elif note[0] == _DEAD_LETTERED:
                    self._dead_lettered(note[1], note[2], note[3], False)
                elif note[0] == _SENT_COLUMNS:
                    self._sent_columns(note[1], note[2], note[3], note[4], False)
            self._write_offsets()
        finally:
            self._lock.release()


def _split(
    records: Sequence[SourceRecord], transformed: Sequence[Any]
) -> tuple[list[SourceRecord], list[SourceRecord], list[tuple[SourceRecord, Tolerated | None]]]:
    """(records to convert, their originals, (original, Tolerated-or-None) of the others)."""
    to_convert: list[SourceRecord] = []
    origins: list[SourceRecord] = []
    skipped: list[tuple[SourceRecord, Tolerated | None]] = []
    for original, result in zip(records, transformed, strict=True):
        if result is None:
            skipped.append((original, None))
        elif isinstance(result, Tolerated):
            skipped.append((original, result))
        else:
            to_convert.append(result)
            origins.append(original)
    return to_convert, origins, skipped
