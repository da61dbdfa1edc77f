"""Throughput of the file source's two polls: ``poll`` (a ``SourceRecord`` per line) and
``poll_batch`` (one Arrow batch of lines per poll, split by Arrow).

Writes ``--records`` lines of ``--size`` bytes to a temporary file, then has a started
task read all of them, once with each poll, alternating ``--repeat`` times; the rate is
lines per second of this process's CPU time (the task's reading, nothing else), best of
the runs. The last line is one JSON object with the figures.

Usage: python benchmarks/file_source.py [--records 1000000] [--size 100] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from omconnect_file.source import FileStreamSourceConnector

from omconnect.connector import OffsetStorageReader, SourceTaskContext


class _NoOffsets(OffsetStorageReader):
    def offsets(self, partitions: Any) -> dict[Any, Any]:
        return {}


class _Context(SourceTaskContext):
    @property
    def offset_storage_reader(self) -> OffsetStorageReader:
        return _NoOffsets()

    @property
    def configs(self) -> dict[str, str]:
        return {}


def _read_all(path: Path, records: int, batch_size: int, columnar: bool) -> float:
    connector = FileStreamSourceConnector()
    connector.start({"name": "bench", "file": str(path), "topic": "lines",
                     "batch.size": str(batch_size)})
    (config,) = connector.task_configs(1)
    task = connector.task_class()()
    task.initialize(_Context())
    task.start(config)
    poll: Callable[[], Any] = task.poll_batch if columnar else task.poll
    got = 0
    started = time.process_time()
    while got < records:
        polled = poll()
        got += len(polled) if polled else 0
    elapsed = time.process_time() - started
    task.stop()
    return records / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--size", type=int, default=100)
    parser.add_argument("--batch-size", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "lines.txt"
        line = b"x" * (args.size - 1) + b"\n"
        path.write_bytes(line * args.records)
        rates: dict[str, list[float]] = {"poll": [], "poll_batch": []}
        for _ in range(args.repeat):
            rates["poll"].append(_read_all(path, args.records, args.batch_size, False))
            rates["poll_batch"].append(_read_all(path, args.records, args.batch_size, True))
    best = {name: max(runs) for name, runs in rates.items()}
    for name, rate in best.items():
        print(f"{name:>10}: {rate:>12,.0f} lines per CPU-second")
    print(json.dumps({
        "benchmark": "file_source", "records": args.records, "size": args.size,
        "batch_size": args.batch_size, "repeat": args.repeat,
        "poll_lines_per_cpu_s": round(best["poll"]),
        "poll_batch_lines_per_cpu_s": round(best["poll_batch"]),
        "ratio": round(best["poll_batch"] / best["poll"], 2),
        "load_average": round(os.getloadavg()[0], 2)}))


if __name__ == "__main__":
    main()
