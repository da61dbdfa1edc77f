"""Error handling for records: retry with backoff, then tolerate or fail, as configured.

Configured like Kafka Connect, per connector:

* ``errors.retry.timeout`` / ``errors.retry.delay.max.ms``: a
  :class:`~omconnect.errors.RetriableError` is retried with exponential backoff (300 ms,
  doubling, capped) until the timeout; ``0`` means no retry, ``-1`` forever.
* ``delivery.timeout.ms`` (sources): a send the transport failed with a retriable error
  (a lost connection, a broker restarting) is resent with the same backoff for this long
  (default two minutes, as Kafka's producer, whose own retries Kafka Connect relies on),
  or for ``errors.retry.timeout`` when that is longer.
* ``errors.tolerance=none``: a failed record fails the task with a
  :class:`ToleranceExceededError` naming the connector, task, stage and the record's
  topic / partition / offset (or source partition / offset).
* ``errors.tolerance=all``: a failed record is skipped, logged when
  ``errors.log.enable``, and written to the dead-letter topic when
  ``errors.deadletterqueue.topic.name`` is set (see
  :mod:`omconnect.runtime.dead_letter_queue`).

Only per-record stages are tolerated (conversion, transformation, produce); a failing
``poll`` or ``put`` fails the task after its retries.
"""

from __future__ import annotations

import enum
import logging
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any, TypeVar

import attrs

from omconnect.config.secrets import MASK, looks_secret
from omconnect.errors import ConnectError, RetriableError
from omconnect.records import SourceRecord
from omconnect.transport.messages import Message

if TYPE_CHECKING:
    from omconnect.runtime.dead_letter_queue import DeadLetterQueue
    from omconnect.runtime.metrics import TaskMetrics

__all__ = [
    "DEFAULT_DELIVERY_TIMEOUT_MS",
    "ErrorPolicy",
    "Failure",
    "RetryWithTolerance",
    "Stage",
    "TaskInterrupted",
    "ToleranceExceededError",
    "Tolerated",
    "class_name",
]

_log = logging.getLogger(__name__)

T = TypeVar("T")

_FIRST_DELAY_S = 0.3


class Stage(enum.Enum):
    """Where in the pipeline a record failed (the ``__connect.errors.stage`` header)."""

    TASK_POLL = "TASK_POLL"
    TRANSFORMATION = "TRANSFORMATION"
    KEY_CONVERTER = "KEY_CONVERTER"
    VALUE_CONVERTER = "VALUE_CONVERTER"
    HEADER_CONVERTER = "HEADER_CONVERTER"
    PRODUCE = "PRODUCE"
    CONSUME = "CONSUME"
    TASK_PUT = "TASK_PUT"


class TaskInterrupted(Exception):
    """The task was asked to stop while waiting to retry; it ends without failing."""


class ToleranceExceededError(ConnectError):
    """A record failed and ``errors.tolerance`` is ``none``: the task fails."""


DEFAULT_DELIVERY_TIMEOUT_MS = 120_000
"""``delivery.timeout.ms`` by default: as Kafka's producer, two minutes of resending ride
out a broker restart or a lost connection."""


def class_name(obj: Any) -> str:
    """The fully qualified class name of ``obj`` (or of the class ``obj``)."""
    cls = obj if isinstance(obj, type) else type(obj)
    return f"{cls.__module__}.{cls.__qualname__}"


@attrs.frozen(kw_only=True)
class ErrorPolicy:
    """The ``errors.*`` settings of a connector.

    Attributes:
        tolerate_all: ``errors.tolerance=all``.
        retry_timeout_ms: ``errors.retry.timeout`` (0 no retry, -1 forever).
        retry_delay_max_ms: ``errors.retry.delay.max.ms``.
        log_enable: ``errors.log.enable``.
        log_include_messages: ``errors.log.include.messages``.
        dlq_topic: ``errors.deadletterqueue.topic.name``, or ``None``.
        dlq_context_headers: ``errors.deadletterqueue.context.headers.enable``.
        dlq_partitions: Partitions of the dead-letter topic when created.
        delivery_timeout_ms: ``delivery.timeout.ms``: how long a send failed with a
            retriable error is resent (-1 until stopped).

    """

    tolerate_all: bool = False
    retry_timeout_ms: int = 0
    retry_delay_max_ms: int = 60000
    log_enable: bool = False
    log_include_messages: bool = False
    dlq_topic: str | None = None
    dlq_context_headers: bool = False
    dlq_partitions: int = 1
    delivery_timeout_ms: int = DEFAULT_DELIVERY_TIMEOUT_MS

    @classmethod
    def from_config(cls, values: Mapping[str, Any]) -> ErrorPolicy:
        """The policy from parsed connector settings."""
        return cls(
            tolerate_all=str(values.get("errors.tolerance") or "none").lower() == "all",
            retry_timeout_ms=int(values.get("errors.retry.timeout") or 0),
            retry_delay_max_ms=int(values.get("errors.retry.delay.max.ms") or 60000),
            log_enable=bool(values.get("errors.log.enable")),
            log_include_messages=bool(values.get("errors.log.include.messages")),
            dlq_topic=str(values.get("errors.deadletterqueue.topic.name") or "").strip() or None,
            dlq_context_headers=bool(values.get("errors.deadletterqueue.context.headers.enable")),
            dlq_partitions=int(values.get("errors.deadletterqueue.topic.partitions") or 1),
            delivery_timeout_ms=int(DEFAULT_DELIVERY_TIMEOUT_MS
                                    if values.get("delivery.timeout.ms") is None
                                    else values["delivery.timeout.ms"]),
        )

    def backoff(self, attempt: int) -> float:
        """Seconds to wait before retry number ``attempt`` (1-based): 0.3 s doubling,
        capped at ``retry_delay_max_ms``.
        """
        delay = _FIRST_DELAY_S * (2 ** min(attempt - 1, 30))
        return float(min(delay, self.retry_delay_max_ms / 1000.0))

    def retry_deadline(self, started: float, *, zero_means_forever: bool = False) -> float:
        """The monotonic time after which a retriable failure first seen at ``started``
        is no longer retried (``inf`` for forever, ``started`` for never).
        """
        timeout = self.retry_timeout_ms
        if timeout < 0 or (timeout == 0 and zero_means_forever):
            return float("inf")
        return started + timeout / 1000.0

    def send_deadline(self, started: float) -> float:
        """The monotonic time after which a send that failed retriably (first at
        ``started``) is no longer resent: the later of ``delivery.timeout.ms`` and
        ``errors.retry.timeout`` (``inf`` when either is -1).
        """
        if self.delivery_timeout_ms < 0:
            return float("inf")
        return max(self.retry_deadline(started), started + self.delivery_timeout_ms / 1000.0)


@attrs.frozen(kw_only=True)
class Failure:
    """One failed record, as the error reporters see it.

    Attributes:
        stage: Where it failed.
        executing_class: The class that raised (converter, transform, task).
        error: The exception.
        message: The transport message: the original consumed one (sink), or the
            converted one when conversion got that far (source).
        source_record: The source record (source connectors).
        connector: The connector's name.
        task: The task's number.

    """

    stage: Stage
    executing_class: str
    error: BaseException
    message: Message | None = None
    source_record: SourceRecord | None = None
    connector: str = ""
    task: int = 0

    def where(self) -> dict[str, Any]:
        """Context for error messages: topic, partition, offset (and source position)."""
        if self.message is not None and self.message.offset is not None:
            return {"topic": self.message.topic, "partition": self.message.partition,
                    "offset": self.message.offset}
        if self.source_record is not None:
            return {"topic": self.source_record.topic,
                    "source_partition": dict(self.source_record.source_partition),
                    "source_offset": dict(self.source_record.source_offset)}
        if self.message is not None:
            return {"topic": self.message.topic}
        return {}

    def describe(self) -> str:
        """A sentence naming the record."""
        where = self.where()
        if "offset" in where:
            return (f"record at topic {where['topic']!r} partition {where['partition']} "
                    f"offset {where['offset']}")
        if "source_partition" in where:
            return (f"source record for topic {where['topic']!r} from source partition "
                    f"{where['source_partition']} at source offset {where['source_offset']}")
        return "record"


class Tolerated:
    """Returned instead of a result when a record failed and was tolerated.

    Attributes:
        future: Completes when the dead-letter write is acknowledged (``None`` when the
            record was not dead-lettered). Until then, the record is not "done" for
            offset purposes.

    """

    __slots__ = ("future",)

    def __init__(self, future: Future[None] | None) -> None:
        self.future = future


class RetryWithTolerance:
    """Runs per-record operations with retries, then tolerates or fails per the policy.

    One instance per task; used from the task thread (and from a sink's errant-record
    reporter, which may be called from the task's own threads).

    Args:
        policy: The connector's error settings.
        connector: The connector's name.
        task: The task's number.
        metrics: The task's metrics (errors, retries, dead-lettered).
        stopping: Set when the task must stop: retry waits end early.
        dead_letter_queue: Where tolerated records go, or ``None``.

    """

    def __init__(
        self,
        policy: ErrorPolicy,
        *,
        connector: str,
        task: int,
        metrics: TaskMetrics,
        stopping: threading.Event,
        dead_letter_queue: DeadLetterQueue | None = None,
    ) -> None:
        self.policy = policy
        self.connector = connector
        self.task = task
        self.metrics = metrics
        self.stopping = stopping
        self.dead_letter_queue = dead_letter_queue

    def execute(
        self,
        operation: Callable[[], T],
        stage: Stage,
        executing_class: str,
        *,
        message: Message | None = None,
        source_record: SourceRecord | None = None,
    ) -> T | Tolerated:
        """Run ``operation``; retry it while it raises a retriable error within the
        retry timeout; then fail or tolerate.

        Returns:
            The operation's result, or :class:`Tolerated` when it failed and the policy
            tolerates it.

        Raises:
            ToleranceExceededError: It failed and ``errors.tolerance`` is ``none``.
            TaskInterrupted: The task was stopped while waiting to retry.

        """
        started = time.monotonic()
        attempt = 0
        while True:
            try:
                return operation()
            except RetriableError as exc:
                attempt += 1
                if not self.wait_to_retry(attempt, self.policy.retry_deadline(started)):
                    error: BaseException = exc
                    break
            except Exception as exc:
                error = exc
                break
        return self.failed(Failure(stage=stage, executing_class=executing_class, error=error,
                                   message=message, source_record=source_record,
                                   connector=self.connector, task=self.task))

    def wait_to_retry(self, attempt: int, deadline: float) -> bool:
        """Wait the backoff before retry ``attempt``; ``False`` when the deadline would
        pass first (no more retries).

        Raises:
            TaskInterrupted: The task was stopped during the wait.

        """
        delay = self.policy.backoff(attempt)
        if time.monotonic() + delay > deadline:
            if time.monotonic() >= deadline:
                return False
            delay = max(0.0, deadline - time.monotonic())
        self.metrics.retries += 1
        if self.stopping.wait(delay):
            raise TaskInterrupted()
        return True

    def failed(self, failure: Failure) -> Tolerated:
        """Handle a record that failed for good.

        Returns:
            :class:`Tolerated`, with the dead-letter write's future if one was made.

        Raises:
            ToleranceExceededError: ``errors.tolerance`` is ``none``.

        """
        self.metrics.errors += 1
        if not self.policy.tolerate_all:
            raise self.tolerance_exceeded(failure) from failure.error
        if self.policy.log_enable:
            self._log(failure)
        future = None
        if self.dead_letter_queue is not None:
            future = self.dead_letter_queue.report(failure)
            self.metrics.dead_lettered += 1
        return Tolerated(future)

    def tolerance_exceeded(self, failure: Failure) -> ToleranceExceededError:
        """The error that fails the task for ``failure`` (tolerance ``none``)."""
        error = failure.error
        return ToleranceExceededError(
            f"tolerance exceeded in error handler: stage {failure.stage.value} "
            f"({failure.executing_class}) failed on the {failure.describe()} of connector "
            f"{self.connector!r} task {self.task}: {type(error).__name__}: {error}. Fix the "
            "data or the configuration, or set errors.tolerance=all (with "
            "errors.deadletterqueue.topic.name) to skip such records",
            connector=self.connector, task=self.task, stage=failure.stage.value,
            **{k: v for k, v in failure.where().items() if k in ("topic", "partition",
                                                                  "offset")},
        )

    def _log(self, failure: Failure) -> None:
        content = ""
        if self.policy.log_include_messages:
            content = " content: " + _describe_content(failure)
        _log.error(
            "error in connector %r task %d at stage %s (class %s) on the %s; "
            "tolerated (errors.tolerance=all)%s",
            self.connector, self.task, failure.stage.value, failure.executing_class,
            failure.describe(), content, exc_info=failure.error,
        )


def _describe_content(failure: Failure) -> str:
    if failure.source_record is not None:
        record = failure.source_record
        return (f"key={_redact(record.key)!r} value={_redact(record.value)!r} "
                f"headers={[(h.key, _redact_named(h.key, h.value)) for h in record.headers]!r}")
    if failure.message is not None:
        message = failure.message
        return (f"key={message.key!r} value={message.value!r} "
                f"headers={[(k, _redact_named(k, v)) for k, v in message.headers]!r}")
    return "(none)"


def _redact_named(name: str, value: Any) -> Any:
    return MASK if looks_secret(name) and value is not None else _redact(value)


def _redact(value: Any) -> Any:
    """``value`` with fields/keys that look secret (:func:`looks_secret`) masked."""
    from omconnect.data.struct import Struct

    if isinstance(value, Struct):
        return {f.name: _redact_named(f.name, value.get(f.name)) for f in
                value.schema.fields}
    if isinstance(value, Mapping):
        return {k: _redact_named(str(k), v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_redact(v) for v in value]
    return value
