"""The per-record CPU cost of each stage of the pipeline benchmark, one stage at a time.

Usage::

    python benchmarks/hot_path.py [--batch 1000] [--batches 300] [--size 100]
        [--converter bytearray|string|json] [--gc]

Each stage of ``benchmarks/pipeline.py``'s path (data generator → embedded transport →
null sink) runs alone on one thread, over ``--batches`` batches of ``--batch`` records,
and is timed in CPU time (``time.process_time``, all threads: the embedded transport
writes on a thread of its own). The runtime's stages are the ones the task threads run;
the transport's stages are what its raw produce-and-consume loop pays as well:

* ``datagen.poll`` — the generator makes a batch of ``SourceRecord`` (``payload``).
* ``serialize`` — converters turn the records into transport messages.
* ``offsets.submit`` — source offsets are tracked until acknowledged, then collected.
* ``transport.produce`` — ``producer.send`` until acknowledged (fsync included).
* ``transport.consume`` — ``consumer.poll`` and ``commit``.
* ``deserialize`` — converters turn the messages into ``SinkRecord`` objects.
* ``sink.bookkeeping`` — the sink runner's per-batch offsets and the null sink's ``put``.

The garbage collector is off while stages are timed (``--gc`` leaves it on): its cost
depends on everything else alive in the process, so ``pipeline.py`` reports it for the
real run. Prints µs per record for each stage and their sum; the last line is one JSON
object with those figures.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from omconnect_console.null import NullSinkTask
from omconnect_datagen.task import DatagenTask

from omconnect.connector.context import OffsetStorageReader, SourceTaskContext
from omconnect.records import SourceRecord
from omconnect.runtime.record_conversion import (
    MessageDeserializer,
    SourceRecordSerializer,
    build_converters,
)
from omconnect.runtime.sink_task_runner import _last_offsets
from omconnect.runtime.submitted_records import SubmittedRecords
from omconnect.transport import Message, TopicSpec
from omconnect.transport.embedded import EmbeddedTransport

TOPIC = "hot-path"


class _NoOffsets(OffsetStorageReader):
    def offsets(self, partitions: Any) -> dict[Any, Any]:
        return {}


class _Context(SourceTaskContext):
    def __init__(self, configs: Mapping[str, Any]) -> None:
        self._configs = configs

    @property
    def offset_storage_reader(self) -> OffsetStorageReader:
        return _NoOffsets()

    @property
    def configs(self) -> Mapping[str, Any]:
        return self._configs


def _timed(batches: int, batch: int, step: Callable[[int], Any]) -> float:
    """µs of CPU per record of ``step(i)`` for ``i`` in ``range(batches)``."""
    started = time.process_time()
    for i in range(batches):
        step(i)
    return (time.process_time() - started) / (batches * batch) * 1e6


def measure(args: argparse.Namespace, workdir: Path) -> dict[str, float]:
    """µs per record of each stage."""
    n, size, total = args.batch, args.size, args.batches * args.batch
    config = {"topic": TOPIC, "quickstart": "payload", "payload.size": size,
              "batch.size": n, "max.messages": total}
    source = DatagenTask()
    source.initialize(_Context(config))
    source.start(config)
    converters = build_converters({}, {"key.converter": args.converter,
                                       "value.converter": args.converter})
    serializer = SourceRecordSerializer(converters)
    deserializer = MessageDeserializer(converters)
    if args.converter != "bytearray":  # the generator makes bytes; give text or JSON
        source = _Retyped(source, args.converter)  # type: ignore[assignment]

    costs: dict[str, float] = {}
    polled: list[list[SourceRecord]] = []
    costs["datagen.poll"] = _timed(args.batches, n, lambda _: polled.append(
        list(source.poll() or ())))
    messages: list[list[Message]] = []
    costs["serialize"] = _timed(args.batches, n, lambda i: messages.append(
        serializer.serialize(polled[i])))

    submitted = SubmittedRecords()

    def track(i: int) -> None:
        submission = submitted.submit(polled[i])
        submission.waiting = 0
        submitted.completed(submission)
        if i % 10 == 9:
            submitted.committable()

    costs["offsets.submit"] = _timed(args.batches, n, track)
    polled.clear()

    transport = EmbeddedTransport({"path": str(workdir / "data")})
    try:
        admin = transport.admin()
        admin.create_topics([TopicSpec(TOPIC, 1)])
        admin.close()
        producer = transport.producer()
        window: list[Any] = []

        def produce(i: int) -> None:
            window.append(producer.send(messages[i]))
            if len(window) >= 32:
                window.pop(0).result()

        costs["transport.produce"] = _timed(args.batches, n, produce)
        for future in window:
            future.result()
        producer.close()
        messages.clear()
        consumer = transport.consumer("hot-path")
        consumer.subscribe([TOPIC])
        consumed: list[list[Message]] = []

        def consume(_: int) -> None:
            got = consumer.poll(n, 5.0)
            consumed.append(got)
            last = got[-1]
            consumer.commit({_tp(last): (last.offset or 0) + 1})

        costs["transport.consume"] = _timed(args.batches, n, consume)
        consumer.close()
    finally:
        transport.close()
    sink = NullSinkTask()
    records: list[Any] = []
    costs["deserialize"] = _timed(args.batches, n, lambda i: records.append(
        deserializer.deserialize(consumed[i])))

    def bookkeeping(i: int) -> None:
        offsets = _last_offsets(consumed[i])
        {k: v + 1 for k, v in offsets.items()}  # as the runner does
        sink.put(records[i])

    costs["sink.bookkeeping"] = _timed(args.batches, n, bookkeeping)
    return costs


class _Retyped:
    """The generator's records with values as text (string) or maps (json)."""

    def __init__(self, task: DatagenTask, converter: str) -> None:
        self._task = task
        self._json = converter == "json"

    def poll(self) -> list[SourceRecord]:
        records = self._task.poll() or []
        if self._json:
            return [r.evolve(value_schema=None, value={"payload": r.value.hex()})
                    for r in records]
        return [r.evolve(value_schema=None, value=r.value.hex()) for r in records]


def _tp(message: Message) -> Any:
    from omconnect.records import TopicPartition

    return TopicPartition(message.topic, message.partition or 0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batch", type=int, default=1000)
    parser.add_argument("--batches", type=int, default=300)
    parser.add_argument("--size", type=int, default=100)
    parser.add_argument("--converter", default="bytearray",
                        choices=("bytearray", "string", "json"))
    parser.add_argument("--gc", action="store_true", help="leave the garbage collector on")
    args = parser.parse_args()
    load = os.getloadavg()[0]
    workdir = Path(tempfile.mkdtemp(prefix="omc-hot-path-"))
    if not args.gc:
        gc.disable()
    try:
        costs = measure(args, workdir)
    finally:
        gc.enable()
        shutil.rmtree(workdir, ignore_errors=True)
    runtime = sum(v for k, v in costs.items() if not k.startswith("transport."))
    transport = sum(v for k, v in costs.items() if k.startswith("transport."))
    print(f"records={args.batch * args.batches:,} batch={args.batch} size={args.size} "
          f"converter={args.converter} gc={'on' if args.gc else 'off'} load={load:.2f}")
    for stage, cost in costs.items():
        print(f"  {stage:<18} {cost:6.2f} µs/record")
    print(f"  {'runtime stages':<18} {runtime:6.2f} µs/record")
    print(f"  {'transport stages':<18} {transport:6.2f} µs/record")
    print(json.dumps({"benchmark": "hot_path", "converter": args.converter,
                      "batch": args.batch, "records": args.batch * args.batches,
                      "gc": args.gc, "load_average": round(load, 2),
                      "us_per_record": {k: round(v, 3) for k, v in costs.items()},
                      "runtime_us_per_record": round(runtime, 3),
                      "transport_us_per_record": round(transport, 3)}))


if __name__ == "__main__":
    main()
