"""Stopping a task mid-object finishes within 5 s, closes the object and delivers what
was read; a worker stopped mid-object and started again delivers every record once.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
import uuid

from objectstore_helpers import config, start_task, write_jsonl

from omconnect.records import TopicPartition
from omconnect.runtime import StandaloneHerder
from omconnect.source_base.task import CLOSE_TIMEOUT
from omconnect.transport.memory import MemoryTransport


def _open_files(directory) -> dict[str, int]:
    """The files under ``directory`` this process has open, with their positions."""
    found = {}
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
            with open(f"/proc/self/fdinfo/{fd}") as info:
                position = int(info.readline().split()[1])
        except OSError:
            continue
        if target.startswith(str(directory)):
            found[target] = position
    return found


def test_stop_while_polling_returns_what_was_read_and_closes_the_object(tmp_path):
    write_jsonl(tmp_path / "big.jsonl", ({"line": i} for i in range(300_000)))
    task = start_task(config(tmp_path, input_format="jsonl", max_poll_records=1_000_000,
                             poll_timeout_ms=60_000))
    batches: list[list] = []
    polling = threading.Thread(target=lambda: batches.append(task.poll() or []))
    # The CPU-bound poll thread can starve this one, whose /proc reads each give up the
    # GIL (a convoy): it then saw the position only when the read was nearly done and
    # the poll ran to the end. A short switch interval lets it look in time.
    interval = sys.getswitchinterval()
    sys.setswitchinterval(0.0001)
    try:
        polling.start()
        deadline = time.monotonic() + 10
        while max(_open_files(tmp_path).values(), default=0) < 256 * 1024:
            assert time.monotonic() < deadline  # wait until the poll is well into the object
            assert polling.is_alive(), "the poll read the whole object before it was stopped"
            time.sleep(0.001)
        stopped = time.monotonic()
        task.stop()
    finally:
        sys.setswitchinterval(interval)
    polling.join(CLOSE_TIMEOUT)
    took = time.monotonic() - stopped
    assert not polling.is_alive() and took < CLOSE_TIMEOUT, took
    [batch] = batches
    assert 0 < len(batch) < 300_000  # what was read, delivered: stop cut the read short
    assert [r.value["line"] for r in batch] == list(range(len(batch)))
    assert _open_files(tmp_path) == {}
    assert task.poll() is None


def test_a_worker_stopped_mid_object_and_restarted_delivers_each_record_once(tmp_path):
    objects, lines = 20, 2000
    for n in range(objects):
        write_jsonl(tmp_path / "in" / f"part-{n:02d}.jsonl",
                    ({"object": n, "line": i} for i in range(lines)))
    namespace = f"os-{uuid.uuid4().hex[:8]}"
    worker = {"transport": "memory", "memory.namespace": namespace,
              "offset.flush.interval.ms": 100}
    connector = {"name": "objects", "connector.class": "objectstore-source",
                 "objectstore.url": str(tmp_path / "in"), "topic": "lines",
                 "input.format": "jsonl", "max.poll.records": "100",
                 "value.converter": "json", "value.converter.schemas.enable": "false",
                 "key.converter": "string"}
    try:
        herder = StandaloneHerder(worker)
        herder.start()
        herder.create_connector(connector)
        while not herder.metrics() or herder.metrics()[0].acknowledged < 5000:
            time.sleep(0.005)
        stopping = time.monotonic()
        herder.stop()
        assert time.monotonic() - stopping < CLOSE_TIMEOUT
        first = len(_values(namespace))
        assert 5000 <= first < objects * lines  # stopped part way
        with StandaloneHerder(worker) as herder:  # the stored connector resumes
            deadline = time.monotonic() + 60
            while len(_values(namespace)) < objects * lines:
                assert time.monotonic() < deadline
                time.sleep(0.05)
            time.sleep(0.3)
        got = _values(namespace)
    finally:
        MemoryTransport.reset(namespace)
    assert sorted(got) == [(n, i) for n in range(objects) for i in range(lines)]


def _values(namespace: str) -> list[tuple[int, int]]:
    transport = MemoryTransport({"namespace": namespace})
    topics = transport.admin().list_topics()
    if "lines" not in topics:
        return []
    consumer = transport.consumer()
    consumer.assign([TopicPartition("lines", p) for p in range(topics["lines"].partitions)])
    out: list[tuple[int, int]] = []
    while batch := consumer.poll(50_000, 0.05):
        out += [(v["object"], v["line"]) for v in (json.loads(m.value) for m in batch)]
    consumer.close()
    return out
