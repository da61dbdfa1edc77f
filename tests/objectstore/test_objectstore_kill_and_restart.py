"""``omconnect standalone`` reading a directory onto the embedded transport, killed with
SIGKILL while it is inside objects and restarted, loses no record and duplicates only
records whose offsets were not committed when it was killed: JSON lines (records) and
Parquet (Arrow batches of 200 rows on the columnar path, each batch's offset committed
once all its rows are acknowledged).
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from omconnect.records import TopicPartition
from omconnect.runtime import StandaloneHerder
from omconnect.runtime.worker_config import WorkerConfig
from omconnect.transport.embedded import EmbeddedTransport

OBJECTS = 20
LINES = 3000
TRIALS = 6
OMCONNECT = [sys.executable, "-m", "omconnect.cli"]


def _write_configs(workdir: Path, input_format: str) -> tuple[dict[str, str], list[str]]:
    worker = {"transport": "embedded", "embedded.path": str(workdir / "data"),
              "offset.flush.interval.ms": "100", "key.converter": "string",
              "value.converter": "json", "value.converter.schemas.enable": "false",
              "source.max.in.flight.records": "2000"}
    source = {"name": "objects", "connector.class": "objectstore-source",
              "objectstore.url": (workdir / "in").as_uri(), "topic": "lines",
              "input.format": input_format, "max.poll.records": "200",
              "parquet.batch.size": "200"}
    paths = []
    for name, settings in (("worker", worker), ("source", source)):
        path = workdir / f"{name}.properties"
        path.write_text("".join(f"{k}={v}\n" for k, v in settings.items()))
        paths.append(str(path))
    return worker, paths


def _topic(workdir: Path) -> list[tuple[int, int]]:
    """(object, line) of every message of the topic, in order."""
    with EmbeddedTransport({"path": str(workdir / "data")}) as transport:
        if "lines" not in transport.admin().list_topics():
            return []
        consumer = transport.consumer()
        consumer.assign([TopicPartition("lines", 0)])
        out: list[tuple[int, int]] = []
        while batch := consumer.poll(50_000, 0.2):
            out += [(v["object"], v["line"]) for v in (json.loads(m.value) for m in batch)]
        consumer.close()
    return out


def _size(workdir: Path) -> int:
    with EmbeddedTransport({"path": str(workdir / "data")}) as transport:
        if "lines" not in transport.admin().list_topics():
            return 0
        consumer = transport.consumer()
        try:
            return consumer.offset_range(TopicPartition("lines", 0))[1]
        finally:
            consumer.close()


def _committed(worker: dict[str, str], worker_file: str) -> dict[int, int]:
    """Records committed per object (the source offsets a restart resumes from), read
    from the namespaces of the worker that ran from ``worker_file``.
    """
    herder = StandaloneHerder(WorkerConfig.parse(worker, origin=worker_file))
    herder.open()
    try:
        return {int(o["partition"]["object"][5:7]): int(o["offset"]["records"])
                for o in herder.offsets("objects").offsets}
    finally:
        herder.stop()


def _write_objects(directory: Path, input_format: str) -> None:
    directory.mkdir(exist_ok=True)
    for n in range(OBJECTS):
        if input_format == "jsonl":
            lines = "".join(json.dumps({"object": n, "line": i}) + "\n" for i in range(LINES))
            (directory / f"part-{n:02d}.jsonl").write_text(lines)
        else:
            pa = pytest.importorskip("pyarrow")
            pq = pytest.importorskip("pyarrow.parquet")
            table = pa.table({"object": pa.array([n] * LINES, pa.int64()),
                              "line": pa.array(range(LINES), pa.int64())})
            pq.write_table(table, directory / f"part-{n:02d}.parquet", row_group_size=1000)


@pytest.mark.slow
@pytest.mark.parametrize("input_format", ["jsonl", "parquet"])
def test_sigkill_mid_object_then_restart_loses_nothing_duplicates_only_uncommitted(
        tmp_path, input_format):
    rng = random.Random(20240917)
    _write_objects(tmp_path / "in", input_format)
    worker, paths = _write_configs(tmp_path, input_format)
    log = tmp_path / "worker.log"
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    windows: list[tuple[dict[int, int], dict[int, int]]] = []  # (committed, written) per kill
    for _ in range(TRIALS):
        before = _size(tmp_path)
        with log.open("ab") as err:
            process = subprocess.Popen([*OMCONNECT, "standalone", *paths],
                                       stdout=subprocess.DEVNULL, stderr=err,
                                       stdin=subprocess.DEVNULL, env=env)
        deadline = time.monotonic() + 60
        while _size(tmp_path) <= before and process.poll() is None:  # records moving
            assert time.monotonic() < deadline, log.read_text()[-3000:]
            time.sleep(0.01)
        time.sleep(rng.uniform(0.0, 0.4))
        process.send_signal(signal.SIGKILL)
        process.wait(30)
        written: dict[int, int] = {}
        for obj, line in _topic(tmp_path):
            written[obj] = max(written.get(obj, 0), line + 1)
        windows.append((_committed(worker, paths[0]), written))
    # a kill landed inside an object: committed part way through it
    assert any(0 < c < LINES for committed, _ in windows for c in committed.values()), windows
    final = subprocess.run([*OMCONNECT, "standalone", *paths, "--stop-when-idle", "3"],
                           capture_output=True, text=True, timeout=300,
                           stdin=subprocess.DEVNULL, env=env, check=False)
    assert final.returncode == 0, final.stderr[-3000:]

    got = _topic(tmp_path)
    counts = Counter(got)
    assert set(counts) == {(n, i) for n in range(OBJECTS) for i in range(LINES)}, "lost"
    for (obj, line), count in counts.items():
        # each kill may re-deliver what was written but not committed before it
        allowed = 1 + sum(1 for committed, written in windows
                          if committed.get(obj, 0) <= line < written.get(obj, 0))
        assert count <= allowed, ((obj, line), count, allowed)
    # per object the topic holds its lines in order, re-deliveries jumping back only
    for obj in range(OBJECTS):
        lines = [line for o, line in got if o == obj]
        furthest = -1
        for previous, line in zip([-1, *lines], lines, strict=False):
            assert line == previous + 1 or line <= furthest, (obj, previous, line)
            furthest = max(furthest, line)
    assert _committed(worker, paths[0]) == dict.fromkeys(range(OBJECTS), LINES)
    print(f"{len(got) - OBJECTS * LINES} duplicate records after {TRIALS} kills")
