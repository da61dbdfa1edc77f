"""The sink path: consume → converters → transforms → put, then commit what is safe.

One thread per task owns the consumer (group ``connect-<connector>``) and the task. Each
loop reads at most ``consumer.max.poll.records`` messages, converts and transforms them as a
batch and hands them to ``put``: one batch in memory at a time. Every
``offset.flush.interval.ms`` (or on ``request_commit``) the runner waits for dead-letter
writes, asks the task's ``pre_commit`` which of the offsets it was given are safe, and
commits those to the group, never beyond what was put.

A :class:`~omconnect.errors.RetriableError` from ``put`` keeps the batch: every assigned
partition is paused, the consumer keeps polling (so it stays in its group), and the same
batch is put again after a backoff; nothing is consumed twice.

A retriable error from the consumer's ``poll`` or ``commit`` (a broker restarting, a lost
connection) is retried with backoff, the consumer keeping its positions, for
``delivery.timeout.ms`` (see :mod:`omconnect.runtime.transport_retry`); then the task
fails naming the cause.

A task that takes Arrow batches (``put_batch``, see
:mod:`omconnect.connector.batch_tasks`) is fed from ``Consumer.poll_batch`` when
:class:`~omconnect.runtime.columnar_stages.SinkColumns` can read keys and values as
columns (converters with a column form, transforms with one): one batch from poll to put,
no object per record. A batch it cannot read goes the per-record way (each failing record
tolerated or reported as above) and reaches ``put_batch`` rebuilt from the records.

The sink subscribes only to topics that exist (:mod:`omconnect.runtime.sink_topics`):
sinks never create topics, they wait for them.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from operator import attrgetter
from typing import Any

from omconnect.connector.batch_tasks import columnar_available, puts_batches
from omconnect.connector.context import ErrantRecordReporter, SinkTaskContext
from omconnect.connector.task import SinkTask
from omconnect.converters.task_converters import build_converters
from omconnect.errors import (
    ConnectError,
    RetriableError,
    UnsupportedOperationError,
)
from omconnect.records import SinkRecord, TopicPartition
from omconnect.runtime.dead_letter_queue import DeadLetterQueue
from omconnect.runtime.record_conversion import MessageDeserializer, SourceRecordSerializer
from omconnect.runtime.retry_with_tolerance import (
    Failure,
    RetryWithTolerance,
    Stage,
    Tolerated,
    class_name,
)
from omconnect.runtime.sink_topics import SinkTopics
from omconnect.runtime.task_runner import TaskRunner, TaskSetup
from omconnect.runtime.transform_setup import TransformRunner
from omconnect.runtime.transport_retry import TransportRetry
from omconnect.transport.messages import Message
from omconnect.transport.spi import Consumer, Producer, RebalanceListener

__all__ = ["SinkTaskRunner"]

_log = logging.getLogger(__name__)

_MAX_POLL_WAIT_S = 1.0
_LAG_REFRESH_S = 1.0  # the lag metric's refresh period while polls come back empty
_MISSING_TOPICS_FIRST_S = 0.2  # first look again for topics that do not exist yet ...
_MISSING_TOPICS_MAX_S = 2.0  # ... doubling up to this


class _Context(SinkTaskContext):
    """The sink task's view of the runner; calls are applied on the task thread."""

    def __init__(self, runner: SinkTaskRunner) -> None:
        self._runner = runner

    @property
    def configs(self) -> Mapping[str, Any]:
        return self._runner.setup.task_config

    def offset(self, offsets: Mapping[TopicPartition, int]) -> None:
        self._runner._seeks.update(offsets)

    def assignment(self) -> frozenset[TopicPartition]:
        return self._runner._assignment

    def pause(self, *partitions: TopicPartition) -> None:
        self._runner._task_paused.update(partitions)
        self._runner._pause_dirty = True

    def resume(self, *partitions: TopicPartition) -> None:
        self._runner._task_paused.difference_update(partitions)
        self._runner._pause_dirty = True

    def request_commit(self) -> None:
        self._runner._commit_requested = True

    @property
    def errant_record_reporter(self) -> ErrantRecordReporter | None:
        return self._runner._reporter


class _Reporter(ErrantRecordReporter):
    def __init__(self, runner: SinkTaskRunner) -> None:
        self._runner = runner

    def report(self, record: SinkRecord, error: BaseException) -> Future[None]:
        return self._runner._report(record, error)


class _Rebalance(RebalanceListener):
    def __init__(self, runner: SinkTaskRunner) -> None:
        self._runner = runner

    def on_partitions_revoked(self, partitions: frozenset[TopicPartition]) -> None:
        self._runner._revoked(partitions)

    def on_partitions_assigned(self, partitions: frozenset[TopicPartition]) -> None:
        self._runner._assigned(partitions)


class SinkTaskRunner(TaskRunner):
    """Runs a :class:`~omconnect.connector.SinkTask`.

    Args:
        setup: What the runner needs from the worker.
        task: The task instance.
        paused: Start paused.

    """

    STOP_FROM_CALLER = False  # SinkTask.stop() comes last, on the task thread

    kind = "sink"

    def __init__(self, setup: TaskSetup, task: SinkTask, *, paused: bool = False) -> None:
        super().__init__(setup, task, paused=paused)
        self.sink_task = task
        self.group = setup.settings.group
        self._consumer: Consumer | None = None
        self._producer: Producer | None = None
        self._transforms: TransformRunner | None = None
        self._assignment: frozenset[TopicPartition] = frozenset()
        self._offsets_put: dict[TopicPartition, int] = {}
        self._committed: dict[TopicPartition, int] = {}
        self._dirty = False
        self._task_paused: set[TopicPartition] = set()
        self._consumer_paused: set[TopicPartition] = set()
        self._pause_dirty = True
        self._can_pause = setup.transport.capabilities.pause
        self._seeks: dict[TopicPartition, int] = {}
        self._commit_requested = False
        self._dead_letters: list[Future[None]] = []
        self._batch: list[SinkRecord] | None = None  # a batch waiting to be put again
        self._batch_offsets: dict[tuple[str, int], int] = {}
        self._batch_attempt = 0
        self._batch_started = 0.0
        self._batch_due = 0.0
        self._messages: Sequence[Message] = ()
        self._tp_cache: dict[tuple[str, int], TopicPartition] = {}
        self._reporter: ErrantRecordReporter | None = None
        self._topics: list[str] = []
        self._missing: list[str] = []
        self._missing_wait = _MISSING_TOPICS_FIRST_S
        self._warned_old_messages: set[str] = set()
        self._lag_known = True
        self._lag_due = 0.0  # when the lag metric is next refreshed (monotonic seconds)
        self._closing = False
        self._closing_commit = False  # the final commit of close(): failures are only logged
        worker = setup.worker
        self._flush_interval_s = worker["offset.flush.interval.ms"] / 1000.0
        self._flush_timeout_s = worker["offset.flush.timeout.ms"] / 1000.0
        self._regex_refresh_s = worker["topics.regex.refresh.interval.ms"] / 1000.0
        self._max_records = setup.settings.max_poll_records
        self._puts_batches = puts_batches(task)
        self._columns: Any = None  # a SinkColumns when the columnar path is on

    # -- setup ------------------------------------------------------------------------

    def _open(self) -> None:
        setup = self.setup
        settings = setup.settings
        converters = build_converters(settings.values, setup.worker.values)
        self._deserializer = MessageDeserializer(converters)
        self._serializer = SourceRecordSerializer(converters)
        dead_letters = None
        if settings.errors.dlq_topic:
            dead_letters = DeadLetterQueue(
                settings.errors.dlq_topic, producer=self._dlq_producer, topics=setup.topics,
                partitions=settings.errors.dlq_partitions,
                context_headers=settings.errors.dlq_context_headers)
        self._errors = RetryWithTolerance(
            settings.errors, connector=self.id.connector, task=self.id.task,
            metrics=self.metrics, stopping=self.stopping, dead_letter_queue=dead_letters)
        self._transforms = TransformRunner.from_config(settings.values, self._errors)
        if self._puts_batches and setup.worker["columnar.enable"] and columnar_available():
            from omconnect.runtime.columnar_stages import SinkColumns

            columns = SinkColumns(converters, self._transforms.chain)
            self._columns = columns if columns.enabled else None
        self._reporter = _Reporter(self)
        where = str(self.id)
        self._poll_retry = TransportRetry("poll", settings.errors, where=where,
                                          connector=self.id.connector, task=self.id.task)
        self._commit_retry = TransportRetry("commit", settings.errors, where=where,
                                            connector=self.id.connector, task=self.id.task)
        self._sink_topics = SinkTopics(settings.topics, settings.topics_regex,
                                       settings.errors.dlq_topic, setup.transport.admin)
        options = setup.worker.prefixed("consumer.")
        options.pop("max.poll.records", None)
        self._consumer = setup.transport.consumer(self.group, options=options or None)
        self.sink_task.initialize(_Context(self))
        self.sink_task.start(setup.task_config)
        self._subscribe()

    def _dlq_producer(self) -> Producer:
        if self._producer is None:
            options = self.setup.worker.prefixed("producer.")
            self._producer = self.setup.transport.producer(options or None)
        return self._producer

    def _subscribe(self) -> None:
        """Subscribe to the topics that exist now (see :mod:`~omconnect.runtime.sink_topics`);
        remember the named ones still missing.
        """
        found = self._sink_topics.lookup()
        if found is None:  # the transport could not say now; ask again later
            self._missing = self._missing or list(self.setup.settings.topics)
            return
        if found.missing and found.missing != self._missing:
            _log.info("task %s: waiting for topics %s to be created (sink connectors do not "
                      "create topics; a source connector or an admin does)", self.id,
                      found.missing)
        elif self._missing and not found.missing:
            _log.info("task %s: every topic to read exists now", self.id)
        self._missing = found.missing
        topics = found.subscribe
        if topics != self._topics and topics:
            assert self._consumer is not None
            self._consumer.subscribe(topics, _Rebalance(self))
            _log.info("task %s subscribed to %s", self.id, topics)
            self._warn_if_old_messages_lost(topics)
        self._topics = topics

    def _warn_if_old_messages_lost(self, topics: Sequence[str]) -> None:
        """Say, once per topic, when the transport cannot deliver to this group what was
        sent before the group first subscribed.
        """
        transport = self.setup.transport
        if transport.capabilities.new_subscriber_receives_old_messages:
            return
        for topic in topics:
            if topic in self._warned_old_messages:
                continue
            self._warned_old_messages.add(topic)
            _log.warning(
                "sink connector %r reads topic %r on transport %r, which does not keep "
                "messages for a group that did not exist yet "
                "(new_subscriber_receives_old_messages is false): what was sent to %r "
                "before group %r first subscribed is not delivered to it; see the "
                "transport's page in docs/transports/", self.id.connector, topic,
                transport.name, topic, self.group)

    # -- the loop -----------------------------------------------------------------------

    def _execute(self) -> None:
        consumer = self._consumer
        assert consumer is not None
        now = time.monotonic()
        next_commit = now + self._flush_interval_s
        next_refresh = now + self._regex_refresh_s
        regex = self.setup.settings.topics_regex is not None
        next_missing = now + self._missing_wait
        reading = False  # whether the last poll returned records
        metrics = self.metrics
        while not self.stopping.is_set():
            metrics.loops += 1
            if self._seeks:
                self._apply_seeks()
            if self._pause_dirty:
                self._sync_pauses()
            now = time.monotonic()
            if now >= next_commit or self._commit_requested:
                self._commit()
                next_commit = time.monotonic() + self._flush_interval_s
            if not reading and now >= self._lag_due:  # moving records: lag refreshed at commits
                self._update_lag()
            if regex and now >= next_refresh:
                self._subscribe()
                next_refresh = now + self._regex_refresh_s
            elif self._missing and now >= next_missing:
                self._subscribe()
                self._missing_wait = min(self._missing_wait * 2, _MISSING_TOPICS_MAX_S)
                next_missing = now + self._missing_wait
            if self._batch is not None and now >= self._batch_due:
                self._deliver(self._batch, self._batch_offsets)
                continue
            wait = min(_MAX_POLL_WAIT_S, max(0.0, next_commit - now))
            if self._batch is not None:
                wait = min(wait, max(0.0, self._batch_due - now))
            if self._missing:
                wait = min(wait, max(0.0, next_missing - now))
            if not self._topics or (not self._can_pause and self._must_hold()):
                self.stopping.wait(wait)
                reading = False
                continue
            try:
                if self._columns is not None:
                    polled = consumer.poll_batch(self._max_records, wait)
                else:
                    messages = consumer.poll(self._max_records, wait)
            except RetriableError as exc:
                self.stopping.wait(self._poll_retry.failed(exc))
                reading = False
                continue
            if self._poll_retry.failing:
                self._poll_retry.succeeded()
            if self._columns is not None:
                reading = polled.num_rows > 0
                if reading and not self.stopping.is_set():
                    self._process_columns(polled)
                continue
            reading = bool(messages)
            if reading and not self.stopping.is_set():
                self._process(messages)

    def _must_hold(self) -> bool:
        """Whether no partition may deliver (paused connector or a batch to retry)."""
        return self._paused or self._batch is not None

    def _process(self, messages: list[Message]) -> None:
        self.metrics.record_batch(len(messages))
        self._messages = messages
        offsets = _last_offsets(messages)
        try:
            converted: Sequence[Any] = self._deserializer.deserialize(messages)
            sources: Sequence[Message] = messages
        except Exception:
            items = self._deserializer.deserialize_each(messages, self._errors)
            converted, sources = self._keep(items, messages)
        transforms = self._transforms
        assert transforms is not None
        if not transforms.empty:
            out = transforms.apply(converted, sources)
            records = []
            for item in out:
                if item is None:
                    self.metrics.filtered += 1
                elif isinstance(item, Tolerated):
                    if item.future is not None:
                        self._dead_letters.append(item.future)
                else:
                    records.append(item)
        else:
            records = converted if isinstance(converted, list) else list(converted)
        self._deliver(records, {k: v + 1 for k, v in offsets.items()})

    def _process_columns(self, polled: Any) -> None:
        """Deliver a polled Arrow batch as columns, or per record when it cannot be read
        as columns.
        """
        from omconnect.runtime.columnar_stages import last_offsets
        from omconnect.transport.message_batches import batch_to_messages

        rows = polled.num_rows
        batch = self._columns.decode(polled)
        if batch is None:
            self.metrics.columnar_fallback += rows
            self._process(batch_to_messages(None, polled))
            return
        self.metrics.record_batch(rows)
        self.metrics.columnar += rows
        self.metrics.filtered += rows - batch.num_rows
        self._messages = ()
        self._deliver(batch, {k: v + 1 for k, v in last_offsets(polled).items()})

    def _put(self, records: Any) -> None:
        """Hand a batch to the task: an Arrow batch to ``put_batch``, records to ``put``
        (which a :class:`~omconnect.connector.BatchSinkTask` derives from ``put_batch``).
        """
        if isinstance(records, list):
            self.sink_task.put(records)
        else:
            self.sink_task.put_batch(records)  # type: ignore[attr-defined]

    def _keep(self, items: Sequence[SinkRecord | Tolerated], messages: Sequence[Message]
              ) -> tuple[list[SinkRecord], list[Message]]:
        records: list[SinkRecord] = []
        sources: list[Message] = []
        for item, message in zip(items, messages, strict=True):
            if isinstance(item, Tolerated):
                if item.future is not None:
                    self._dead_letters.append(item.future)
            else:
                records.append(item)
                sources.append(message)
        return records, sources

    def _deliver(self, records: list[SinkRecord], offsets: dict[tuple[str, int], int]) -> None:
        if records:
            try:
                self._put(records)
            except RetriableError as exc:
                self._hold(records, offsets, exc)
                return
        self.metrics.put += len(records)
        cache = self._tp_cache
        for key, offset in offsets.items():
            tp = cache.get(key)
            if tp is None:
                tp = cache[key] = TopicPartition(key[0], key[1])
            if tp not in self._assignment:
                # Records from a partition no rebalance callback announced: it is ours.
                self._assigned(frozenset((tp,)))
            self._offsets_put[tp] = offset
        if self.setup.active_topics is not None:
            self.setup.active_topics.saw(topic for topic, _ in offsets)
        self._dirty = True
        if self._batch is not None:
            _log.info("task %s: put succeeded after %d retries", self.id, self._batch_attempt)
            self._batch = None
            self._batch_offsets = {}
            self._pause_dirty = True

    def _hold(self, records: list[SinkRecord], offsets: dict[tuple[str, int], int],
              error: RetriableError) -> None:
        now = time.monotonic()
        if self._batch is None:
            self._batch = records
            self._batch_offsets = offsets
            self._batch_attempt = 0
            self._batch_started = now
            self._pause_dirty = True
        policy = self.setup.settings.errors
        self._batch_attempt += 1
        deadline = policy.retry_deadline(self._batch_started, zero_means_forever=True)
        delay = policy.backoff(self._batch_attempt)
        if now + delay > deadline:
            raise ConnectError(
                f"put() kept failing with retriable errors for "
                f"{policy.retry_timeout_ms} ms (errors.retry.timeout); last: {error}",
                connector=self.id.connector, task=self.id.task) from error
        self.metrics.retries += 1
        self._batch_due = now + delay
        _log.warning("task %s: put() failed (retriable), retry %d in %.1f s: %s", self.id,
                     self._batch_attempt, delay, error)

    # -- pauses, seeks, rebalances -------------------------------------------------------

    def _sync_pauses(self) -> None:
        self._pause_dirty = False
        if not self._can_pause or self._consumer is None:
            return
        wanted = set(self._assignment) if self._must_hold() else \
            self._task_paused & set(self._assignment)
        to_pause = wanted - self._consumer_paused
        to_resume = (self._consumer_paused - wanted) & set(self._assignment)
        try:
            if to_pause:
                self._consumer.pause(to_pause)
            if to_resume:
                self._consumer.resume(to_resume)
        except UnsupportedOperationError:
            self._can_pause = False
            return
        self._consumer_paused = wanted

    def _apply_seeks(self) -> None:
        seeks, self._seeks = self._seeks, {}
        assert self._consumer is not None
        for tp, offset in seeks.items():
            if tp not in self._assignment:
                _log.warning("task %s: ignoring offset reset of %s, not assigned", self.id, tp)
                continue
            self._consumer.seek(tp, offset)
            self._offsets_put[tp] = offset

    def _assigned(self, partitions: frozenset[TopicPartition]) -> None:
        self._assignment = self._assignment | partitions
        self.metrics.assigned_partitions = len(self._assignment)
        self._update_lag(self._note_committed(partitions))
        self.sink_task.open(partitions)
        if self._seeks:  # offsets the task set in open() apply before anything is read
            self._apply_seeks()
        self._pause_dirty = True
        self._sync_pauses()

    def _note_committed(self, partitions: frozenset[TopicPartition]
                        ) -> dict[TopicPartition, tuple[int, int]]:
        """Learn the group's positions of newly assigned partitions (for the metrics and
        to skip commits that change nothing); the offset ranges asked on the way, which
        the lag reuses (a range may cost the broker a read: two stream probes on
        RabbitMQ).
        """
        assert self._consumer is not None
        ranges: dict[TopicPartition, tuple[int, int]] = {}
        try:
            committed = self._consumer.committed(partitions)
        except Exception:
            return ranges
        for tp, offset in committed.items():
            if offset is not None:
                self._committed[tp] = offset
            else:
                try:
                    ranges[tp] = self._consumer.offset_range(tp)
                    self._committed[tp] = ranges[tp][0]
                except Exception:
                    self._committed[tp] = 0
        return ranges

    def _revoked(self, partitions: frozenset[TopicPartition]) -> None:
        if self._closing:
            return  # the runner closes the task itself
        try:
            self._commit(only=partitions)
        finally:
            self.sink_task.close(partitions)
            self._assignment = self._assignment - partitions
            self.metrics.assigned_partitions = len(self._assignment)
            for tp in partitions:
                self._offsets_put.pop(tp, None)
                self._committed.pop(tp, None)
                self._task_paused.discard(tp)
                self._consumer_paused.discard(tp)
            if self._batch is not None:
                revoked = {(tp.topic, tp.partition) for tp in partitions}
                self._batch = [r for r in self._batch
                               if (r.original_topic, r.original_partition) not in revoked]
                self._batch_offsets = {k: v for k, v in self._batch_offsets.items()
                                       if k not in revoked}

    # -- errant records -------------------------------------------------------------------

    def _report(self, record: SinkRecord, error: BaseException) -> Future[None]:
        message = self._original(record)
        tolerated = self._errors.failed(Failure(
            stage=Stage.TASK_PUT, executing_class=class_name(self.task), error=error,
            message=message, connector=self.id.connector, task=self.id.task))
        future = tolerated.future
        if future is None:
            future = Future()
            future.set_result(None)
        else:
            self._dead_letters.append(future)
        return future

    def _original(self, record: SinkRecord) -> Message:
        for message in self._messages:
            if (message.offset == record.original_offset
                    and message.partition == record.original_partition
                    and message.topic == record.original_topic):
                return message
        try:
            message = self._serializer.serialize_one(record)  # type: ignore[arg-type]
        except Exception:
            message = Message(record.topic)
        return Message(record.original_topic or record.topic, message.key, message.value,
                       message.headers, record.timestamp, record.original_partition,
                       record.original_offset)

    # -- commits --------------------------------------------------------------------------

    def _await_dead_letters(self) -> bool:
        """Wait for dead-letter writes; ``False`` when they did not finish in time."""
        deadline = time.monotonic() + self._flush_timeout_s
        pending = self._dead_letters
        while pending:
            future = pending[0]
            try:
                future.result(timeout=max(0.0, deadline - time.monotonic()))
            except FutureTimeout:
                return False
            except Exception as exc:
                raise ConnectError(
                    f"could not write a failed record to the dead-letter topic "
                    f"{self.setup.settings.errors.dlq_topic!r}: {exc}", connector=self.id.connector,
                    task=self.id.task) from exc
            pending.pop(0)
        return True

    def _commit(self, only: frozenset[TopicPartition] | None = None) -> None:
        self._commit_requested = False
        if self._abandoned or self._consumer is None:
            return
        if not self._await_dead_letters():
            _log.warning("task %s: dead-letter writes still pending; commit postponed", self.id)
            return
        put = {tp: o for tp, o in self._offsets_put.items()
               if tp in self._assignment and (only is None or tp in only)}
        if not put or (not self._dirty and only is None):
            self._update_lag()
            return
        try:
            safe = self.sink_task.pre_commit(dict(put))
        except RetriableError as exc:
            _log.warning("task %s: pre_commit() failed (retriable), commit postponed: %s",
                         self.id, exc)
            return
        to_commit = {}
        for tp, offset in (safe or {}).items():
            limit = put.get(tp)
            if limit is None:
                continue
            offset = min(int(offset), limit)
            if self._committed.get(tp) != offset:
                to_commit[tp] = offset
        if only is None:
            self._dirty = False
        if not to_commit:
            self._update_lag()
            return
        try:
            self._consumer.commit(to_commit)
        except RetriableError as exc:
            self.metrics.offset_commit_failures += 1
            self._dirty = True
            if self._closing_commit:
                _log.warning("task %s: the final commit failed (retriable): %s; what it "
                             "covered is delivered again", self.id, exc)
            else:
                self._commit_retry.failed(exc)  # raises once failures outlast the deadline
            return
        except Exception:
            self.metrics.offset_commit_failures += 1
            _log.exception("task %s: committing offsets failed; retrying at the next commit",
                           self.id)
            self._dirty = True
            return
        if self._commit_retry.failing:
            self._commit_retry.succeeded()
        covered = sum(max(0, o - self._committed.get(tp, o)) for tp, o in to_commit.items())
        self._committed.update(to_commit)
        self.metrics.record_offset_commit(covered)
        self._update_lag()

    def _update_lag(self, known: dict[TopicPartition, tuple[int, int]] | None = None
                    ) -> None:
        """Refresh the lag metric: end of each assigned partition minus the position put
        (or committed); from the poll loop at most once a second, and only while polls come
        back empty (it may ask the broker, e.g. Kafka's ListOffsets per partition).
        ``known``: ranges asked a moment ago, not asked again.
        """
        self._lag_due = time.monotonic() + _LAG_REFRESH_S
        if not self._lag_known or self._consumer is None:
            return
        if not self._assignment:
            self.metrics.lag = 0 if self.metrics.lag is not None else None
            return
        lag = 0
        try:
            for tp in self._assignment:
                _, end = known[tp] if known and tp in known else \
                    self._consumer.offset_range(tp)
                position = self._offsets_put.get(tp, self._committed.get(tp))
                if position is not None:
                    lag += max(0, end - position)
        except UnsupportedOperationError:
            self._lag_known = False
            self.metrics.lag = None
            return
        except Exception:
            return
        self.metrics.lag = lag

    # -- stop -------------------------------------------------------------------------

    def _wake(self) -> None:
        self._pause_dirty = True  # pause() or resume() may have changed what is held
        consumer = self._consumer
        if consumer is not None:
            try:
                consumer.wakeup()
            except Exception:
                _log.debug("task %s: wakeup failed", self.id, exc_info=True)

    def _close(self, *, failed: bool) -> None:
        try:
            if self._consumer is not None and not failed and not self._abandoned:
                self._closing_commit = True
                self._commit()
            if self._assignment:
                assignment, self._assignment = self._assignment, frozenset()
                self.metrics.assigned_partitions = 0
                try:
                    self.sink_task.close(assignment)
                except Exception:
                    _log.exception("task %s: close() raised", self.id)
        finally:
            self._closing = True
            if self._transforms is not None:
                self._transforms.close()
            consumer, self._consumer = self._consumer, None
            if consumer is not None:
                try:
                    consumer.close()
                except Exception:
                    _log.exception("task %s: closing the consumer failed", self.id)
            if self._producer is not None:
                try:
                    self._producer.close(timeout=self._remaining_stop_time())
                except Exception:
                    _log.exception("task %s: closing the producer failed", self.id)


_TOPIC = attrgetter("topic")
_PARTITION = attrgetter("partition")


def _last_offsets(messages: Sequence[Message]) -> dict[tuple[str, int], int]:
    """The offset of the last message of each (topic, partition) in ``messages``."""
    n = len(messages)
    first = messages[0]
    # The usual batch is one partition's run: decided at C speed (identity first).
    if (list(map(_PARTITION, messages)).count(first.partition) == n
            and list(map(_TOPIC, messages)).count(first.topic) == n):
        return {(first.topic, first.partition): messages[-1].offset}  # type: ignore[dict-item]
    offsets: dict[Any, Any] = {}
    for m in messages:
        offsets[m.topic, m.partition] = m.offset
    return offsets
