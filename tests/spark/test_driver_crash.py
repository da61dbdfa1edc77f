"""Killing the driver mid-batch: the restarted query's output holds every source record
exactly once on a replayable transport (embedded, RabbitMQ stream topics), as docs/spark.md
says (read through Spark, which honours the sink's ``_spark_metadata`` log).

Pulsar is not run here: a group read is at-least-once by design, and pulsar-lite never
hands a killed consumer's unacknowledged messages to the next one (pinned in
tests/pulsar/test_pulsar_lite_defects.py).
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import attrs
import pytest
from spark_helpers import create_topic, produce
from spark_support import spark_environment

from omconnect.runtime.worker_config import WorkerConfig
from omconnect.transport.spi import Transport

pytestmark = pytest.mark.spark

HERE = Path(__file__).parent
KILLS = 3


def start_query(options: dict[str, str], out: Path, checkpoint: Path, log: Path
                ) -> subprocess.Popen[bytes]:
    env = dict(os.environ, **spark_environment(), PYTHONUNBUFFERED="1",
               # Each run starts a JVM and Python workers that import pyspark, pandas and
               # pyarrow; bytecode cached across the runs keeps those imports quick.
               PYTHONPYCACHEPREFIX=str(checkpoint.parent / "pycache"))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    with log.open("ab") as sink:
        return subprocess.Popen(
            [sys.executable, str(HERE / "streaming_query.py"), json.dumps(options), str(out),
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


@attrs.frozen
class Source:
    """A transport for the query to read, and the partitions of its topic."""

    options: dict[str, str]
    partitions: int

    def open(self) -> Transport:
        worker = {k: v for k, v in self.options.items() if k != "groupId"}
        return WorkerConfig.parse(worker).open_transport()


@pytest.fixture(params=["embedded", "rabbitmq-streams"])
def source(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Source]:
    """The transport the query reads, with a two-partition topic."""
    kind = request.param
    if kind == "embedded":
        options = {"transport": "embedded", "embedded.path": str(tmp_path / "data")}
        yield Source(options, partitions=2)
        return
    testing = pytest.importorskip("omconnect_testbrokers.rabbitmq")
    testing.ensure_server_running()
    broker = testing.start_broker()  # RabbitMQ: stream topics, its default
    try:
        yield Source({"transport": "rabbitmq", "rabbitmq.url": broker.url}, partitions=2)
    finally:
        broker.stop()


def test_killing_the_driver_mid_batch_keeps_the_delivery_guarantee(spark, tmp_path, source):
    out, checkpoint = tmp_path / "out", tmp_path / "checkpoint"
    log = tmp_path / "query.log"
    seed = random.randrange(1 << 30)
    chance = random.Random(seed)
    with source.open() as transport:
        create_topic(transport, "orders", source.partitions)
        produce(transport, "orders", range(3000))
    produced = 3000
    kills = attempts = 0
    while kills < KILLS:
        attempts += 1
        assert attempts <= 3 * KILLS, f"only {kills} kills landed mid-batch (seed {seed})"
        planned = max(batch_ids(checkpoint, "offsets"), default=-1)
        query = start_query(source.options, out, checkpoint, log)
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
        with source.open() as transport:  # the topic keeps growing between runs
            produce(transport, "orders", range(produced, produced + 300))
        produced += 300
    query = start_query(source.options, out, checkpoint, log)
    assert query.wait(timeout=600) == 0, log.read_text(errors="replace")[-3000:]
    assert "DONE" in log.read_text().split()
    table = spark.read.parquet(str(out))
    values = [json.loads(bytes(row.value))["id"] for row in table.select("value").collect()]
    assert sorted(set(values)) == list(range(produced)), \
        f"{produced - len(set(values))} records lost (seed {seed})"
    assert sorted(values) == list(range(produced)), \
        f"{len(values) - len(set(values))} duplicates (seed {seed})"
    assert table.select("partition", "offset").distinct().count() == produced
