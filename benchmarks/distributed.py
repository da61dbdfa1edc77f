"""A cluster of worker processes: throughput on 1, 2 and 3 workers, and failover time.

Usage::

    python benchmarks/distributed.py [--transport embedded] [--seconds 20]
        [--warmup 8] [--kills 3] [--session-ms 3000]

Every measurement runs real ``omconnect distributed`` processes (one per worker) on the
embedded transport (one data directory shared by the processes; ``--transport kafka``
starts a Tansu broker, ``rabbitmq`` a vhost of the local server):

1. **throughput** — for 1, 2 and 3 workers, a fresh cluster runs a 6-task data generator
   (``quickstart=payload``, 100-byte values, as fast as it can) → a 6-partition topic →
   a 6-task null sink; after ``--warmup`` seconds the records the sink tasks were handed
   are counted over ``--seconds`` seconds through ``GET /summary`` (every worker's tasks).
   The baseline is the same pipeline in one ``omconnect standalone`` process; each
   figure is also given as a ratio to it.
2. **failover** — on the 3-worker cluster (``scheduled.rebalance.max.delay.ms=0``), the
   worker running the most tasks is SIGKILLed ``--kills`` times (started again in
   between); ``failover_s`` is the time from the kill until every one of its tasks runs
   on another worker (as a live worker's status says), with the group session timeout
   ``--session-ms``.

The load average is read before and after (the machine is shared). The last line is one
JSON object with the figures.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from omconnect.testing.cluster import ProcessCluster, task_placement
from omconnect.testing.processes import free_port, terminate_process_group
from omconnect.testing.waiting import eventually

TASKS = 6
PIPELINE = {
    "gen": {"connector.class": "datagen", "quickstart": "payload", "payload.size": 100,
            "topic": "bench", "tasks.max": TASKS, "topic.creation.default.partitions": TASKS,
            "value.converter": "bytearray", "key.converter": "bytearray"},
    "devnull": {"connector.class": "null", "topics": "bench", "tasks.max": TASKS,
                "value.converter": "bytearray", "key.converter": "bytearray"},
}


def transport_settings(kind: str, workdir: Path, session_ms: int) -> tuple[dict[str, Any],
                                                                         Any]:
    """Worker settings for ``kind`` (and a broker handle to stop, if one was started)."""
    if kind == "embedded":
        return {"transport": "embedded", "embedded.path": str(workdir / "data"),
                "embedded.session.timeout.ms": session_ms,
                "embedded.heartbeat.interval.ms": max(100, session_ms // 10)}, None
    if kind == "kafka":
        from omconnect_testbrokers.kafka import start_broker as start_tansu

        broker: Any = start_tansu(workdir / "tansu")
        return {"transport": "kafka", "kafka.bootstrap.servers": broker.url,
                "kafka.consumer.session.timeout.ms": session_ms,
                "kafka.consumer.heartbeat.interval.ms": max(100, session_ms // 6)}, broker
    if kind == "rabbitmq":
        from omconnect_testbrokers.rabbitmq import ensure_server_running
        from omconnect_testbrokers.rabbitmq import start_broker as start_vhost

        ensure_server_running()
        vhost: Any = start_vhost()
        return {"transport": "rabbitmq", "rabbitmq.url": vhost.url,
                "rabbitmq.session.timeout.ms": session_ms,
                "rabbitmq.heartbeat.interval.ms": max(100, session_ms // 10)}, vhost
    raise SystemExit(f"unknown transport {kind!r}: embedded, kafka or rabbitmq")


def sink_records(summary: dict[str, Any]) -> int:
    """Records handed to the null sink's tasks, on every worker."""
    return sum(int(c["records"]) for c in summary["connectors"] if c["name"] == "devnull")


def measure_rate(read: Any, warmup: float, seconds: float) -> float:
    """Sink records/s over ``seconds`` after ``warmup``, from ``read()`` summaries."""
    time.sleep(warmup)
    first = read()
    time.sleep(seconds)
    second = read()
    return float(sink_records(second) - sink_records(first)) / float(
        second["taken_at"] - first["taken_at"])


def cluster_rate(workers: int, settings: dict[str, Any], workdir: Path,
                 args: argparse.Namespace) -> float:
    """Records/s of the pipeline on a fresh cluster of ``workers`` processes."""
    workdir.mkdir(parents=True)
    with ProcessCluster(workdir, {**settings, "scheduled.rebalance.max.delay.ms": 0},
                        size=workers, group=f"bench-{workers}") as cluster:
        cluster.start_all()
        for name, config in PIPELINE.items():
            cluster.create(0, name, config)
        eventually(lambda: all(len(task_placement(cluster.status(0, n))) == TASKS
                               for n in PIPELINE), 120, "the pipeline's tasks placed")
        return measure_rate(lambda: cluster.get(0, "/summary"), args.warmup, args.seconds)


def standalone_rate(settings: dict[str, Any], workdir: Path,
                    args: argparse.Namespace) -> float:
    """Records/s of the pipeline in one ``omconnect standalone`` process."""
    workdir.mkdir(parents=True)
    files = [workdir / "worker.properties"]
    files[0].write_text("".join(f"{k}={v}\n" for k, v in settings.items()))
    for name, config in PIPELINE.items():
        path = workdir / f"{name}.properties"
        path.write_text("".join(f"{k}={v}\n" for k, v in {"name": name, **config}.items()))
        files.append(path)
    port = free_port()
    with (workdir / "worker.log").open("ab") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "omconnect.cli", "standalone", *map(str, files),
             "--rest-port", str(port), "--status-interval", "0"],
            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            start_new_session=True, cwd=workdir)
    url = f"http://127.0.0.1:{port}"
    try:
        eventually(lambda: _get(url, "/health", quiet=True) is not None, 120,
                   "the standalone worker's REST API")
        return measure_rate(lambda: _get(url, "/summary"), args.warmup, args.seconds)
    finally:
        terminate_process_group(process, 60)


def _get(url: str, path: str, *, quiet: bool = False) -> Any:
    import urllib.request

    try:
        with urllib.request.urlopen(url + path, timeout=30) as response:
            return json.loads(response.read())
    except OSError:
        if quiet:
            return None
        raise


def failover(settings: dict[str, Any], workdir: Path, args: argparse.Namespace
             ) -> list[float]:
    """Seconds from a SIGKILL until every task of the killed worker runs elsewhere."""
    workdir.mkdir(parents=True)
    times: list[float] = []
    with ProcessCluster(workdir, {**settings, "scheduled.rebalance.max.delay.ms": 0},
                        size=3, group="bench-failover") as cluster:
        cluster.start_all()
        for name, config in PIPELINE.items():
            cluster.create(0, name, {**config, "rate": 2000} if name == "gen" else config)
        for _ in range(args.kills):
            live = cluster.live()
            placement = eventually(functools.partial(_placed, cluster, live), 120,
                                   "tasks running")
            assert placement is not None
            owners = [w for p in placement.values() for _, w in p.values()]
            victim = max(live, key=lambda i: owners.count(cluster.worker_id(i)))
            survivors = [i for i in live if i != victim]
            killed = time.monotonic()
            cluster.kill(victim)
            eventually(functools.partial(_placed, cluster, survivors), 120,
                       "the victim's tasks running elsewhere", interval=0.05)
            times.append(time.monotonic() - killed)
            print(f"failover: worker {cluster.worker_id(victim)} ran "
                  f"{owners.count(cluster.worker_id(victim))} tasks; all running "
                  f"elsewhere after {times[-1]:.2f} s", flush=True)
            cluster.start(victim)
            cluster.wait_ready(victim)
    return times


def _placed(cluster: ProcessCluster, workers: list[int]
            ) -> dict[str, dict[int, tuple[str, str]]] | None:
    """Every task of the pipeline RUNNING on ``workers`` (as the first of them says)."""
    ids = {cluster.worker_id(i) for i in workers}
    seen = {n: task_placement(cluster.status(workers[0], n)) for n in PIPELINE}
    ok = all(len(p) == TASKS and all(s == "RUNNING" and w in ids for s, w in p.values())
             for p in seen.values())
    return seen if ok else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--transport", default="embedded",
                        choices=["embedded", "kafka", "rabbitmq"])
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--warmup", type=float, default=8.0)
    parser.add_argument("--kills", type=int, default=3)
    parser.add_argument("--session-ms", type=int, default=3000)
    args = parser.parse_args()
    load_before = os.getloadavg()
    workdir = Path(tempfile.mkdtemp(prefix="omconnect-distributed-bench-"))
    settings, broker = transport_settings(args.transport, workdir, args.session_ms)
    settings.update({"offset.flush.interval.ms": 2000})
    try:
        baseline = standalone_rate({**settings, "embedded.path": str(workdir / "standalone")}
                                   if args.transport == "embedded" else settings,
                                   workdir / "standalone-run", args)
        print(f"standalone (1 process): {baseline:,.0f} records/s", flush=True)
        rates: dict[str, float] = {}
        for workers in (1, 2, 3):
            run_settings = dict(settings)
            if args.transport == "embedded":
                run_settings["embedded.path"] = str(workdir / f"data-{workers}")
            rates[str(workers)] = cluster_rate(workers, run_settings,
                                               workdir / f"cluster-{workers}", args)
            print(f"cluster of {workers} worker process(es): {rates[str(workers)]:,.0f} "
                  f"records/s ({rates[str(workers)] / baseline:.2f} x standalone)",
                  flush=True)
        fail_settings = dict(settings)
        if args.transport == "embedded":
            fail_settings["embedded.path"] = str(workdir / "data-failover")
        times = failover(fail_settings, workdir / "failover", args)
    finally:
        if broker is not None:
            broker.stop()
    load_after = os.getloadavg()
    print(f"load average before {load_before[0]:.2f}, after {load_after[0]:.2f} "
          f"({os.cpu_count()} CPUs)")
    print(json.dumps({
        "benchmark": "distributed", "transport": args.transport,
        "tasks": TASKS, "seconds": args.seconds,
        "standalone_records_per_s": round(baseline),
        "cluster_records_per_s": {k: round(v) for k, v in rates.items()},
        "ratio_to_standalone": {k: round(v / baseline, 3) for k, v in rates.items()},
        "failover_s": [round(t, 2) for t in times],
        "failover_s_median": round(sorted(times)[len(times) // 2], 2) if times else None,
        "session_timeout_s": args.session_ms / 1000, "rebalance_delay_s": 0,
        "load_average": {"before": round(load_before[0], 2),
                         "after": round(load_after[0], 2)},
        "cpus": os.cpu_count()}))


if __name__ == "__main__":
    main()
