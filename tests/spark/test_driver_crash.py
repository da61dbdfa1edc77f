"""Killing the driver mid-batch: the restarted query's output holds every source record
exactly once (read through Spark, which honours the sink's ``_spark_metadata`` log).
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from spark_helpers import create_topic, embedded, produce, values_of
from spark_support import spark_environment

pytestmark = pytest.mark.spark

HERE = Path(__file__).parent
KILLS = 3


def start_query(data: Path, out: Path, checkpoint: Path, log: Path) -> subprocess.Popen[bytes]:
    env = dict(os.environ, **spark_environment(), PYTHONUNBUFFERED="1")
    with log.open("ab") as sink:
        return subprocess.Popen(
            [sys.executable, str(HERE / "streaming_query.py"), str(data), str(out),
             str(checkpoint)], stdout=sink, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            env=env, start_new_session=True)  # its own group: the JVM dies with it


def wait_for(log: Path, word: str, process: subprocess.Popen[bytes], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while word not in log.read_text(errors="replace").split():
        if process.poll() is not None:
            pytest.fail(f"the query process exited ({process.returncode}) before {word}:\n"
                        + log.read_text(errors="replace")[-3000:])
        if time.monotonic() > deadline:
            pytest.fail(f"no {word} within {timeout} s:\n"
                        + log.read_text(errors="replace")[-3000:])
        time.sleep(0.1)


def batch_in_flight(checkpoint: Path) -> bool:
    """Whether the last batch in the offset log has no commit-log entry."""
    def batch_ids(name: str) -> set[int]:
        folder = checkpoint / name
        return {int(p.name) for p in folder.iterdir() if p.name.isdigit()} if folder.exists() \
            else set()

    offsets = batch_ids("offsets")
    return bool(offsets) and max(offsets) > max(batch_ids("commits"), default=-1)


def test_killing_the_driver_mid_batch_loses_and_duplicates_nothing(spark, tmp_path):
    data, out, checkpoint = tmp_path / "data", tmp_path / "out", tmp_path / "checkpoint"
    log = tmp_path / "query.log"
    seed = random.randrange(1 << 30)
    chance = random.Random(seed)
    with embedded(data) as transport:
        create_topic(transport, "orders", 2)
        produce(transport, "orders", range(5000))
    produced = 5000
    kills = attempts = 0
    while kills < KILLS:
        attempts += 1
        assert attempts <= 3 * KILLS, f"only {kills} kills landed mid-batch (seed {seed})"
        query = start_query(data, out, checkpoint, log)
        try:
            wait_for(log, "STARTED", query, timeout=240)
            time.sleep(chance.uniform(1.0, 4.0))
        finally:
            if query.poll() is None:
                os.killpg(query.pid, signal.SIGKILL)
            query.wait(timeout=60)
        if query.returncode == -signal.SIGKILL and batch_in_flight(checkpoint):
            kills += 1
        with embedded(data) as transport:  # the topic keeps growing between runs
            produce(transport, "orders", range(produced, produced + 300))
        produced += 300
    query = start_query(data, out, checkpoint, log)
    assert query.wait(timeout=600) == 0, log.read_text(errors="replace")[-3000:]
    assert "DONE" in log.read_text().split()
    table = spark.read.parquet(str(out))
    assert values_of(table.select("value").collect()) == list(range(produced)), f"seed {seed}"
    assert table.select("partition", "offset").distinct().count() == produced
