from __future__ import annotations

import zlib

import pytest

from omconnect.errors import ConfigError
from omconnect.source_base import (
    HashDistribution,
    PartitionRegexDistribution,
    SourceCommonConfig,
    create_distribution,
    task_configs,
)

NAMES = [f"data/topic-{p}-{o:05d}.jsonl" for p in range(10) for o in (0, 100, 200)]


def assignments(strategy_for_task: list[SourceCommonConfig]) -> dict[str, list[int]]:
    owners: dict[str, list[int]] = {name: [] for name in NAMES}
    for config in strategy_for_task:
        for name in NAMES:
            if config.is_assigned(name):
                owners[name].append(config.task_id)
    return owners


@pytest.mark.parametrize("settings", [
    {"distribution.type": "hash"},
    {"distribution.type": "partition",
     "file.name.pattern": r"topic-(?P<partition>\d+)-\d+\.jsonl$"},
])
def test_three_tasks_over_thirty_objects_read_each_exactly_once(settings: dict[str, str]) -> None:
    configs = [SourceCommonConfig.from_config(c) for c in task_configs(settings, 3)]
    assert [c.task_id for c in configs] == [0, 1, 2]
    owners = assignments(configs)
    assert len(NAMES) == 30
    assert all(len(tasks) == 1 for tasks in owners.values()), owners
    assert {tasks[0] for tasks in owners.values()} == {0, 1, 2}  # every task gets work


def test_partition_distribution_keeps_a_partitions_objects_on_one_task() -> None:
    strategy = PartitionRegexDistribution(3, r"topic-(?P<partition>\d+)-")
    assert strategy.task_for("x/topic-7-00100.jsonl") == 7 % 3
    assert {strategy.task_for(f"topic-4-{o}.jsonl") for o in range(20)} == {1}
    assert strategy.task_for("other.jsonl") is None


def test_hash_distribution_is_a_stable_crc32_not_pythons_hash() -> None:
    strategy = HashDistribution(7)
    assert strategy.task_for("a/b.csv") == zlib.crc32(b"a/b.csv") % 7
    assert [strategy.task_for(n) for n in ("x", "y", "z")] == [
        zlib.crc32(n.encode()) % 7 for n in ("x", "y", "z")]


def test_a_pattern_filters_names_under_hash_distribution() -> None:
    strategy = HashDistribution(2, r"\.csv$")
    assert strategy.task_for("a.json") is None
    assert strategy.task_for("a.csv") in (0, 1)


@pytest.mark.parametrize(("kind", "pattern", "message"), [
    ("partition", None, "needs file.name.pattern with a named group 'partition'"),
    ("partition", r"topic-(\d+)", "needs file.name.pattern with a named group 'partition'"),
    ("hash", r"([", "not a valid regular expression"),
    ("round-robin", None, "distribution.type must be one of hash, partition"),
])
def test_bad_distribution_settings_name_the_key(kind: str, pattern: str | None,
                                                message: str) -> None:
    with pytest.raises(ConfigError, match=message) as info:
        create_distribution(kind, 3, pattern)
    assert info.value.context["key"] in ("file.name.pattern", "distribution.type")


def test_task_configs_number_the_tasks() -> None:
    configs = task_configs({"topic": "t"}, 2)
    assert configs == [{"topic": "t", "task.id": "0", "tasks.max": "2"},
                       {"topic": "t", "task.id": "1", "tasks.max": "2"}]
