"""The full runtime pipeline against the transport's own produce-and-consume loop.

Usage::

    python benchmarks/pipeline.py [--transport embedded|memory] [--records 1000000]
        [--rss-records 5000000] [--size 100] [--batch 1000] [--repeat 3]
        [--gc worker|python] [--no-floor]

Six measurements, each in a fresh subprocess (so each peak RSS is its own):

1. **raw, messages** — the transport API alone: a producer thread sends pre-built
   ``--size``-byte messages in batches of ``--batch`` while a consumer thread in a group
   polls and commits them, until it has all ``--records``: no records, converters or
   offsets, only what any client of the transport must do.
1b. **raw, columns** (skipped with ``--no-records-path``) — the same with the columnar
   API: one pre-built Arrow batch sent again and again with ``send_batch``, read with
   ``poll_batch``. The faster of the two raw loops is the ceiling the ratio is taken
   against.
2. **runtime** — ``omconnect``'s worker (a :class:`~omconnect.runtime.StandaloneHerder`)
   runs the data generator (``quickstart=payload``: ``--size``-byte values, Arrow
   batches) → the transport (ByteArray converters) → the null sink, on the columnar path,
   until the sink was given all ``--records``; the clock starts when the herder starts.
2b. **runtime, per record** (skipped with ``--no-records-path``) — the same worker with
   ``columnar.enable=false``: the generator's ``poll`` and the sink's ``put``, one object
   per record, so the gain of the columnar path shows in the same run.
3. **SPI floor** (``--no-floor`` skips it) — the raw loop plus only the objects the
   connector SPI requires: the real data generator task's ``SourceRecord`` objects
   become ``Message`` objects (fastest builder, no converter), each polled ``Message`` becomes a
   ``SinkRecord`` that is dropped. No offsets, conversion, metrics or error handling:
   ``floor / raw`` bounds the ratio any runtime on this SPI can reach in CPython.
4. **runtime at scale** — the same with ``--rss-records`` records, to compare peak RSS:
   a worker's memory must not grow with the number of records it moved (target: within
   10% of the 1,000,000-record run).

Raw and runtime runs alternate ``--repeat`` times and the medians are reported, wall
clock and CPU time (all threads) alike: on a shared machine the wall clock mostly says
how busy the machine was, CPU time what the code costs. Both kinds of child run with the
same garbage-collector thresholds: by default those ``omconnect standalone`` sets
(``--gc worker``, :func:`omconnect.runtime.tune_gc`), or CPython's (``--gc python``).

Prints records/s of both, their ratio by wall clock and by CPU time (target on embedded:
runtime >= 0.9 x raw), each worker's peak RSS, and for the runtime the CPU seconds of
each thread and of the garbage collector; the last line is one JSON object with those
figures. ``--profile FILE`` writes a cProfile of the runtime run (every thread) for
``python -m pstats``.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from omconnect.records import TopicPartition


def peak_rss_mib() -> float:
    """Peak resident set size of this process, in MiB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _thread_cpu() -> dict[str, float]:
    """CPU seconds of each live thread of this process, by thread name (Linux only)."""
    names = {t.native_id: t.name for t in threading.enumerate()}
    tick = os.sysconf("SC_CLK_TCK")
    cpu: dict[str, float] = {}
    try:
        tids = os.listdir("/proc/self/task")
    except OSError:
        return cpu
    for tid in tids:
        try:
            with open(f"/proc/self/task/{tid}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        name = names.get(int(tid), f"thread-{tid}")
        cpu[name] = cpu.get(name, 0.0) + (int(fields[11]) + int(fields[12])) / tick
    return cpu


def _cpu_since(before: dict[str, float]) -> dict[str, float]:
    """CPU seconds of each thread since ``before`` (a :func:`_thread_cpu` result)."""
    return {name: round(seconds - before.get(name, 0.0), 2)
            for name, seconds in _thread_cpu().items()
            if seconds - before.get(name, 0.0) >= 0.01}


class _GcClock:
    """CPU seconds spent in garbage collections while it is installed."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.collections = 0
        self._started: dict[int, float] = {}
        gc.callbacks.append(self._note)

    def _note(self, phase: str, _info: dict[str, Any]) -> None:
        key = threading.get_ident()
        if phase == "start":
            self._started[key] = time.thread_time()
        elif key in self._started:
            self.seconds += time.thread_time() - self._started.pop(key)
            self.collections += 1

    def remove(self) -> None:
        gc.callbacks.remove(self._note)


def _transport(name: str, workdir: Path) -> Any:
    from omconnect.runtime import WorkerConfig

    config = {"transport": name}
    if name == "embedded":
        config["embedded.path"] = str(workdir / "data")
    return WorkerConfig.parse(config).open_transport()


def _produce_and_consume(transport: Any, topic: str, total: int, batch_size: int,
                         next_batch: Any, on_polled: Any, name: str) -> dict[str, float]:
    """A producer thread sends ``next_batch()`` until ``total`` messages went out (32
    batches in flight at most) while this thread polls ``topic`` in a group, hands each
    poll to ``on_polled`` and commits after it; returns the figures.
    """
    consumer = transport.consumer(f"{name}-benchmark")
    consumer.subscribe([topic])
    consumer.poll(1, 0.5)  # join the group before the clock starts
    failure: list[BaseException] = []

    def produce() -> None:
        try:
            producer = transport.producer()
            window = []
            sent = 0
            while sent < total:
                messages = next_batch()
                if not messages:
                    continue
                sent += len(messages)
                window.append(producer.send(messages))
                if len(window) >= 32:
                    window.pop(0).result()
            for future in window:
                future.result()
            producer.close()
        except BaseException as exc:
            failure.append(exc)

    collector = _GcClock()
    before = _thread_cpu()
    started = time.perf_counter()
    cpu = time.process_time()
    thread = threading.Thread(target=produce, name=f"{name}-producer")
    thread.start()
    received = 0
    while received < total and not failure:
        messages = consumer.poll(batch_size, 1.0)
        if not messages:
            continue
        received += len(messages)
        on_polled(messages)
        last = messages[-1]
        consumer.commit({TopicPartition(topic, last.partition or 0): (last.offset or 0) + 1})
    elapsed = time.perf_counter() - started
    cpu = time.process_time() - cpu
    collector.remove()
    threads = _cpu_since(before)  # the producer thread is done but not yet joined
    thread.join()
    if failure:
        raise failure[0]
    consumer.close()
    transport.close()
    return {"records": total, "seconds": elapsed, "cpu_seconds": cpu,
            "records_per_s": total / elapsed, "peak_rss_mib": peak_rss_mib(),
            "gc_cpu_seconds": collector.seconds, "gc_collections": collector.collections,
            "thread_cpu_seconds": threads}


def run_raw(args: argparse.Namespace) -> dict[str, float]:
    """Producer thread and consumer thread on the transport API; returns figures."""
    from omconnect.transport import Message, TopicSpec

    transport = _transport(args.transport, Path(args.workdir))
    topic = "raw"
    transport.admin().create_topics([TopicSpec(topic, 1)])
    value = os.urandom(args.size)
    batch = [Message(topic, None, value) for _ in range(args.batch)]
    total = args.records // args.batch * args.batch
    return _produce_and_consume(transport, topic, total, args.batch, lambda: batch,
                                lambda messages: None, "raw")


def run_raw_columnar(args: argparse.Namespace) -> dict[str, float]:
    """The transport's columnar API alone: a producer thread sends one pre-built Arrow
    batch of ``--batch`` values again and again with ``send_batch`` while this thread
    polls with ``poll_batch`` and commits; the best loop a user can write with the
    transport's API when the data is already columnar. Returns figures.
    """
    import pyarrow as pa

    from omconnect.transport import TopicSpec

    transport = _transport(args.transport, Path(args.workdir))
    topic = "raw-columnar"
    transport.admin().create_topics([TopicSpec(topic, 1)])
    value = os.urandom(args.size)
    batch = pa.RecordBatch.from_arrays([pa.array([value] * args.batch, pa.binary())],
                                       names=["value"])
    total = args.records // args.batch * args.batch
    consumer = transport.consumer("raw-columnar-benchmark")
    consumer.subscribe([topic])
    consumer.poll_batch(1, 0.5)  # join the group before the clock starts
    failure: list[BaseException] = []

    def produce() -> None:
        try:
            producer = transport.producer()
            window = []
            for _ in range(total // args.batch):
                window.append(producer.send_batch(topic, batch))
                if len(window) >= 32:
                    window.pop(0).result()
            for future in window:
                future.result()
            producer.close()
        except BaseException as exc:
            failure.append(exc)

    collector = _GcClock()
    before = _thread_cpu()
    started = time.perf_counter()
    cpu = time.process_time()
    thread = threading.Thread(target=produce, name="raw-columnar-producer")
    thread.start()
    received = 0
    while received < total and not failure:
        polled = consumer.poll_batch(args.batch, 1.0)
        if not polled.num_rows:
            continue
        received += polled.num_rows
        last = polled.column("offset")[-1].as_py()
        consumer.commit({TopicPartition(topic, 0): last + 1})
    elapsed = time.perf_counter() - started
    cpu = time.process_time() - cpu
    collector.remove()
    threads = _cpu_since(before)
    thread.join()
    if failure:
        raise failure[0]
    consumer.close()
    transport.close()
    return {"records": total, "seconds": elapsed, "cpu_seconds": cpu,
            "records_per_s": total / elapsed, "peak_rss_mib": peak_rss_mib(),
            "gc_cpu_seconds": collector.seconds, "gc_collections": collector.collections,
            "thread_cpu_seconds": threads}


def run_floor(args: argparse.Namespace) -> dict[str, float]:
    """The raw loop plus only the objects the connector SPI requires; returns figures.

    The producer thread polls the real data generator task (``SourceRecord`` objects
    with their source offsets, as any source connector hands them over) and turns each record
    into a ``Message`` with the fastest builder, without converters, transforms, offset
    tracking or metrics; the consumer thread turns each polled ``Message`` into a
    ``SinkRecord`` and drops it (the null sink). Whatever a runtime on this SPI does, it
    does at least this, so ``floor / raw`` bounds the ratio any runtime can reach.
    """
    from omconnect_datagen.source import DatagenConnector

    from omconnect.records import Headers, build_sink_record
    from omconnect.testing.harness import ConnectorHarness
    from omconnect.transport import TopicSpec
    from omconnect.transport.messages import build_message

    transport = _transport(args.transport, Path(args.workdir))
    topic = "floor"
    transport.admin().create_topics([TopicSpec(topic, 1)])
    harness = ConnectorHarness(DatagenConnector, {
        "name": "gen", "topic": topic, "quickstart": "payload", "payload.size": args.size,
        "batch.size": args.batch, "max.messages": args.records})
    harness.start()
    task = harness.source_task(harness.task_configs(1)[0])
    empty = Headers.EMPTY

    def next_batch() -> list[Any]:
        return [build_message(r.topic, r.key, r.value, r.headers, r.timestamp, r.partition,
                              None) for r in task.poll() or ()]

    def put(messages: list[Any]) -> None:
        records = [build_sink_record(m.topic, m.partition, None, m.key, None, m.value,
                                     m.timestamp, empty, m.offset, m.topic, m.partition,
                                     m.offset) for m in messages]
        del records  # the null sink

    try:
        return _produce_and_consume(transport, topic, args.records, args.batch, next_batch,
                                    put, "floor")
    finally:
        task.stop()


def run_runtime(args: argparse.Namespace) -> dict[str, float]:
    """The worker: datagen → transport → null sink; returns figures."""
    from omconnect_console.null import COUNTS

    from omconnect.runtime import StandaloneHerder

    worker = {"transport": args.transport, "key.converter": "bytearray",
              "value.converter": "bytearray", "offset.flush.interval.ms": 5000,
              "consumer.max.poll.records": args.batch,
              "columnar.enable": getattr(args, "child", None) != "runtime-records"}
    if args.transport == "embedded":
        worker["embedded.path"] = str(Path(args.workdir) / "data")
    # A broker transport's own <name>.* options (benchmarks/transports.py sets them).
    worker.update(getattr(args, "worker_options", None) or {})
    herder = StandaloneHerder(worker)
    herder.open()
    herder.put_connector_config("gen", {
        "name": "gen", "connector.class": "datagen", "topic": "pipeline",
        "quickstart": "payload", "payload.size": args.size, "batch.size": args.batch,
        "max.messages": args.records})
    herder.put_connector_config("devnull", {
        "name": "devnull", "connector.class": "null", "topics": "pipeline",
        "consumer.override.group.id": "connect-devnull"})
    if worker["columnar.enable"]:
        # Load the columnar path's libraries before the clock, as the raw loops have them
        # loaded when theirs starts: pyarrow imports pandas (about a second of CPU) at its
        # first conversion of a Python object, once per process.
        import importlib

        import pyarrow as pa

        importlib.import_module("omconnect.columnar")
        pa.scalar(0)
    profilers = _profile_new_threads() if args.profile else None
    collector = _GcClock()
    before = _thread_cpu()
    started = time.perf_counter()
    cpu = time.process_time()
    herder.start()
    deadline = started + max(120.0, args.records / 5000)
    while COUNTS["devnull"] < args.records:
        if time.perf_counter() > deadline:
            raise SystemExit(f"the sink got {COUNTS['devnull']} of {args.records} records "
                             "in time; see the worker's log")
        time.sleep(0.01)
    elapsed = time.perf_counter() - started
    cpu = time.process_time() - cpu
    threads = _cpu_since(before)
    collector.remove()
    herder.stop()
    if profilers is not None:
        threading.setprofile(None)  # type: ignore[arg-type]
        _dump_profiles(profilers, args.profile)
    return {"records": args.records, "seconds": elapsed, "cpu_seconds": cpu,
            "records_per_s": args.records / elapsed, "peak_rss_mib": peak_rss_mib(),
            "gc_cpu_seconds": collector.seconds, "gc_collections": collector.collections,
            "thread_cpu_seconds": threads}


def _profile_new_threads() -> list[Any]:
    """Give every thread started from now on a cProfile profiler of its own."""
    import cProfile

    profilers: list[Any] = []

    def start(*_: Any) -> None:
        profiler = cProfile.Profile()
        profilers.append(profiler)
        profiler.enable()  # replaces this hook for the thread

    threading.setprofile(start)
    return profilers


def _dump_profiles(profilers: list[Any], path: str) -> None:
    """Merge the threads' profiles into one pstats file at ``path``."""
    import pstats

    stats = None
    for profiler in profilers:
        profiler.create_stats()
        if not profiler.stats:
            continue
        if stats is None:
            stats = pstats.Stats(profiler)
        else:
            stats.add(profiler)
    if stats is not None:
        stats.dump_stats(path)


def _child(mode: str, args: argparse.Namespace, records: int) -> dict[str, Any]:
    workdir = tempfile.mkdtemp(prefix=f"omc-pipeline-{mode}-")
    try:
        command = [sys.executable, __file__, "--child", mode, "--transport", args.transport,
                   "--records", str(records), "--size", str(args.size),
                   "--batch", str(args.batch), "--workdir", workdir, "--gc", args.gc]
        if args.profile and mode == "runtime" and records == args.records:
            command += ["--profile", args.profile]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise SystemExit(f"{mode} run failed:\n{done.stderr[-4000:]}")
        result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
        return result
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def _median_run(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The run with the median records/s (the lower middle one for an even count)."""
    ordered = sorted(runs, key=lambda r: r["records_per_s"])
    return ordered[(len(ordered) - 1) // 2]


def _show(label: str, run: dict[str, Any], runs: list[dict[str, Any]]) -> None:
    spread = ", ".join(f"{r['records_per_s']:,.0f}" for r in runs)
    print(f"{label}: {run['records_per_s']:>10,.0f} records/s median of [{spread}] "
          f"({run['seconds']:.1f} s, cpu {run['cpu_seconds']:.2f} s = "
          f"{run['cpu_seconds'] / run['records'] * 1e6:.2f} us/record, gc "
          f"{run['gc_cpu_seconds']:.2f} s, peak RSS {run['peak_rss_mib']:.0f} MiB)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--transport", default="embedded", choices=("embedded", "memory"))
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--rss-records", type=int, default=5_000_000,
                        help="records of the second runtime run (0: skip it)")
    parser.add_argument("--size", type=int, default=100)
    parser.add_argument("--batch", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3,
                        help="raw and runtime runs, alternated; medians are reported")
    parser.add_argument("--gc", choices=("worker", "python"), default="worker",
                        help="collector thresholds of both children: the worker's "
                        "(omconnect.runtime.tune_gc, as omconnect standalone) or CPython's")
    parser.add_argument("--profile", metavar="FILE", help="cProfile the runtime run")
    parser.add_argument("--floor", action=argparse.BooleanOptionalAction, default=True,
                        help="also run the SPI floor (raw loop + the SPI's record objects)")
    parser.add_argument("--records-path", action=argparse.BooleanOptionalAction,
                        default=True, help="also run the runtime on the per-record path "
                        "(columnar.enable=false) and the raw loop on the columnar API")
    parser.add_argument("--child", choices=("raw", "raw-columnar", "floor", "runtime",
                                            "runtime-records"),
                        help=argparse.SUPPRESS)
    parser.add_argument("--workdir", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        if args.gc == "worker":
            from omconnect.runtime import tune_gc

            tune_gc()
        run = {"raw": run_raw, "raw-columnar": run_raw_columnar, "floor": run_floor,
               "runtime": run_runtime, "runtime-records": run_runtime}[args.child]
        figures = run(args)
        print(json.dumps(figures))
        return
    load = os.getloadavg()[0]
    print(f"transport={args.transport} records={args.records:,} size={args.size} "
          f"batch={args.batch} repeat={args.repeat} gc={args.gc} load={load:.2f}")
    raws: list[dict[str, Any]] = []
    runtimes: list[dict[str, Any]] = []
    floors: list[dict[str, Any]] = []
    raw_columnars: list[dict[str, Any]] = []
    per_records: list[dict[str, Any]] = []
    for _ in range(max(1, args.repeat)):
        raws.append(_child("raw", args, args.records))
        if args.records_path:
            raw_columnars.append(_child("raw-columnar", args, args.records))
        if args.floor:
            floors.append(_child("floor", args, args.records))
        runtimes.append(_child("runtime", args, args.records))
        if args.records_path:
            per_records.append(_child("runtime-records", args, args.records))
    raw_messages = _median_run(raws)
    _show("raw loop, messages ", raw_messages, raws)
    if raw_columnars:
        _show("raw loop, columns  ", _median_run(raw_columnars), raw_columnars)
        if _median_run(raw_columnars)["records_per_s"] > raw_messages["records_per_s"]:
            raws = raw_columnars  # the ratio is against the best raw loop
    raw, runtime = _median_run(raws), _median_run(runtimes)
    if per_records:
        _show("runtime, per record", _median_run(per_records), per_records)
    if floors:
        _show("SPI floor          ", _median_run(floors), floors)
    _show("runtime, columnar  ", runtime, runtimes)
    shown = [("raw", raw)] + ([("floor", _median_run(floors))] if floors else []) + [
        ("runtime", runtime)]
    for label, run in shown:
        print(f"{label} CPU by thread (s): " + ", ".join(
            f"{name} {seconds:.2f}" for name, seconds in sorted(
                run["thread_cpu_seconds"].items(), key=lambda item: -item[1])))
    ratio = runtime["records_per_s"] / raw["records_per_s"]
    cpu_ratio = (statistics.median(r["cpu_seconds"] for r in raws)
                 / statistics.median(r["cpu_seconds"] for r in runtimes))
    end_load = os.getloadavg()[0]
    print(f"ratio runtime/raw  : {ratio:.2f} by wall clock, {cpu_ratio:.2f} by CPU time "
          f"(target >= 0.9; raw = the faster raw loop); load {load:.2f} -> {end_load:.2f}")
    path_figures: dict[str, Any] = {}
    if per_records:
        per_record = _median_run(per_records)
        print(f"ratio per-record/raw: {per_record['records_per_s'] / raw['records_per_s']:.2f}"
              " by wall clock (the same runtime with columnar.enable=false)")
        path_figures = {
            "raw_loop": "columns" if raws is raw_columnars else "messages",
            "raw_messages_records_per_s": round(raw_messages["records_per_s"]),
            "raw_columns_records_per_s": round(_median_run(raw_columnars)["records_per_s"]),
            "per_record_records_per_s": round(per_record["records_per_s"]),
            "per_record_ratio": round(per_record["records_per_s"] / raw["records_per_s"], 3),
            "per_record_cpu_us_per_record": round(
                per_record["cpu_seconds"] / per_record["records"] * 1e6, 3),
        }
    rss = statistics.median(r["peak_rss_mib"] for r in runtimes)
    floor_figures: dict[str, Any] = {}
    if floors:
        floor = _median_run(floors)
        floor_ratio = floor["records_per_s"] / raw["records_per_s"]
        floor_cpu_ratio = (statistics.median(r["cpu_seconds"] for r in raws)
                           / statistics.median(r["cpu_seconds"] for r in floors))
        print(f"ratio floor/raw    : {floor_ratio:.2f} by wall clock, {floor_cpu_ratio:.2f} "
              "by CPU time (the most any runtime on this SPI can reach)")
        floor_figures = {
            "floor_records_per_s": round(floor["records_per_s"]),
            "floor_records_per_s_runs": [round(r["records_per_s"]) for r in floors],
            "floor_ratio": round(floor_ratio, 3),
            "floor_cpu_us_per_record": round(floor["cpu_seconds"] / floor["records"] * 1e6, 3),
            "floor_cpu_ratio": round(floor_cpu_ratio, 3),
            "floor_thread_cpu_seconds": floor["thread_cpu_seconds"],
        }
    result: dict[str, Any] = {
        "benchmark": "pipeline", "transport": args.transport, "records": args.records,
        "size": args.size, "batch": args.batch, "repeat": args.repeat, "gc": args.gc,
        "load_average": round(load, 2), "load_average_end": round(end_load, 2),
        "raw_records_per_s": round(raw["records_per_s"]),
        "runtime_records_per_s": round(runtime["records_per_s"]),
        "raw_records_per_s_runs": [round(r["records_per_s"]) for r in raws],
        "runtime_records_per_s_runs": [round(r["records_per_s"]) for r in runtimes],
        "ratio": round(ratio, 3),
        "raw_cpu_us_per_record": round(raw["cpu_seconds"] / raw["records"] * 1e6, 3),
        "runtime_cpu_us_per_record": round(
            runtime["cpu_seconds"] / runtime["records"] * 1e6, 3),
        "cpu_ratio": round(cpu_ratio, 3),
        "runtime_gc_cpu_seconds": round(runtime["gc_cpu_seconds"], 3),
        "raw_thread_cpu_seconds": raw["thread_cpu_seconds"],
        "runtime_thread_cpu_seconds": runtime["thread_cpu_seconds"],
        "runtime_peak_rss_mib": round(rss, 1),
        **floor_figures,
        **path_figures,
    }
    if args.rss_records:
        scaled = _child("runtime", args, args.rss_records)
        growth = scaled["peak_rss_mib"] / rss - 1
        print(f"runtime, {args.rss_records:,} records: {scaled['records_per_s']:>10,.0f} "
              f"records/s, peak RSS {scaled['peak_rss_mib']:.0f} MiB vs {rss:.0f} MiB for "
              f"{args.records:,} ({growth:+.1%}; bounded means within 10%)")
        result.update({
            "rss_records": args.rss_records,
            "runtime_rss_run_records_per_s": round(scaled["records_per_s"]),
            "runtime_peak_rss_mib_at_rss_records": round(scaled["peak_rss_mib"], 1),
            "rss_growth": round(growth, 3),
        })
    print(json.dumps(result))


if __name__ == "__main__":
    main()
