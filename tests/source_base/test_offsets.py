"""Offset entries and the offset manager, against a JSON-backed store like the runtime's."""

from __future__ import annotations

import enum
import json
from typing import Any

import pytest
from source_helpers import DictOffsetStore

from omconnect.data import STRING_SCHEMA, SchemaAndValue
from omconnect.errors import DataError
from omconnect.source_base import OffsetManager, OffsetManagerEntry


class Level(enum.IntEnum):
    HIGH = 3


class Kind(str, enum.Enum):  # noqa: UP042 - a str subclass whose str() differs
    CSV = "csv"


class ObjectEntry(OffsetManagerEntry):
    @property
    def records(self) -> int:
        return self.get_int("records", 0) or 0


def test_entry_values_are_normalised_and_compare_equal_after_a_json_reload() -> None:
    entry = OffsetManagerEntry(
        {"bucket": "b", "object": "a/b.jsonl", "shard": Level.HIGH},
        {"records": Level.HIGH, "done": False, "ratio": 0.5, "kind": Kind.CSV, "etag": None},
    )
    assert type(entry.key["shard"]) is int
    assert type(entry.data["records"]) is int
    assert type(entry.data["kind"]) is str
    assert entry.data["kind"] == "csv"
    reloaded = json.loads(json.dumps(entry.data))
    assert reloaded == entry.data
    assert OffsetManagerEntry(entry.key, reloaded) == entry
    assert [type(v) for v in reloaded.values()] == [type(v) for v in entry.data.values()]


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (float("nan"), "not finite"),
        (2**64, "does not fit in 64 bits"),
        (b"bytes", "is a bytes; use a str, int, float, bool or None"),
        ({"nested": 1}, "is a dict"),
    ],
)
def test_values_json_cannot_hold_are_refused_naming_the_key(value: Any, message: str) -> None:
    entry = OffsetManagerEntry({"object": "o"})
    with pytest.raises(DataError, match=message) as info:
        entry.set("position", value)
    assert "'position'" in str(info.value)


def test_non_string_map_keys_are_refused() -> None:
    with pytest.raises(DataError, match="keys must be strings"):
        OffsetManagerEntry({1: "x"})  # type: ignore[dict-item]


def test_maps_going_in_and_out_are_copies() -> None:
    key = {"object": "o"}
    data = {"records": 1}
    entry = OffsetManagerEntry(key, data)
    key["object"] = "changed"
    data["records"] = 99
    entry.key["object"] = "changed too"
    entry.data["records"] = 42
    assert entry.key == {"object": "o"}
    assert entry.data == {"records": 1}


def test_getters_convert_what_storage_may_hand_back() -> None:
    entry = OffsetManagerEntry({"o": "x"}, {
        "as_float": 12.0, "as_text": "7", "flag": "TRUE", "one": 1, "yes": True,
        "pi": 3.25, "bad": "seven",
    })
    assert entry.get_int("as_float") == 12
    assert entry.get_int("as_text") == 7
    assert entry.get_int("missing", 5) == 5
    assert entry.get_bool("flag") is True
    assert entry.get_bool("one") is True
    assert entry.get_str("yes") == "true"
    assert entry.get_str("pi") == "3.25"
    assert entry.get_float("as_text") == 7.0
    with pytest.raises(DataError, match=r"'pi' = 3\.25 is not an integer"):
        entry.get_int("pi")
    with pytest.raises(DataError, match="'bad' = 'seven' is not a boolean"):
        entry.get_bool("bad")
    with pytest.raises(DataError, match="'bad' = 'seven' is not a number"):
        entry.get_float("bad")


def test_increment_counts_from_zero() -> None:
    entry = OffsetManagerEntry({"o": "x"})
    assert entry.increment("records") == 1
    assert entry.increment("records", 9) == 10
    assert entry.data == {"records": 10}


def test_to_record_carries_the_key_map_as_partition_and_the_data_map_as_offset() -> None:
    entry = OffsetManagerEntry({"object": "o"}, {"records": 0})
    entry.increment("records")
    first = entry.to_record(topic="t", key=SchemaAndValue(STRING_SCHEMA, "o"),
                            value=SchemaAndValue(None, {"a": 1}))
    entry.increment("records")
    second = entry.to_record(topic="t", value=SchemaAndValue(None, {"a": 2}))
    assert first.source_partition == {"object": "o"}
    assert first.source_offset == {"records": 1}  # not changed by the later increment
    assert second.source_offset == {"records": 2}
    assert (first.key_schema, first.key, first.value) == (STRING_SCHEMA, "o", {"a": 1})
    assert second.key is None


def test_get_entry_reads_storage_once_then_serves_the_cache() -> None:
    store = DictOffsetStore()
    store.commit({"object": "a"}, {"records": 3})
    manager = OffsetManager(store)
    entry = manager.get_entry({"object": "a"}, ObjectEntry)
    assert isinstance(entry, ObjectEntry)
    assert entry.records == 3
    assert manager.get_entry({"object": "b"}, ObjectEntry) is None
    reads = store.reads
    manager.get_entry({"object": "a"}, ObjectEntry)
    assert manager.get_entry({"object": "b"}, ObjectEntry) is None  # absence is cached too
    assert store.reads == reads


def test_populate_loads_many_keys_in_one_read() -> None:
    store = DictOffsetStore()
    for i in range(0, 50, 2):
        store.commit({"object": f"o{i}"}, {"records": i})
    manager = OffsetManager(store)
    manager.populate({"object": f"o{i}"} for i in range(50))
    assert store.reads == 1
    found = {i: manager.get_entry({"object": f"o{i}"}, ObjectEntry) for i in range(50)}
    assert store.reads == 1
    assert {i for i, e in found.items() if e is not None} == set(range(0, 50, 2))
    assert found[8] is not None and found[8].records == 8


def test_add_entry_keeps_the_latest_state_the_task_handed_over() -> None:
    store = DictOffsetStore()
    store.commit({"object": "a"}, {"records": 3})
    manager = OffsetManager(store)
    entry = manager.get_entry({"object": "a"}, ObjectEntry)
    assert entry is not None
    entry.increment("records")
    manager.add_entry(entry)
    entry.increment("records")  # not added: not handed over
    again = manager.get_entry({"object": "a"}, ObjectEntry)
    assert again is not None and again.records == 4
    assert again is not entry


def test_acknowledged_entries_leave_the_cache_only_once_storage_holds_their_state() -> None:
    store = DictOffsetStore()
    manager = OffsetManager(store)
    entry = ObjectEntry({"object": "a"})
    entry.increment("records")
    manager.add_entry(entry)
    record = entry.to_record(topic="t", value=None)

    manager.remove_record(record)  # acknowledged, but the runtime has not flushed yet
    assert manager.evict_committed() == 0
    cached = manager.get_entry({"object": "a"}, ObjectEntry)
    assert cached is not None and cached.records == 1  # not reloaded as "never read"

    store.commit(record.source_partition, record.source_offset)  # the offset flush
    reads = store.reads
    assert manager.evict_committed() == 1
    assert len(manager) == 0
    reloaded = manager.get_entry({"object": "a"}, ObjectEntry)
    assert store.reads == reads + 2  # one read to check, one to reload
    assert reloaded is not None and reloaded.records == 1


def test_an_entry_that_moved_on_since_its_acknowledged_record_stays_cached() -> None:
    store = DictOffsetStore()
    manager = OffsetManager(store)
    entry = ObjectEntry({"object": "a"})
    entry.increment("records")
    manager.add_entry(entry)
    first = entry.to_record(topic="t", value=None)
    entry.increment("records")
    manager.add_entry(entry)  # record 2 handed over, not yet acknowledged
    manager.remove_record(first)
    store.commit(first.source_partition, first.source_offset)
    assert manager.evict_committed() == 0
    cached = manager.get_entry({"object": "a"}, ObjectEntry)
    assert cached is not None and cached.records == 2


def test_remove_forgets_at_once() -> None:
    store = DictOffsetStore()
    manager = OffsetManager(store)
    manager.add_entry(ObjectEntry({"object": "a"}, {"records": 5}))
    manager.remove({"object": "a"})
    assert manager.get_entry({"object": "a"}, ObjectEntry) is None


def test_without_storage_everything_starts_fresh_and_nothing_is_evicted() -> None:
    manager = OffsetManager(None)
    assert manager.get_entry({"object": "a"}, ObjectEntry) is None
    entry = ObjectEntry({"object": "a"}, {"records": 2})
    manager.add_entry(entry)
    manager.remove_record(entry.to_record(topic="t", value=None))
    assert manager.evict_committed() == 0
    assert manager.get_entry({"object": "a"}, ObjectEntry) == entry
