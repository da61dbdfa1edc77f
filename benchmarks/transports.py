"""Every transport in one run: the raw client vs the omconnect transport API vs the runtime.

Usage::

    python benchmarks/transports.py [--transport embedded,kafka,rabbitmq,pulsar,redis,nats]
        [--records 100000] [--size 100] [--batch 2000]

For each transport (default: every one whose client library and test broker can start
here; the others are listed as skipped with the reason), the broker is started with its
test launcher (a fresh Tansu with memory storage, a fresh RabbitMQ vhost, a fresh
pulsar-lite, a fresh redis-server with an append-only file, a fresh nats-server with
JetStream) and three measurements run,
each in a subprocess of its own so each peak RSS is its own, on ``--records`` records of
``--size`` bytes:

1. **raw**: the best client library for the broker, producing and consuming **at the
   same time** (``raw_concurrent``: a producer thread, the consumer in the main thread,
   clock from the group's subscription to the last record): confluent-kafka for Kafka
   (kafka-python measured too, as a second row), pika for RabbitMQ, pulsar-client for
   Pulsar, redis-py for Redis (``XADD`` through pipelines, a consumer group with
   ``XREADGROUP`` and ``XACK``), nats-py for NATS (``publish_async``; a pull consumer
   fetching batches, in an asyncio task beside the producer's). The embedded transport
   has no other client: its columnar API loop (``pipeline.run_raw_columnar``,
   ``send_batch`` and ``poll_batch`` at once) is its raw loop, and its "api" row the
   per-message API loop (``pipeline.run_raw``, also concurrent).
2. **api**: the omconnect transport API, ``Producer.send`` of batches then
   ``Consumer.poll`` + ``commit`` (``omconnect(...)`` of the per-transport scripts; Kafka
   with the confluent driver).
3. **runtime**: ``omconnect``'s worker (``pipeline.run_runtime``: a
   :class:`~omconnect.runtime.StandaloneHerder` running datagen → transport → null sink,
   ByteArray converters), produce and consume at once, clock from the herder's start
   (group joins included) to the sink's last record.

The api loop produces first and consumes after, so its end-to-end rate is
``records / (produce seconds + consume seconds)``; the raw loop and the runtime overlap
both. The runtime's Kafka driver is the default (``auto``: confluent-kafka when
installed). Prints
records/s of each, the ratios api/raw and runtime/raw (target for the runtime: >= 0.9),
the peak RSS of each child and the machine's load average; the last line is one JSON
object with those figures.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

TRANSPORTS = ("embedded", "kafka", "rabbitmq", "pulsar", "redis", "nats")
CLIENT_MODULES = {"kafka": "kafka", "rabbitmq": "pika", "pulsar": "pulsar", "redis": "redis",
                  "nats": "nats"}
RAW_CLIENT = {"embedded": "embedded transport API (send_batch/poll_batch)",
              "kafka": "confluent-kafka", "rabbitmq": "pika", "pulsar": "pulsar-client",
              "redis": "redis-py", "nats": "nats-py"}
SECOND_CLIENT = {"kafka": "kafka-python"}
"""A second raw client measured beside the first, where the transport has two drivers."""
KAFKA_GROUP_OPTIONS = {"consumer.session.timeout.ms": 3000,
                       "consumer.heartbeat.interval.ms": 500}
"""Tansu lets a lone group member in after about half the session timeout: keep it short."""


def _sequential(produce_per_s: float, consume_per_s: float, records: int) -> dict[str, Any]:
    """Figures of a produce-then-consume loop from its two rates."""
    seconds = records / produce_per_s + records / consume_per_s
    return {"produce_per_s": produce_per_s, "consume_per_s": consume_per_s,
            "records_per_s": records / seconds}


def worker_options(transport: str, url: str) -> dict[str, object]:
    """The runtime's worker options for ``transport`` at ``url``, with the settings the
    raw and api loops use (one partition; Shared subscription and batching on Pulsar;
    a classic queue with the null sink's group declared on RabbitMQ).
    """
    if transport == "kafka":
        return {"kafka.bootstrap.servers": url,
                **{f"kafka.{k}": v for k, v in KAFKA_GROUP_OPTIONS.items()}}
    if transport == "rabbitmq":
        return {"rabbitmq.url": url, "rabbitmq.prefetch": 1000,
                "rabbitmq.declare.groups": "connect-devnull"}
    if transport == "pulsar":
        return {"pulsar.service.url": url, "pulsar.subscription.type": "Shared",
                "pulsar.max.pending.messages": 10_000}
    if transport == "redis":
        return {"redis.url": url}
    if transport == "nats":
        return {"nats.servers": url}
    return {}


def run_child(mode: str, args: argparse.Namespace) -> dict[str, Any]:
    """One measurement in this process (``--child``); returns its figures."""
    import pipeline

    from omconnect.runtime import tune_gc

    tune_gc()  # every child alike: the worker's collector thresholds
    args.profile = None
    args.worker_options = worker_options(args.transport, args.url)
    if mode == "runtime":
        figures = pipeline.run_runtime(args)
        figures.pop("thread_cpu_seconds", None)
        return figures
    if mode in ("raw", "raw-second"):
        return {**_raw_concurrent(mode, args), "peak_rss_mib": pipeline.peak_rss_mib()}
    if args.transport == "embedded":  # its transport API is its raw client
        return pipeline.run_raw(args)
    if args.transport == "kafka":
        import transports_kafka

        topic = transports_kafka.fresh_topic(args.url, 1)
        (produce, _), (consume, _) = transports_kafka.omconnect(args.url, topic, "confluent",
                                                               args)
    elif args.transport == "rabbitmq":
        import transports_rabbitmq

        produce, consume = transports_rabbitmq.omconnect(args.url, args)
    elif args.transport == "redis":
        import transports_redis

        produce, consume = transports_redis.omconnect(args.url, args)
    elif args.transport == "nats":
        import transports_nats
        from omconnect_nats import NatsTransport

        transport = NatsTransport({"servers": args.url})
        try:
            produce, consume = transports_nats.per_message(transport, args)
        finally:
            transport.close()
    else:
        import transports_pulsar

        produce, consume = transports_pulsar.omconnect(args.url, args)
    return {**_sequential(produce, consume, args.records),
            "peak_rss_mib": pipeline.peak_rss_mib()}


def _raw_concurrent(mode: str, args: argparse.Namespace) -> dict[str, Any]:
    """The raw client producing and consuming at once (``raw_concurrent``); for Kafka
    ``raw`` is confluent-kafka and ``raw-second`` kafka-python.
    """
    import raw_concurrent

    if args.transport == "embedded":
        return raw_concurrent.embedded(args)
    if args.transport == "kafka":
        import transports_kafka

        topic = transports_kafka.fresh_topic(args.url, 1)
        loop = raw_concurrent.kafka_confluent if mode == "raw" else raw_concurrent.kafka_python
        return loop(args.url, topic, args)
    if args.transport == "rabbitmq":
        return raw_concurrent.rabbitmq_pika(args.url, args)
    if args.transport == "redis":
        return raw_concurrent.redis_py(args.url, args)
    if args.transport == "nats":
        return raw_concurrent.nats_py(args.url, args)
    return raw_concurrent.pulsar_client(args.url, args)


class _Broker:
    """The transport's test broker, started with its launcher; ``url`` is what its
    clients connect to (empty for the embedded transport).
    """

    def __init__(self, transport: str, workdir: Path) -> None:
        self.handle: Any = None
        self.url = ""
        if transport == "kafka":
            from omconnect_testbrokers.kafka import start_broker

            self.handle = start_broker(workdir / "tansu")
        elif transport == "rabbitmq":
            from omconnect_testbrokers.rabbitmq import ensure_server_running, start_broker

            ensure_server_running()
            self.handle = start_broker(workdir)
        elif transport == "pulsar":
            from omconnect_testbrokers.pulsar import start_broker

            self.handle = start_broker(workdir / "pulsar-lite")
        elif transport == "redis":
            from omconnect_testbrokers.redis import start_broker as start_redis

            self.handle = start_redis(workdir / "redis")
        elif transport == "nats":
            from omconnect_testbrokers.nats import start_broker as start_nats

            self.handle = start_nats(workdir / "nats-server")
        if self.handle is not None:
            self.url = self.handle.url

    def stop(self) -> None:
        if self.handle is not None:
            self.handle.stop()


def _missing_client(transport: str) -> str | None:
    module = CLIENT_MODULES.get(transport)
    if module and importlib.util.find_spec(module) is None:
        return f"{module} is not installed (pip install 'omconnect[{transport}]')"
    return None


def _spawn(mode: str, transport: str, url: str, args: argparse.Namespace,
           workdir: Path) -> dict[str, Any]:
    command = [sys.executable, __file__, "--child", mode, "--transport", transport,
               "--url", url, "--workdir", str(workdir), "--records", str(args.records),
               "--size", str(args.size), "--batch", str(args.batch)]
    done = subprocess.run(command, capture_output=True, text=True, check=False,
                          stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        raise RuntimeError(f"{transport} {mode} run failed:\n{done.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def measure(transport: str, args: argparse.Namespace) -> dict[str, Any]:
    """Raw, api and runtime figures of one transport (its broker started and stopped)."""
    workdir = Path(tempfile.mkdtemp(prefix=f"omc-bench-{transport}-"))
    broker = _Broker(transport, workdir)
    try:
        load = os.getloadavg()[0]
        raw = _spawn("raw", transport, broker.url, args, workdir / "raw")
        second = _spawn("raw-second", transport, broker.url, args, workdir / "raw-second") \
            if transport in SECOND_CLIENT else None
        api = _spawn("api", transport, broker.url, args, workdir / "api")
        runtime = _spawn("runtime", transport, broker.url, args, workdir / "runtime")
    finally:
        broker.stop()
        shutil.rmtree(workdir, ignore_errors=True)
    figures: dict[str, Any] = {"raw_client": RAW_CLIENT[transport],
                               "load_average": round(load, 2)}
    for name, run in (("raw", raw), ("api", api), ("runtime", runtime)):
        figures[f"{name}_records_per_s"] = round(run["records_per_s"])
        for way in ("produce_per_s", "consume_per_s"):
            if way in run:
                figures[f"{name}_{way}"] = round(run[way])
        figures[f"{name}_peak_rss_mib"] = round(run["peak_rss_mib"], 1)
    if second is not None:
        figures["raw_second_client"] = SECOND_CLIENT[transport]
        figures["raw_second_records_per_s"] = round(second["records_per_s"])
        figures["runtime_ratio_to_second"] = round(
            runtime["records_per_s"] / second["records_per_s"], 3)
    figures["api_ratio"] = round(api["records_per_s"] / raw["records_per_s"], 3)
    figures["runtime_ratio"] = round(runtime["records_per_s"] / raw["records_per_s"], 3)
    return figures


def _show(transport: str, f: dict[str, Any]) -> None:
    def rate(name: str) -> str:
        ways = (f" (produce {f[name + '_produce_per_s']:,}/s, consume "
                f"{f[name + '_consume_per_s']:,}/s)" if name + "_produce_per_s" in f else "")
        return (f"{f[name + '_records_per_s']:>9,} records/s{ways}, peak RSS "
                f"{f[name + '_peak_rss_mib']:.0f} MiB")

    print(f"{transport} (raw client: {f['raw_client']}; load {f['load_average']:.2f})")
    print(f"  raw     {rate('raw')}")
    if "raw_second_client" in f:
        print(f"  raw ({f['raw_second_client']}) {f['raw_second_records_per_s']:>9,} records/s; "
              f"runtime ratio to it {f['runtime_ratio_to_second']:.2f}")
    print(f"  api     {rate('api')}  ratio {f['api_ratio']:.2f}")
    print(f"  runtime {rate('runtime')}  ratio {f['runtime_ratio']:.2f} (target >= 0.9)")


def main() -> None:
    """Measure each chosen transport and print the figures; last line JSON."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--transport", default=",".join(TRANSPORTS),
                        help="comma-separated transports (default: all)")
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--size", type=int, default=100)
    parser.add_argument("--batch", type=int, default=2000)
    parser.add_argument("--child", choices=("raw", "raw-second", "api", "runtime"),
                        help=argparse.SUPPRESS)
    parser.add_argument("--url", default="", help=argparse.SUPPRESS)
    parser.add_argument("--workdir", help=argparse.SUPPRESS)
    args = parser.parse_args()
    # What the reused loops read from their own scripts' options.
    args.prefetch, args.streams, args.subscription, args.partitions = 1000, False, "Shared", 1
    if args.child:
        Path(args.workdir).mkdir(parents=True, exist_ok=True)
        print(json.dumps(run_child(args.child, args)))
        return
    chosen = [name.strip() for name in args.transport.split(",") if name.strip()]
    unknown = sorted(set(chosen) - set(TRANSPORTS))
    if unknown:
        parser.error(f"--transport: unknown {unknown}; choose from {', '.join(TRANSPORTS)}")
    load = os.getloadavg()
    print(f"records={args.records:,} size={args.size} batch={args.batch} "
          f"cpus={os.cpu_count()} load={load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    results: dict[str, Any] = {}
    skipped: dict[str, str] = {}
    started = time.perf_counter()
    for transport in chosen:
        reason = _missing_client(transport)
        if reason is None:
            try:
                results[transport] = measure(transport, args)
            except Exception as exc:  # a broker that cannot start here is reported
                reason = f"{type(exc).__name__}: {str(exc).strip()[-500:]}"
        if reason is not None:
            skipped[transport] = reason
            print(f"{transport}: skipped: {reason}")
            continue
        _show(transport, results[transport])
    end_load = os.getloadavg()[0]
    print(f"load {load[0]:.2f} -> {end_load:.2f}; {time.perf_counter() - started:.0f} s")
    print(json.dumps({"benchmark": "transports", "records": args.records, "size": args.size,
                      "batch": args.batch, "cpus": os.cpu_count(),
                      "load_average": round(load[0], 2),
                      "load_average_end": round(end_load, 2),
                      "transports": results, "skipped": skipped}))


if __name__ == "__main__":
    main()
