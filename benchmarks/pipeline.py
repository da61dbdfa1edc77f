"""The full runtime pipeline against the transport's own produce-and-consume loop.

Usage::

    python benchmarks/pipeline.py [--transport embedded|memory] [--records 1000000]
        [--rss-records 5000000] [--size 100] [--batch 1000]

Three measurements, each in a fresh subprocess (so each peak RSS is its own):

1. **raw** — the transport API alone: a producer thread sends pre-built ``--size``-byte
   messages in batches of ``--batch`` while a consumer thread in a group polls and commits
   them, until it has all ``--records``. This is the ceiling: no records, converters or
   offsets, only what any client of the transport must do.
2. **runtime** — ``omconnect``'s worker (a :class:`~omconnect.runtime.StandaloneHerder`)
   runs the data generator (``quickstart=payload``: ``--size``-byte values) → the
   transport (ByteArray converters) → the null sink, until the sink was given all
   ``--records``; the clock starts when the herder starts.
3. **runtime at scale** — the same with ``--rss-records`` records, to compare peak RSS:
   a worker's memory must not grow with the number of records it moved (target: within
   10% of the 1,000,000-record run).

Prints records/s of both, their ratio (target on embedded: runtime >= 0.9 x raw) and the
peak RSS of each worker; the last line is one JSON object with those figures. ``--profile
FILE`` writes a cProfile of the runtime run (every thread) for ``python -m pstats``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
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


def _transport(name: str, workdir: Path) -> Any:
    from omconnect.runtime import WorkerConfig

    config = {"transport": name}
    if name == "embedded":
        config["embedded.path"] = str(workdir / "data")
    return WorkerConfig.parse(config).open_transport()


def run_raw(args: argparse.Namespace) -> dict[str, float]:
    """Producer thread and consumer thread on the transport API; returns figures."""
    from omconnect.transport import Message, TopicSpec

    transport = _transport(args.transport, Path(args.workdir))
    topic = "raw"
    admin = transport.admin()
    admin.create_topics([TopicSpec(topic, 1)])
    value = os.urandom(args.size)
    batches = [[Message(topic, None, value) for _ in range(args.batch)]]
    n_batches = args.records // args.batch
    consumer = transport.consumer("raw-benchmark")
    consumer.subscribe([topic])
    consumer.poll(1, 0.5)  # join the group before the clock starts
    failure: list[BaseException] = []

    def produce() -> None:
        try:
            producer = transport.producer()
            window = []
            for _ in range(n_batches):
                window.append(producer.send(batches[0]))
                if len(window) >= 32:
                    window.pop(0).result()
            for future in window:
                future.result()
            producer.close()
        except BaseException as exc:
            failure.append(exc)

    total = n_batches * args.batch
    started = time.perf_counter()
    cpu = time.process_time()
    thread = threading.Thread(target=produce)
    thread.start()
    received = 0
    while received < total and not failure:
        messages = consumer.poll(args.batch, 1.0)
        if not messages:
            continue
        received += len(messages)
        last = messages[-1]
        consumer.commit({TopicPartition(topic, last.partition or 0): (last.offset or 0) + 1})
    elapsed = time.perf_counter() - started
    cpu = time.process_time() - cpu
    thread.join()
    if failure:
        raise failure[0]
    consumer.close()
    transport.close()
    return {"records": total, "seconds": elapsed, "cpu_seconds": cpu,
            "records_per_s": total / elapsed, "peak_rss_mib": peak_rss_mib()}


def run_runtime(args: argparse.Namespace) -> dict[str, float]:
    """The worker: datagen → transport → null sink; returns figures."""
    from omconnect_console.null import COUNTS

    from omconnect.runtime import StandaloneHerder

    worker = {"transport": args.transport, "key.converter": "bytearray",
              "value.converter": "bytearray", "offset.flush.interval.ms": 5000,
              "consumer.max.poll.records": args.batch}
    if args.transport == "embedded":
        worker["embedded.path"] = str(Path(args.workdir) / "data")
    herder = StandaloneHerder(worker)
    herder.open()
    herder.put_connector_config("gen", {
        "name": "gen", "connector.class": "datagen", "topic": "pipeline",
        "quickstart": "payload", "payload.size": args.size, "batch.size": args.batch,
        "max.messages": args.records})
    herder.put_connector_config("devnull", {
        "name": "devnull", "connector.class": "null", "topics": "pipeline"})
    profilers = _profile_new_threads() if args.profile else None
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
    herder.stop()
    if profilers is not None:
        threading.setprofile(None)  # type: ignore[arg-type]
        _dump_profiles(profilers, args.profile)
    return {"records": args.records, "seconds": elapsed, "cpu_seconds": cpu,
            "records_per_s": args.records / elapsed, "peak_rss_mib": peak_rss_mib()}


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


def _child(mode: str, args: argparse.Namespace, records: int) -> dict[str, float]:
    workdir = tempfile.mkdtemp(prefix=f"omc-pipeline-{mode}-")
    try:
        command = [sys.executable, __file__, "--child", mode, "--transport", args.transport,
                   "--records", str(records), "--size", str(args.size),
                   "--batch", str(args.batch), "--workdir", workdir]
        if args.profile and mode == "runtime" and records == args.records:
            command += ["--profile", args.profile]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise SystemExit(f"{mode} run failed:\n{done.stderr[-4000:]}")
        result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
        return result
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--transport", default="embedded", choices=("embedded", "memory"))
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--rss-records", type=int, default=5_000_000,
                        help="records of the second runtime run (0: skip it)")
    parser.add_argument("--size", type=int, default=100)
    parser.add_argument("--batch", type=int, default=1000)
    parser.add_argument("--profile", metavar="FILE", help="cProfile the runtime run")
    parser.add_argument("--child", choices=("raw", "runtime"), help=argparse.SUPPRESS)
    parser.add_argument("--workdir", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        figures = run_raw(args) if args.child == "raw" else run_runtime(args)
        print(json.dumps(figures))
        return
    load = os.getloadavg()[0]
    print(f"transport={args.transport} records={args.records:,} size={args.size} "
          f"batch={args.batch} load={load:.2f}")
    raw = _child("raw", args, args.records)
    print(f"raw transport loop : {raw['records_per_s']:>10,.0f} records/s "
          f"({raw['seconds']:.1f} s, cpu {raw['cpu_seconds']:.1f} s, "
          f"peak RSS {raw['peak_rss_mib']:.0f} MiB)")
    runtime = _child("runtime", args, args.records)
    print(f"runtime pipeline   : {runtime['records_per_s']:>10,.0f} records/s "
          f"({runtime['seconds']:.1f} s, cpu {runtime['cpu_seconds']:.1f} s, "
          f"peak RSS {runtime['peak_rss_mib']:.0f} MiB)")
    ratio = runtime["records_per_s"] / raw["records_per_s"]
    print(f"ratio runtime/raw  : {ratio:.2f} (target >= 0.9)")
    result: dict[str, Any] = {
        "benchmark": "pipeline", "transport": args.transport, "records": args.records,
        "size": args.size, "batch": args.batch, "load_average": round(load, 2),
        "raw_records_per_s": round(raw["records_per_s"]),
        "runtime_records_per_s": round(runtime["records_per_s"]),
        "ratio": round(ratio, 3),
        "runtime_peak_rss_mib": round(runtime["peak_rss_mib"], 1),
    }
    if args.rss_records:
        scaled = _child("runtime", args, args.rss_records)
        growth = scaled["peak_rss_mib"] / runtime["peak_rss_mib"] - 1
        print(f"runtime, {args.rss_records:,} records: {scaled['records_per_s']:>10,.0f} "
              f"records/s, peak RSS {scaled['peak_rss_mib']:.0f} MiB vs "
              f"{runtime['peak_rss_mib']:.0f} MiB for {args.records:,} "
              f"({growth:+.1%}; bounded means within 10%)")
        result.update({
            "rss_records": args.rss_records,
            "runtime_rss_run_records_per_s": round(scaled["records_per_s"]),
            "runtime_peak_rss_mib_at_rss_records": round(scaled["peak_rss_mib"], 1),
            "rss_growth": round(growth, 3),
        })
    print(json.dumps(result))


if __name__ == "__main__":
    main()
