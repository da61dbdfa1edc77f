"""The file connectors end to end on the default converters: file source → JSON →
embedded transport → JSON → file sink, on the columnar path and on the per-record one.

Writes ``--records`` lines of ``--size`` bytes, then runs a worker (a
:class:`~omconnect.runtime.StandaloneHerder`, as ``omconnect standalone`` runs one) with
the two connectors and the worker's default converters (JSON, schemas enabled) until the
sink's file holds every line, once with ``columnar.enable=true`` and once with ``false``,
alternating ``--repeat`` times, each in a fresh data directory. Rates are lines per
second of wall clock and of the process's CPU time (all threads), best of the runs; the
output is checked to be the input. The last line is one JSON object with the figures.

Usage: python benchmarks/file_pipeline.py [--records 500000] [--size 100] [--repeat 2]
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

from omconnect.runtime import StandaloneHerder


def _run(directory: Path, source: Path, records: int, columnar: bool) -> tuple[float, float]:
    sink = directory / "out.txt"
    worker = {"transport": "embedded", "embedded.path": str(directory / "data"),
              "columnar.enable": str(columnar).lower(), "offset.flush.interval.ms": 1000}
    wall, cpu = time.perf_counter(), time.process_time()
    with StandaloneHerder(worker) as herder:
        herder.create_connector({"name": "lines", "connector.class": "FileStreamSource",
                                 "file": str(source), "topic": "lines", "batch.size": 2000})
        herder.create_connector({"name": "copy", "connector.class": "FileStreamSink",
                                 "file": str(sink), "topics": "lines"})
        size = source.stat().st_size
        while not sink.exists() or sink.stat().st_size < size:
            time.sleep(0.01)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    if sink.read_bytes() != source.read_bytes():
        raise SystemExit("the sink's file is not the source's")
    return records / wall, records / cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=500_000)
    parser.add_argument("--size", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    load = os.getloadavg()[0]
    best: dict[str, tuple[float, float]] = {}
    with tempfile.TemporaryDirectory() as work:
        source = Path(work) / "in.txt"
        source.write_bytes(b"".join(f"{i:09d} ".encode() + b"x" * (args.size - 11) + b"\n"
                                    for i in range(args.records)))
        for run in range(args.repeat):
            for columnar in (True, False):
                directory = Path(work) / f"run-{run}-{columnar}"
                directory.mkdir()
                wall, cpu = _run(directory, source, args.records, columnar)
                name = "columnar" if columnar else "per_record"
                old = best.get(name, (0.0, 0.0))
                best[name] = (max(old[0], wall), max(old[1], cpu))
    for name, (wall, cpu) in best.items():
        print(f"{name:>10}: {wall:>10,.0f} lines/s ({cpu:,.0f} per CPU-second)")
    print(json.dumps({
        "benchmark": "file_pipeline", "records": args.records, "size": args.size,
        "repeat": args.repeat, "load_average": round(load, 2),
        "columnar_lines_per_s": round(best["columnar"][0]),
        "per_record_lines_per_s": round(best["per_record"][0]),
        "columnar_lines_per_cpu_s": round(best["columnar"][1]),
        "per_record_lines_per_cpu_s": round(best["per_record"][1]),
        "ratio": round(best["columnar"][0] / best["per_record"][0], 2)}))


if __name__ == "__main__":
    main()
