"""The data generator through the SPI: schemas, determinism, resume, limits, rate, tasks."""

from __future__ import annotations

import pytest
from connector_helpers import JsonOffsets, start_tasks
from omconnect_datagen import task as datagen_task
from omconnect_datagen.quickstarts import BLOCK, QUICKSTARTS
from omconnect_datagen.source import DatagenConnector

from omconnect.connector import resolve_connector_class
from omconnect.data import Struct


def _config(**extra: object) -> dict[str, object]:
    return {"name": "gen", "topic": "orders", **extra}


def _start(offsets: JsonOffsets | None = None, max_tasks: int = 1, **extra: object):
    return start_tasks(DatagenConnector(), _config(**extra), offsets or JsonOffsets(),
                       max_tasks)


def _drain(task, offsets: JsonOffsets | None = None, limit: int = 10**9):
    out = []
    while len(out) < limit:
        batch = task.poll()
        if not batch:
            break
        out += batch
        if offsets is not None:
            offsets.commit(batch)
    return out


@pytest.mark.parametrize("quickstart", sorted(QUICKSTARTS))
def test_every_quickstart_makes_values_valid_for_their_schemas(quickstart):
    (task,) = _start(quickstart=quickstart, **{"max.messages": 300})
    records = _drain(task)
    assert len(records) == 300
    spec = QUICKSTARTS[quickstart]
    for record in records:
        assert record.value_schema == spec.value_schema
        spec.value_schema.validate_value(record.value)
        if isinstance(record.value, Struct):
            record.value.validate()
        if spec.key_schema is not None:
            spec.key_schema.validate_value(record.key)
    task.stop()


def test_orders_are_numbered_in_order_and_keyed_by_orderid():
    (task,) = _start(**{"max.messages": 2500, "batch.size": 333})
    records = _drain(task)
    assert [r.value["orderid"] for r in records] == list(range(2500))
    assert [r.key for r in records] == list(range(2500))
    assert all(r.value["address"]["zipcode"] >= 10000 for r in records)


def test_the_same_seed_gives_the_same_records_whatever_the_batch_size():
    def values(batch_size: int, seed: int) -> list[str]:
        (task,) = _start(seed=seed, **{"max.messages": 3000, "batch.size": batch_size})
        return [repr(r.value) for r in _drain(task)]

    assert values(1000, 7) == values(77, 7)
    assert values(1000, 7) != values(1000, 8)


def test_max_messages_then_poll_returns_none():
    (task,) = _start(**{"max.messages": 5, "batch.size": 3})
    assert [len(task.poll()), len(task.poll())] == [3, 2]
    assert task.poll() is None
    assert task.poll() is None


def test_payload_values_have_the_configured_size():
    (task,) = _start(quickstart="payload", **{"max.messages": 10, "payload.size": 100})
    records = _drain(task)
    assert [len(r.value) for r in records] == [100] * 10
    assert len({r.value for r in records}) == 10
    assert all(r.key is None for r in records)


def test_a_restarted_task_continues_with_the_next_record_it_would_have_made():
    expected = [repr(r.value) for r in _drain(_start(**{"max.messages": 3000})[0])]
    offsets = JsonOffsets()
    (task,) = _start(offsets, **{"max.messages": 3000, "batch.size": 700})
    first = _drain(task, offsets, limit=1400)
    task.poll()  # made but never committed: comes again
    task.stop()
    (again,) = _start(offsets, **{"max.messages": 3000, "batch.size": 700})
    rest = _drain(again, offsets)
    assert [repr(r.value) for r in first + rest] == expected


def test_tasks_share_the_records_each_made_exactly_once():
    tasks = _start(max_tasks=3, **{"max.messages": 5 * BLOCK + 17})
    records = [r for task in tasks for r in _drain(task)]
    assert sorted(r.value["orderid"] for r in records) == list(range(5 * BLOCK + 17))
    assert {r.source_partition["task"] for r in records} == {0, 1, 2}


def test_rate_limits_records_per_second(monkeypatch):
    clock = [100.0]
    monkeypatch.setattr(datagen_task.time, "monotonic", lambda: clock[0])
    (task,) = _start(rate=50, **{"batch.size": 1000})
    task._stopping.wait = lambda timeout=None: clock.__setitem__(0, clock[0] + (timeout or 0))
    assert len(task.poll()) == 1  # the first record is due at once
    made = 1
    for _ in range(40):
        clock[0] += 0.1
        made += len(task.poll() or [])
    assert made == pytest.approx(1 + 50 * 4.0, abs=2)  # 4 s at 50 records/s
    clock[0] += 3600  # after a long pause: no burst beyond a second's worth
    assert len(task.poll()) <= 50


@pytest.mark.parametrize("config, key", [
    ({"name": "g"}, "topic"),
    (_config(quickstart="trades"), "quickstart"),
    (_config(rate=-1), "rate"),
    (_config(**{"max.messages": -2}), "max.messages"),
    (_config(**{"batch.size": 0}), "batch.size"),
])
def test_bad_configs_are_rejected_naming_the_key(config, key):
    errors = DatagenConnector().validate(config)
    assert errors[key], errors


def test_confluent_datagen_names_work():
    (task,) = start_tasks(DatagenConnector(),
                          {"kafka.topic": "users", "quickstart": "users", "iterations": 4},
                          JsonOffsets())
    records = _drain(task)
    assert len(records) == 4
    assert {r.topic for r in records} == {"users"}
    assert resolve_connector_class("datagen") is DatagenConnector


def test_without_a_limit_tasks_take_turns_by_block():
    tasks = _start(max_tasks=2, **{"batch.size": BLOCK})
    made = {i: [r.value["orderid"] for _ in range(3) for r in task.poll()]
            for i, task in enumerate(tasks)}
    assert made[0] == list(range(0, BLOCK)) + list(range(2 * BLOCK, 3 * BLOCK)) + \
        list(range(4 * BLOCK, 5 * BLOCK))
    assert made[1][:2] == [BLOCK, BLOCK + 1]
