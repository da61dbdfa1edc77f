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
    env = dict(os.environ, **spark_environment(), PYTHONUNBUFFERED="1",
               # Each run starts a JVM and Python workers that import pyspark, pandas and
               # pyarrow; bytecode cached across the runs keeps those imports quick.
               PYTHONPYCACHEPREFIX=str(checkpoint.parent / "pycache"))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    with log.open("ab") as sink:
        return subprocess.Popen(
            [sys.executable, str(HERE / "streaming_query.py"), str(data), str(out),
             str(checkpoint)], stdout=sink, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            env=env, start_new_session=True)  # its own group: the JVM dies with it


def batch_ids(checkpoint: Path, log: str) -> set[int]:
    """The batch ids in the checkpoint's ``offsets`` or ``commits`` log."""
    folder = checkpoint / log
    return {int(p.name) for p in folder.iterdir() if p.name.isdigit()} if folder.exists() \
        else set()


def batch_in_flight(checkpoint: Path) -> int | None:
    """The last batch in the offset log when it has no commit-log entry, else None."""
    offsets = batch_ids(checkpoint, "offsets")
    if offsets and max(offsets) > max(batch_ids(checkpoint, "commits"), default=-1):
        return max(offsets)
    return None


def wait_for_new_batch(checkpoint: Path, after: int, process: subprocess.Popen[bytes],
                       log: Path, timeout: float) -> int | None:
    """Wait until ``process`` plans a batch later than ``after`` and is still running it.

    Returns that batch's id, or None when the process exits first (the query finished).
    A batch left in flight by an earlier run does not count: the restarted query re-runs
    it without writing a new offset-log entry, so only a new entry shows this process is
    mid-batch.
    """
    deadline = time.monotonic() + timeout
    while process.poll() is None:
        batch = batch_in_flight(checkpoint)
        if batch is not None and batch > after:
            return batch
        if time.monotonic() > deadline:
            pytest.fail(f"no new batch within {timeout} s:\n"
                        + log.read_text(errors="replace")[-3000:])
        time.sleep(0.02)
    return None


def test_killing_the_driver_mid_batch_loses_and_duplicates_nothing(spark, tmp_path):
    data, out, checkpoint = tmp_path / "data", tmp_path / "out", tmp_path / "checkpoint"
    log = tmp_path / "query.log"
    seed = random.randrange(1 << 30)
    chance = random.Random(seed)
    with embedded(data) as transport:
        create_topic(transport, "orders", 2)
        produce(transport, "orders", range(3000))
    produced = 3000
    kills = attempts = 0
    while kills < KILLS:
        attempts += 1
        assert attempts <= 3 * KILLS, f"only {kills} kills landed mid-batch (seed {seed})"
        planned = max(batch_ids(checkpoint, "offsets"), default=-1)
        query = start_query(data, out, checkpoint, log)
        batch = None
        try:
            # Kill once this run has planned a batch of its own, after a random moment
            # (the batch's files may be half written), if the batch is still uncommitted;
            # if it committed meanwhile, aim at the next one.
            while (batch := wait_for_new_batch(checkpoint, planned, query, log, 240)) is not None:
                time.sleep(chance.uniform(0.0, 1.0))
                if batch_in_flight(checkpoint) == batch:
                    os.killpg(query.pid, signal.SIGKILL)
                    break
                planned = batch
        finally:
            if query.poll() is None:
                os.killpg(query.pid, signal.SIGKILL)
            query.wait(timeout=60)
        if query.returncode == -signal.SIGKILL and batch is not None \
                and batch_in_flight(checkpoint) == batch:
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
