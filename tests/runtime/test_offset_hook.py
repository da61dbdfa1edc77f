"""The connector's ``alter_offsets`` hook, as the herder runs it: called with the resolved
config and the offsets before anything is written; what it raises refuses the change.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pytest
from runtime_connectors import CountingSource, ListSink
from runtime_support import eventually, sink_config, source_config

from omconnect.errors import ConfigError
from omconnect.records import TopicPartition

CALLS: list[tuple[str, dict[str, Any], Any]] = []


class CheckingSource(CountingSource):
    """Refuses a negative ``n``; records what it was asked."""

    def alter_offsets(self, config: Mapping[str, Any],
                      offsets: Sequence[tuple[Mapping[str, Any], Mapping[str, Any] | None]]
                      ) -> bool:
        CALLS.append(("source", dict(config), list(offsets)))
        for index, (_, offset) in enumerate(offsets):
            if offset is not None and offset.get("n", 0) < 0:
                raise ValueError(f"offsets[{index}].offset.n must not be negative")
        return True


class CheckingSink(ListSink):
    """Refuses positions past 1000; records what it was asked."""

    def alter_offsets(self, config: Mapping[str, Any],
                      offsets: Mapping[TopicPartition, int | None]) -> bool:
        CALLS.append(("sink", dict(config), dict(offsets)))
        if any(position is not None and position > 1000 for position in offsets.values()):
            raise ConfigError("positions past 1000 are not kept by this sink")
        return True


@pytest.fixture(autouse=True)
def _no_calls():
    CALLS.clear()


def test_the_source_hook_sees_the_resolved_config_and_can_refuse(herder, monkeypatch):
    monkeypatch.setenv("OFFSET_HOOK_TOPIC", "hooked-out")
    herder.create_connector(source_config(
        "checked", connector_class="test_offset_hook:CheckingSource",
        topic="${env:OFFSET_HOOK_TOPIC}", records=5), initial_state="STOPPED")
    partition = {"stream": 0}

    with pytest.raises(ConfigError, match=r"'checked' refused these offsets: "
                                          r"offsets\[1\]\.offset\.n must not be negative"):
        herder.alter_offsets("checked", [{"partition": partition, "offset": {"n": 2}},
                                         {"partition": partition, "offset": {"n": -1}}])
    assert herder.offsets("checked").offsets == ()  # nothing written, not even entry 0
    kind, config, offsets = CALLS[0]
    assert (kind, config["topic"]) == ("source", "hooked-out")
    assert offsets == [(partition, {"n": 2}), (partition, {"n": -1})]

    assert herder.alter_offsets("checked", [{"partition": partition, "offset": {"n": 3}}])
    assert herder.offsets("checked").offsets == ({"partition": partition,
                                                  "offset": {"n": 3}},)
    assert herder.reset_offsets("checked")
    assert CALLS[-1][2] == [(partition, None)]  # a reset is told too
    assert herder.offsets("checked").offsets == ()


def test_the_sink_hook_gets_parsed_positions_and_can_refuse(herder):
    herder.create_connector(source_config(records=10, batch=10))
    herder.create_connector(sink_config(topics="counting-out",
                                        connector_class="test_offset_hook:CheckingSink"))
    eventually(lambda: herder.offsets("listing").offsets)
    herder.stop_connector("listing")
    before = herder.offsets("listing").offsets

    with pytest.raises(ConfigError, match="positions past 1000 are not kept"):
        herder.alter_offsets("listing", [{"partition": {"kafka_topic": "counting-out",
                                                        "kafka_partition": "0"},
                                          "offset": {"kafka_offset": 5000}}])
    assert herder.offsets("listing").offsets == before
    assert CALLS[-1][0] == "sink"
    assert CALLS[-1][2] == {TopicPartition("counting-out", 0): 5000}

    assert herder.alter_offsets("listing", [{"partition": {"kafka_topic": "counting-out",
                                                           "kafka_partition": 0},
                                             "offset": {"kafka_offset": 4}}])
    assert herder.offsets("listing").offsets[0]["offset"] == {"kafka_offset": 4}


def test_a_connector_without_the_hook_is_reported_as_not_confirming(herder):
    herder.create_connector(source_config(), initial_state="STOPPED")
    assert herder.alter_offsets("counting", [{"partition": {"stream": 0},
                                              "offset": {"n": 1}}]) is False
    assert herder.offsets("counting").offsets[0]["offset"] == {"n": 1}
