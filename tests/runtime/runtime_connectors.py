"""Small connectors and a gated transport for the runtime's tests.

Each connector keeps what it observed in :data:`STATE` under its connector name, so a
test reads what the task saw (records put, commit_record calls, the configs the connector
and its tasks started with) without mocks.

* ``CountingSource``: ``streams`` source partitions ``{"stream": s}``; record ``n`` of a
  stream has value ``"s<s>-<n>"`` and offset ``{"position": n + 1}`` (the next one to
  read); a restarted task resumes at the committed position. ``poison.at`` makes the
  record at that position of stream 0 unserialisable (an int where the schema says
  string).
* ``CountingBatchSource``: the same rows as Arrow batches (``poll_batch``, one batch per
  stream and poll, offset ``{"position": <end of the batch>}``), for the columnar path;
  it has no ``poison.at`` (a string column holds no int) and no ``commit_record`` (the
  runtime takes the columnar path only for tasks that need no per-record callback).
* ``BlockingSource``: ``poll`` blocks; with ``honour.stop=false`` it ignores ``stop()``.
* ``ListSink``: records what ``put`` received; ``retriable.failures`` makes the first
  puts raise RetriableError; ``report.values`` hands those values to the errant-record
  reporter; ``fail.values`` raise a fatal error.
* ``FailingSource``: every task's ``poll`` raises after ``fail.after`` polls.
* ``GatedTransport`` (registered as ``gated``): the memory transport with acknowledgements
  that :data:`GATE` can hold back or fail for chosen messages (the messages are stored;
  only the acknowledgement is delayed or lost, as when a broker times out).
"""

from __future__ import annotations

import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import Future
from typing import Any, ClassVar

from omconnect import plugins
from omconnect.columnar import SourceBatch
from omconnect.config import ConfigDef, ConfigType
from omconnect.connector import (
    BatchSinkTask,
    BatchSourceTask,
    SinkConnector,
    SinkTask,
    SourceConnector,
    SourceTask,
)
from omconnect.data import STRING_SCHEMA
from omconnect.errors import ConnectError, RetriableError, SendError, TransportError
from omconnect.records import RecordMetadata, SinkRecord, SourceRecord, TopicPartition
from omconnect.transport import Admin, Capabilities, Consumer, Message, Producer, TopicSpec
from omconnect.transport.memory import MemoryTransport
from omconnect.transport.spi import RebalanceListener, StartFrom

STATE: dict[str, dict[str, Any]] = defaultdict(lambda: defaultdict(list))
"""What each connector's tasks observed, by connector name."""

RELEASE_BLOCKED = threading.Event()
"""Set at test teardown to free BlockingSource tasks that ignore stop()."""


def reset_state() -> None:
    STATE.clear()
    RELEASE_BLOCKED.clear()


class _Connector:
    """Shared plumbing: keep the config, hand it to every task."""

    CONFIG: ClassVar[ConfigDef] = ConfigDef()

    def version(self) -> str:
        return "1.0"

    def config_def(self) -> ConfigDef:
        return self.CONFIG

    def start(self, config: Mapping[str, Any]) -> None:
        self.config = dict(config)
        STATE[self.config["name"]]["connector_starts"].append(time.monotonic())
        STATE[self.config["name"]]["started_with"].append(dict(config))

    def task_configs(self, max_tasks: int) -> list[dict[str, Any]]:
        return [dict(self.config, **{"task.number": i}) for i in range(max_tasks)]

    def stop(self) -> None:
        STATE[self.config["name"]]["connector_stops"].append(time.monotonic())

    def on_pause(self) -> None:
        STATE[self.config["name"]]["hooks"].append("pause")

    def on_resume(self) -> None:
        STATE[self.config["name"]]["hooks"].append("resume")

    def on_failed(self, error: BaseException) -> None:
        STATE[self.config["name"]]["hooks"].append("failed")

    def on_destroyed(self) -> None:
        STATE[self.config["name"]]["hooks"].append("destroyed")


class CountingTask(SourceTask):
    def version(self) -> str:
        return "1.0"

    def start(self, config: Mapping[str, Any]) -> None:
        self.name = config["name"]
        self.topic = config["topic"]
        self.batch = int(config.get("batch", 50))
        self.limit = int(config.get("records", -1))
        self.poison_at = int(config.get("poison.at", -1))
        self.big_at = int(config.get("big.at", -1))
        self.hang_when_done = str(config.get("hang.when.done", "false")) == "true"
        self.retriable_failures = int(config.get("retriable.failures", 0))
        number, tasks = int(config["task.number"]), int(config.get("tasks.max", 1))
        self.streams = [s for s in range(int(config.get("streams", 1))) if s % tasks == number]
        self.partitions = {s: {"stream": s} for s in self.streams}
        stored = self.context.offset_storage_reader.offsets(self.partitions.values())
        self.positions = {}
        for s, partition in self.partitions.items():
            offset = stored.get(tuple(sorted(partition.items())))
            self.positions[s] = int(offset["position"]) if offset else 0
        STATE[self.name]["resumed_at"].append(dict(self.positions))
        STATE[self.name]["task_started_with"].append(dict(config))
        self.stopped = threading.Event()

    def poll(self) -> list[SourceRecord] | None:
        if self.retriable_failures > 0:
            self.retriable_failures -= 1
            raise RetriableError("the source is busy")
        records = []
        for s in self.streams:
            start = self.positions[s]
            end = start + self.batch if self.limit < 0 else min(start + self.batch, self.limit)
            for n in range(start, end):
                value: Any = f"s{s}-{n}"
                if s == 0 and n == self.poison_at:
                    value = 12345  # not a string: the value converter rejects it
                if s == 0 and n == self.big_at:
                    value = "x" * 4096
                records.append(SourceRecord(
                    topic=self.topic, key_schema=STRING_SCHEMA, key=f"s{s}",
                    value_schema=STRING_SCHEMA, value=value,
                    source_partition=self.partitions[s], source_offset={"position": n + 1}))
            self.positions[s] = end
        if not records:
            if self.hang_when_done:
                RELEASE_BLOCKED.wait(60)  # ignores stop(): the runner must abandon it
            self.stopped.wait(0.02)
            return None
        return records

    def commit_record(self, record: SourceRecord, metadata: RecordMetadata | None) -> None:
        STATE[self.name]["commit_record"].append((record.value, metadata))

    def commit(self) -> None:
        STATE[self.name]["commits"].append(time.monotonic())

    def stop(self) -> None:
        self.stopped.set()


class CountingSource(_Connector, SourceConnector):
    CONFIG = (ConfigDef()
              .define("topic", ConfigType.STRING, documentation="Where records go.")
              .define("streams", ConfigType.INT, 1, documentation="Source partitions.")
              .define("records", ConfigType.INT, -1, documentation="Records per stream.")
              .define("batch", ConfigType.INT, 50, documentation="Records per poll per stream.")
              .define("poison.at", ConfigType.INT, -1, documentation="Poison position.")
              .define("big.at", ConfigType.INT, -1, documentation="Oversized position.")
              .define("hang.when.done", ConfigType.STRING, "false",
                      documentation="Block in poll, ignoring stop(), once done.")
              .define("retriable.failures", ConfigType.INT, 0,
                      documentation="Polls that raise RetriableError first.")
              .define("fail.start", ConfigType.STRING, "false",
                      documentation="The connector's start() raises."))

    def start(self, config: Mapping[str, Any]) -> None:
        super().start(config)
        if str(config.get("fail.start")) == "true":
            login = config.get("login.password")  # quoted back, as careless connectors do
            raise ConnectError("cannot reach the source system"
                               + (f" as admin:{login}" if login else ""))

    def task_class(self) -> type[SourceTask]:
        return CountingTask


class CountingBatchTask(BatchSourceTask, CountingTask):
    """:class:`CountingTask` as Arrow batches (see the module docstring)."""

    commit_record = SourceTask.commit_record  # none: the columnar path needs none

    def start(self, config: Mapping[str, Any]) -> None:
        if int(config.get("poison.at", -1)) >= 0:
            raise ConnectError("CountingBatchSource has no poison.at (a string column "
                               "cannot hold an int)")
        super().start(config)

    def poll_batch(self) -> list[SourceBatch] | None:
        import pyarrow as pa

        STATE[self.name]["poll_batches"].append(time.monotonic())
        if self.retriable_failures > 0:
            self.retriable_failures -= 1
            raise RetriableError("the source is busy")
        batches = []
        for s in self.streams:
            start = self.positions[s]
            end = start + self.batch if self.limit < 0 else min(start + self.batch, self.limit)
            if end <= start:
                continue
            values = ["x" * 4096 if s == 0 and n == self.big_at else f"s{s}-{n}"
                      for n in range(start, end)]
            rows = pa.RecordBatch.from_arrays(
                [pa.array([f"s{s}"] * len(values), pa.string()), pa.array(values, pa.string())],
                names=["key", "value"])
            batches.append(SourceBatch(
                topic=self.topic, records=rows, source_partition=self.partitions[s],
                source_offset={"position": end}, key_schema=STRING_SCHEMA,
                value_schema=STRING_SCHEMA))
            self.positions[s] = end
        if not batches:
            if self.hang_when_done:
                RELEASE_BLOCKED.wait(60)  # ignores stop(): the runner must abandon it
            self.stopped.wait(0.02)
            return None
        return batches

    def poll(self) -> Sequence[SourceRecord] | None:
        STATE[self.name]["record_polls"].append(time.monotonic())
        return super().poll()


class CountingBatchSource(CountingSource):
    """:class:`CountingSource` with :class:`CountingBatchTask`."""

    def task_class(self) -> type[SourceTask]:
        return CountingBatchTask


class ReconfiguringSource(CountingSource):
    """A CountingSource whose task count a test changes through :meth:`set_tasks`."""

    def start(self, config: Mapping[str, Any]) -> None:
        super().start(config)
        self.tasks = 1
        STATE[self.config["name"]]["connector"].append(self)

    def task_configs(self, max_tasks: int) -> list[dict[str, Any]]:
        return [dict(self.config, **{"task.number": i, "tasks.max": self.tasks})
                for i in range(min(self.tasks, max_tasks))]

    def set_tasks(self, tasks: int) -> None:
        self.tasks = tasks
        self.context.request_task_reconfiguration()


class BlockingTask(SourceTask):
    def version(self) -> str:
        return "1.0"

    def start(self, config: Mapping[str, Any]) -> None:
        self.name = config["name"]
        self.honour_stop = str(config.get("honour.stop", "true")) == "true"
        self.stopped = threading.Event()
        STATE[self.name]["started"].append(time.monotonic())

    def poll(self) -> list[SourceRecord] | None:
        STATE[self.name]["polling"].append(time.monotonic())
        if self.honour_stop:
            self.stopped.wait(60)
        else:
            RELEASE_BLOCKED.wait(60)
        return None

    def stop(self) -> None:
        STATE[self.name]["stop_called"].append(time.monotonic())
        self.stopped.set()


class BlockingSource(_Connector, SourceConnector):
    CONFIG = ConfigDef().define("honour.stop", ConfigType.STRING, "true",
                                documentation="Whether stop() unblocks poll().")

    def task_class(self) -> type[SourceTask]:
        return BlockingTask


class FailingTask(SourceTask):
    def version(self) -> str:
        return "1.0"

    def start(self, config: Mapping[str, Any]) -> None:
        self.name = config["name"]
        self.fail_after = int(config.get("fail.after", 0))
        self.login = config.get("login.password")  # quoted back, as careless tasks do
        self.polls = 0
        STATE[self.name]["task_starts"].append(time.monotonic())

    def poll(self) -> list[SourceRecord] | None:
        self.polls += 1
        if self.polls > self.fail_after:
            raise ConnectError("the source went away"
                               + (f" (logged in as admin:{self.login})" if self.login else ""))
        time.sleep(0.01)
        return None

    def stop(self) -> None:
        pass


class FailingSource(_Connector, SourceConnector):
    CONFIG = ConfigDef().define("fail.after", ConfigType.INT, 0, documentation="Good polls.")

    def task_class(self) -> type[SourceTask]:
        return FailingTask


class ExactlyOnceCountingSource(CountingSource):
    def exactly_once_support(self) -> bool:
        return True


class ListTask(SinkTask):
    def version(self) -> str:
        return "1.0"

    def start(self, config: Mapping[str, Any]) -> None:
        self.name = config["name"]
        self.retriable_failures = int(config.get("retriable.failures", 0))
        self.report_values = set(_list(config.get("report.values")))
        self.seek_to = int(config.get("seek.to", -1))
        self.commit_lag = int(config.get("commit.lag", 0))
        self.fail_values = set(_list(config.get("fail.values")))
        STATE[self.name]["task_starts"].append(time.monotonic())

    def open(self, partitions: frozenset[Any]) -> None:
        STATE[self.name]["opened"].append(sorted(partitions))
        if self.seek_to >= 0:
            self.context.offset(dict.fromkeys(partitions, self.seek_to))

    def close(self, partitions: frozenset[Any]) -> None:
        STATE[self.name]["closed"].append(sorted(partitions))
        STATE[self.name]["calls"].append(("close", threading.current_thread().name))

    def put(self, records: Sequence[SinkRecord]) -> None:
        state = STATE[self.name]
        state["put_batches"].append([(r.topic, r.partition, r.offset) for r in records])
        if self.retriable_failures > 0:
            self.retriable_failures -= 1
            raise RetriableError("the sink is busy, try again")
        for record in records:
            if record.value in self.fail_values:
                raise ConnectError(f"cannot write {record.value!r}")
            if record.value in self.report_values:
                reporter = self.context.errant_record_reporter
                assert reporter is not None
                reporter.report(record, ValueError(f"rejected {record.value!r}"))
                continue
            state["records"].append((record.topic, record.partition, record.offset,
                                     record.key, record.value))

    def pre_commit(self, offsets: Mapping[Any, int]) -> Mapping[Any, int]:
        STATE[self.name]["pre_commits"].append(dict(offsets))
        STATE[self.name]["calls"].append(("pre_commit", threading.current_thread().name))
        return {tp: max(0, offset - self.commit_lag) for tp, offset in offsets.items()}

    def stop(self) -> None:
        STATE[self.name]["calls"].append(("stop", threading.current_thread().name))


class ListSink(_Connector, SinkConnector):
    CONFIG = (ConfigDef()
              .define("retriable.failures", ConfigType.INT, 0, documentation="Busy puts.")
              .define("report.values", ConfigType.LIST, [], documentation="Reported values.")
              .define("fail.values", ConfigType.LIST, [], documentation="Fatal values.")
              .define("seek.to", ConfigType.INT, -1, documentation="Offset set in open().")
              .define("commit.lag", ConfigType.INT, 0,
                      documentation="pre_commit() keeps this many records uncommitted."))

    def task_class(self) -> type[SinkTask]:
        return ListTask


class ListBatchTask(BatchSinkTask, ListTask):
    """:class:`ListTask` taking Arrow batches (``put_batch``; ``put`` is the
    :class:`~omconnect.connector.BatchSinkTask`'s, derived from it): the runtime feeds
    it columns where its converters have a column form and batches rebuilt from records
    otherwise; it records what ``put`` records, from the batch's rows.
    """

    def put_batch(self, batch: Any) -> None:
        state = STATE[self.name]
        rows = batch.to_pylist()
        state["put_batches"].append([(r["topic"], r["partition"], r["offset"]) for r in rows])
        state["batch_puts"].append(len(rows))
        if self.retriable_failures > 0:
            self.retriable_failures -= 1
            raise RetriableError("the sink is busy, try again")
        for index, row in enumerate(rows):
            if row["value"] in self.fail_values:
                raise ConnectError(f"cannot write {row['value']!r}")
            if row["value"] in self.report_values:
                self.report_row(batch, index, ValueError(f"rejected {row['value']!r}"))
                continue
            state["records"].append((row["topic"], row["partition"], row["offset"],
                                     row["key"], row["value"]))


class ListBatchSink(ListSink):
    """:class:`ListSink` with :class:`ListBatchTask`."""

    def task_class(self) -> type[SinkTask]:
        return ListBatchTask


def _list(value: Any) -> list[str]:
    if not value:
        return []
    if isinstance(value, list | tuple):
        return [str(v) for v in value]
    return [v.strip() for v in str(value).split(",") if v.strip()]


# -- the gated transport --------------------------------------------------------------------


class Gate:
    """Decides, per sent message, whether its acknowledgement is held or failed."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.reset()

    def reset(self) -> None:
        with self._lock:
            self._hold: Callable[[Message], bool] | None = None
            self._fail: Callable[[Message], bool] | None = None
            self._error: Callable[[], BaseException] = lambda: TransportError("lost")
            self._fail_times = 0
            self._held: list[tuple[Future[list[RecordMetadata]], Future[Any]]] = []
            self.consumer_faults: dict[str, list[BaseException]] = {"poll": [], "commit": []}
            self.consumer_calls: dict[str, int] = {"poll": 0, "commit": 0}

    def fail_consumer(self, call: str, errors: Sequence[BaseException]) -> None:
        """Make the next ``len(errors)`` consumer ``call``s (poll or commit) raise these."""
        with self._lock:
            self.consumer_faults[call] = list(errors)

    def consumer_fault(self, call: str) -> BaseException | None:
        with self._lock:
            self.consumer_calls[call] += 1
            faults = self.consumer_faults[call]
            return faults.pop(0) if faults else None

    def hold(self, predicate: Callable[[Message], bool]) -> None:
        """Hold acknowledgements of batches holding a matching message until release()."""
        with self._lock:
            self._hold = predicate

    def fail(self, predicate: Callable[[Message], bool], error: Callable[[], BaseException],
             times: int = 1_000_000) -> None:
        """Fail the acknowledgement of matching messages, ``times`` times."""
        with self._lock:
            self._fail, self._error, self._fail_times = predicate, error, times

    def release(self) -> None:
        with self._lock:
            held, self._held = self._held, []
            self._hold = None
        for outer, inner in held:
            _copy(inner, outer)

    def wrap(self, messages: Sequence[Message], inner: Future[Any]) -> Future[Any]:
        with self._lock:
            failing = [i for i, m in enumerate(messages)
                       if self._fail is not None and self._fail_times > 0 and self._fail(m)]
            if failing:
                self._fail_times -= 1
                outcomes: list[Any] = list(inner.result())
                for i in failing:
                    outcomes[i] = self._error()
                outer: Future[Any] = Future()
                outer.set_exception(SendError("not acknowledged", outcomes))
                return outer
            if self._hold is not None and any(self._hold(m) for m in messages):
                outer = Future()
                self._held.append((outer, inner))
                return outer
        return inner


def _copy(source: Future[Any], target: Future[Any]) -> None:
    error = source.exception()
    if error is None:
        target.set_result(source.result())
    else:
        target.set_exception(error)


GATE = Gate()


class _GatedProducer(Producer):
    def __init__(self, inner: Producer) -> None:
        self._inner = inner

    def send(self, messages: Sequence[Message]) -> Future[list[RecordMetadata]]:
        return GATE.wrap(messages, self._inner.send(messages))

    def flush(self, timeout: float | None = None) -> None:
        self._inner.flush(timeout)

    def close(self, timeout: float | None = None) -> None:
        self._inner.close(timeout)


class _GatedConsumer(Consumer):
    """A memory consumer whose poll and commit raise what :data:`GATE` says first, and
    whose subscribe creates missing topics with one partition (as a Kafka consumer does
    with ``auto.create.topics``).
    """

    def __init__(self, inner: Consumer, admin: Callable[[], Admin]) -> None:
        self._inner = inner
        self._admin = admin

    def subscribe(self, topics: Sequence[str],
                  listener: RebalanceListener | None = None) -> None:
        admin = self._admin()
        admin.create_topics([TopicSpec(t, 1) for t in topics])
        self._inner.subscribe(topics, listener)

    def poll(self, max_records: int, timeout: float) -> list[Message]:
        fault = GATE.consumer_fault("poll")
        if fault is not None:
            raise fault
        return self._inner.poll(max_records, timeout)

    def commit(self, offsets: Mapping[TopicPartition, int]) -> None:
        fault = GATE.consumer_fault("commit")
        if fault is not None:
            raise fault
        self._inner.commit(offsets)

    def close(self) -> None:
        self._inner.close()

    def assignment(self) -> frozenset[TopicPartition]:
        return self._inner.assignment()

    def committed(self, partitions: Iterable[TopicPartition]
                  ) -> dict[TopicPartition, int | None]:
        return self._inner.committed(partitions)

    def offset_range(self, partition: TopicPartition) -> tuple[int, int]:
        return self._inner.offset_range(partition)

    def seek(self, partition: TopicPartition, offset: int) -> None:
        self._inner.seek(partition, offset)

    def pause(self, partitions: Iterable[TopicPartition]) -> None:
        self._inner.pause(partitions)

    def resume(self, partitions: Iterable[TopicPartition]) -> None:
        self._inner.resume(partitions)

    def wakeup(self) -> None:
        self._inner.wakeup()


class GatedTransport(MemoryTransport):
    """The memory transport whose producers' acknowledgements, and consumers' polls and
    commits, go through :data:`GATE`.
    """

    name: ClassVar[str] = "gated"

    @property
    def capabilities(self) -> Capabilities:
        return super().capabilities

    def producer(self, options: Mapping[str, Any] | None = None) -> Producer:
        return _GatedProducer(super().producer(options))

    def consumer(self, group: str | None = None, *, start: StartFrom = "earliest",
                 options: Mapping[str, Any] | None = None) -> Consumer:
        return _GatedConsumer(super().consumer(group, start=start, options=options),
                              self.admin)


plugins.register_alias(plugins.TRANSPORTS, "gated", f"{__name__}:GatedTransport")
