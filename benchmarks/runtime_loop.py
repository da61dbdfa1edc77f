"""The runtime's own loop cost: a source and a sink through the worker vs the raw transport.

A source task returns ready-made batches of records (so the connector costs nothing); the
worker converts and sends them; a sink task that discards records reads them back. The
same number of 100-byte messages also goes through the transport's own produce and
consume loop. Prints records/s for each and the ratio; with ``--profile`` prints the top
of a cProfile of the runtime run. Last line: one JSON object.

    python benchmarks/runtime_loop.py --records 200000 --transport memory --converter string
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import tempfile
import threading
import time
import uuid
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from omconnect.config import ConfigDef, ConfigType
from omconnect.connector import SinkConnector, SinkTask, SourceConnector, SourceTask
from omconnect.data import STRING_SCHEMA
from omconnect.records import SinkRecord, SourceRecord, TopicPartition
from omconnect.runtime import StandaloneHerder
from omconnect.transport import Message

DONE = threading.Event()
TOTAL = {"records": 0, "target": 0}
BATCH = 1000


class _Base:
    CONFIG: ClassVar[ConfigDef] = ConfigDef().define("records", ConfigType.INT, 0)

    def version(self) -> str:
        """See the SPI."""
        return "1"

    def config_def(self) -> ConfigDef:
        return self.CONFIG

    def start(self, config: Mapping[str, Any]) -> None:
        """See the SPI."""
        self.config = dict(config)

    def task_configs(self, max_tasks: int) -> list[dict[str, Any]]:
        return [dict(self.config)]

    def stop(self) -> None:
        """See the SPI."""
        pass


class ReadySourceTask(SourceTask):
    """Returns the same ready-made batch until ``records`` were returned."""

    def version(self) -> str:
        """See the SPI."""
        return "1"

    def start(self, config: Mapping[str, Any]) -> None:
        """See the SPI."""
        self.left = int(config["records"])
        partition = {"stream": 0}
        payload = "x" * 100
        self.batch = [SourceRecord(topic="bench", value_schema=STRING_SCHEMA, value=payload,
                                   source_partition=partition, source_offset={"n": n})
                      for n in range(BATCH)]

    def poll(self) -> Sequence[SourceRecord] | None:
        """See the SPI."""
        if self.left <= 0:
            time.sleep(0.01)
            return None
        self.left -= BATCH
        return self.batch

    def stop(self) -> None:
        """See the SPI."""
        pass


class ReadySource(_Base, SourceConnector):
    """The connector of :class:`ReadySourceTask`."""

    def task_class(self) -> type[SourceTask]:
        """See the SPI."""
        return ReadySourceTask


class NullSinkTask(SinkTask):
    """Counts records and drops them."""

    def version(self) -> str:
        """See the SPI."""
        return "1"

    def start(self, config: Mapping[str, Any]) -> None:
        """See the SPI."""
        pass

    def put(self, records: Sequence[SinkRecord]) -> None:
        """See the SPI."""
        TOTAL["records"] += len(records)
        if TOTAL["records"] >= TOTAL["target"]:
            DONE.set()

    def stop(self) -> None:
        """See the SPI."""
        pass


class NullSink(_Base, SinkConnector):
    """The connector of :class:`NullSinkTask`."""

    def task_class(self) -> type[SinkTask]:
        """See the SPI."""
        return NullSinkTask


def _worker(transport: str, converter: str, workdir: str) -> dict[str, Any]:
    config: dict[str, Any] = {"transport": transport, "offset.flush.interval.ms": 1000,
                              "key.converter": converter, "value.converter": converter}
    if transport == "memory":
        config["memory.namespace"] = uuid.uuid4().hex
    else:
        config[f"{transport}.path"] = workdir
    return config


def run_runtime(records: int, transport: str, converter: str, workdir: str,
                profile: bool = False) -> tuple[float, float]:
    """(source records/s, sink records/s) through the worker, one after the other."""
    DONE.clear()
    TOTAL.update(records=0, target=records)
    profiles = _profile_tasks() if profile else None
    with StandaloneHerder(_worker(transport, converter, workdir)) as herder:
        started = time.perf_counter()
        herder.create_connector({"name": "src", "connector.class": f"{__name__}:ReadySource",
                                 "records": records})
        while herder.metrics()[0].acknowledged < records:
            time.sleep(0.005)
        source = records / (time.perf_counter() - started)
        herder.stop_connector("src")
        started = time.perf_counter()
        herder.create_connector({"name": "sink", "connector.class": f"{__name__}:NullSink",
                                 "topics": "bench"})
        DONE.wait()
        sink = records / (time.perf_counter() - started)
    if profiles is not None:
        for kind, profiler in profiles.items():
            print(f"--- {kind} task thread ---")
            pstats.Stats(profiler).sort_stats(os.environ.get("SORT", "tottime")).print_stats(25)
    return source, sink


def _profile_tasks() -> dict[str, cProfile.Profile]:
    """Run each task runner's loop under a profiler of its own thread."""
    from omconnect.runtime.sink_task_runner import SinkTaskRunner
    from omconnect.runtime.source_task_runner import SourceTaskRunner

    profiles: dict[str, cProfile.Profile] = {}
    for runner in (SourceTaskRunner, SinkTaskRunner):
        original = runner._execute

        def execute(self: Any, _original: Any = original) -> None:
            profiler = profiles.setdefault(self.kind, cProfile.Profile())
            profiler.enable()
            try:
                _original(self)
            finally:
                profiler.disable()

        runner._execute = execute  # type: ignore[method-assign]
    return profiles


def run_raw(records: int, transport: str, workdir: str) -> tuple[float, float]:
    """(produce records/s, consume records/s) of the transport's own loop."""
    from omconnect import plugins

    cls = plugins.load(plugins.TRANSPORTS, transport)
    options = {"namespace": uuid.uuid4().hex} if transport == "memory" else {
        "path": workdir + "/raw"}
    with cls(options) as raw:
        producer = raw.producer()
        value = b"x" * 100
        batch = [Message("raw", None, value) for _ in range(BATCH)]
        started = time.perf_counter()
        for _ in range(records // BATCH):
            producer.send(batch)
        producer.flush()
        produce = records / (time.perf_counter() - started)
        consumer = raw.consumer()
        consumer.assign([TopicPartition("raw", 0)])
        seen = 0
        started = time.perf_counter()
        while seen < records:
            seen += len(consumer.poll(BATCH, 1.0))
        consume = records / (time.perf_counter() - started)
        consumer.close()
        producer.close()
    return produce, consume


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--transport", default="memory")
    parser.add_argument("--converter", default="string")
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as workdir:
        produce, consume = run_raw(args.records, args.transport, workdir)
        source, sink = run_runtime(args.records, args.transport, args.converter, workdir,
                                   args.profile)
    raw = 1 / (1 / produce + 1 / consume)
    runtime = 1 / (1 / source + 1 / sink)
    print(f"raw produce        : {produce:12,.0f} records/s")
    print(f"runtime source path: {source:12,.0f} records/s  ({source / produce:.2f})")
    print(f"raw consume        : {consume:12,.0f} records/s")
    print(f"runtime sink path  : {sink:12,.0f} records/s  ({sink / consume:.2f})")
    print(f"ratio end to end   : {runtime / raw:12.2f}")
    print(json.dumps({"benchmark": "runtime_loop", "transport": args.transport,
                      "converter": args.converter, "records": args.records,
                      "raw_produce_per_s": round(produce), "raw_consume_per_s": round(consume),
                      "source_records_per_s": round(source), "sink_records_per_s": round(sink),
                      "ratio": round(runtime / raw, 3),
                      "load_average": round(os.getloadavg()[0], 2)}))


if __name__ == "__main__":
    main()
