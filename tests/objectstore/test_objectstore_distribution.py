"""Objects are spread over tasks before any is read: each is read by exactly one task."""

from __future__ import annotations

import time
import uuid
from collections import Counter
from typing import Any

import pytest
from objectstore_helpers import config, drain, start_task, write_jsonl
from omconnect_objectstore.source import ObjectStoreSourceConnector

from omconnect.connector.lifecycle import State
from omconnect.errors import ConfigError
from omconnect.records import TopicPartition
from omconnect.runtime import StandaloneHerder
from omconnect.source_base import HashDistribution
from omconnect.transport.memory import MemoryTransport

OBJECTS = 30
LINES = 20


def _objects(directory) -> list[tuple[int, int]]:
    expected = []
    for n in range(OBJECTS):
        write_jsonl(directory / f"day-{n % 7}" / f"part-{n:02d}.jsonl",
                    [{"object": n, "line": i} for i in range(LINES)])
        expected += [(n, i) for i in range(LINES)]
    return expected


def _task_configs(directory, tasks: int, **settings: Any) -> list[dict[str, Any]]:
    connector = ObjectStoreSourceConnector()
    connector.start(config(directory, input_format="jsonl", **settings))
    return connector.task_configs(tasks)


def test_three_tasks_over_thirty_objects_read_each_exactly_once(tmp_path):
    expected = _objects(tmp_path)
    configs = _task_configs(tmp_path, 3)
    assert [c["task.id"] for c in configs] == ["0", "1", "2"]
    read_by: dict[str, set[int]] = {}
    got: list[tuple[int, int]] = []
    for task_config in configs:
        task = start_task(task_config)
        try:
            records = drain(task)
        finally:
            task.stop()
        for record in records:
            read_by.setdefault(record.key, set()).add(int(task_config["task.id"]))
        got += [(r.value["object"], r.value["line"]) for r in records]
    assert sorted(got) == sorted(expected)
    assert Counter(got).most_common(1)[0][1] == 1
    assert len(read_by) == OBJECTS and all(len(t) == 1 for t in read_by.values())
    # the assignment is the documented hash of the name, the same in every task
    strategy = HashDistribution(3)
    assert {name: tasks.pop() for name, tasks in read_by.items()} == {
        name: strategy.task_for(name) for name in read_by}
    assert len({t for name, t in ((n, strategy.task_for(n)) for n in read_by)}) == 3


def test_partition_strategy_keeps_a_partition_on_one_task_and_in_the_topic(tmp_path):
    _objects(tmp_path)
    configs = _task_configs(tmp_path, 3, distribution_type="partition",
                            file_name_pattern=r"^day-(?P<partition>\d+)/",
                            topic="day-{partition}")
    days_by_task: dict[int, set[str]] = {}
    total = 0
    for task_config in configs:
        task = start_task(task_config)
        try:
            records = drain(task)
        finally:
            task.stop()
        total += len(records)
        days_by_task[int(task_config["task.id"])] = {r.topic for r in records}
        assert all(r.key.startswith(r.topic + "/") for r in records)
    assert total == OBJECTS * LINES
    assert days_by_task == {0: {"day-0", "day-3", "day-6"}, 1: {"day-1", "day-4"},
                            2: {"day-2", "day-5"}}


def test_partition_strategy_without_a_partition_group_is_refused_naming_the_key(tmp_path):
    connector = ObjectStoreSourceConnector()
    errors = connector.validate(config(tmp_path, distribution_type="partition",
                                       file_name_pattern=r"\d+"))
    assert any("partition" in m for m in errors["file.name.pattern"])
    with pytest.raises(ConfigError, match=r"file\.name\.pattern"):
        connector.start(config(tmp_path, distribution_type="partition"))


def test_in_a_worker_three_tasks_deliver_every_record_once(tmp_path):
    expected = _objects(tmp_path)
    namespace = f"os-{uuid.uuid4().hex[:8]}"
    worker = {"transport": "memory", "memory.namespace": namespace,
              "offset.flush.interval.ms": 50}
    try:
        with StandaloneHerder(worker) as herder:
            herder.create_connector({
                "name": "objects", "connector.class": "objectstore-source",
                "tasks.max": 3, "objectstore.url": str(tmp_path), "topic": "lines",
                "input.format": "jsonl", "value.converter": "json",
                "value.converter.schemas.enable": "false", "key.converter": "string"})
            deadline = time.monotonic() + 30
            while sum(m.acknowledged for m in herder.metrics()) < len(expected):
                assert time.monotonic() < deadline, herder.metrics()
                time.sleep(0.05)
            status = herder.connector_status("objects")
            assert [t.state for t in status.tasks] == [State.RUNNING] * 3
            time.sleep(0.3)  # a late duplicate would show now
        got = _read_topic(namespace, "lines")
    finally:
        MemoryTransport.reset(namespace)
    assert sorted(got) == sorted(expected)


def _read_topic(namespace: str, topic: str) -> list[tuple[int, int]]:
    import json

    transport = MemoryTransport({"namespace": namespace})
    consumer = transport.consumer()
    partitions = transport.admin().list_topics()[topic].partitions
    consumer.assign([TopicPartition(topic, p) for p in range(partitions)])
    out: list[tuple[int, int]] = []
    while batch := consumer.poll(10_000, 0.1):
        out += [(v["object"], v["line"]) for v in (json.loads(m.value) for m in batch)]
    consumer.close()
    return out
