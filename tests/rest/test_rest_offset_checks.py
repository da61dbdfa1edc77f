"""``PATCH /connectors/{name}/offsets`` refuses offsets the connector could not resume from,
with a 400 naming the entry and the field, and writes nothing then (a running worker on
the embedded transport, with the built-in connectors).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
from rest_helpers import eventually, wait_for_state

CONFIRMED = "The offsets for this connector have been altered successfully"


def _patch(client: httpx.Client, name: str, *entries: dict[str, Any]) -> httpx.Response:
    return client.patch(f"/connectors/{name}/offsets", json={"offsets": list(entries)})


def _offsets(client: httpx.Client, name: str) -> list[dict[str, Any]]:
    return client.get(f"/connectors/{name}/offsets").json()["offsets"]


def _refused(response: httpx.Response, *names: str) -> str:
    assert response.status_code == 400, response.text
    message = response.json()["message"]
    for name in names:
        assert name in message, message
    return message


@pytest.fixture
def file_source(client: httpx.Client, tmp_path: Path) -> str:
    """A stopped FileStreamSource that read its whole file (its offset committed)."""
    (tmp_path / "in.txt").write_text("one\ntwo\n")
    assert client.post("/connectors", json={"name": "reader", "config": {
        "connector.class": "FileStreamSource", "file": str(tmp_path / "in.txt"),
        "topic": "lines"}}).status_code == 201
    eventually(lambda: _offsets(client, "reader"), what="the source's committed offset")
    assert client.put("/connectors/reader/stop").status_code == 204
    return str(tmp_path / "in.txt")


@pytest.mark.parametrize(("entry", "names"), [
    ({"partition": {}, "offset": {"position": 3}}, ["offsets[0].partition", "'filename'"]),
    ({"partition": {"kafka_topic": "lines", "kafka_partition": 0},
      "offset": {"kafka_offset": 1}}, ["offsets[0].partition", "'filename'"]),
    ({"partition": {"filename": "FILE"}, "offset": {"position": -4}},
     ["offsets[0].offset.position", "non-negative integer", "-4"]),
    ({"partition": {"filename": "FILE"}, "offset": {"position": "12"}},
     ["offsets[0].offset.position", "'12'"]),
    ({"partition": {"filename": "FILE"}, "offset": {"position": True}},
     ["offsets[0].offset.position"]),
    ({"partition": {"filename": "FILE"}, "offset": {}}, ["offsets[0].offset", "'position'"]),
    ({"partition": {"filename": "FILE"}, "offset": {"position": 1, "inode": "x"}},
     ["offsets[0].offset.inode"]),
])
def test_the_file_source_refuses_offsets_it_cannot_resume_from(
        client: httpx.Client, file_source: str, entry: dict[str, Any], names: list[str]):
    committed = _offsets(client, "reader")
    if "filename" in entry["partition"]:
        entry["partition"]["filename"] = file_source
    message = _refused(_patch(client, "reader", entry), "'reader'", *names)
    assert "refused these offsets" in message
    assert _offsets(client, "reader") == committed


def test_a_refused_request_writes_nothing_and_a_valid_one_is_resumed_from(
        client: httpx.Client, file_source: str):
    committed = _offsets(client, "reader")
    partition = {"filename": file_source}
    good = {"partition": partition, "offset": {"position": 4}}
    bad = {"partition": partition, "offset": {"position": -1}}
    _refused(_patch(client, "reader", good, bad), "offsets[1].offset.position")
    assert _offsets(client, "reader") == committed

    # A reset (null offset) is accepted for any partition, so stray entries can go.
    accepted = _patch(client, "reader", {"partition": {}, "offset": None},
                      {"partition": {"filename": "/elsewhere.txt"}, "offset": None})
    assert accepted.status_code == 200, accepted.text
    assert _patch(client, "reader", good).json() == {"message": CONFIRMED}
    assert _offsets(client, "reader") == [good]
    # It resumes from there: the second line only is read again.
    assert client.put("/connectors/reader/resume").status_code == 202
    wait_for_state(client, "reader", "RUNNING")
    eventually(lambda: _offsets(client, "reader")[0]["offset"]["position"] == 8,
               what="the source to read on from byte 4")


def test_a_file_source_on_standard_input_takes_no_offsets(client: httpx.Client):
    assert client.post("/connectors", json={"name": "stdin", "initial_state": "STOPPED",
                                            "config": {"connector.class": "FileStreamSource",
                                                       "topic": "lines"}}).status_code == 201
    _refused(_patch(client, "stdin", {"partition": {"filename": "x"},
                                      "offset": {"position": 0}}),
             "offsets[0]", "standard input")


@pytest.fixture
def file_sink(client: httpx.Client, tmp_path: Path) -> str:
    """A FileStreamSink on topic ``lines`` created stopped."""
    assert client.post("/connectors", json={"name": "writer", "initial_state": "STOPPED",
                                            "config": {"connector.class": "FileStreamSink",
                                                       "file": str(tmp_path / "out.txt"),
                                                       "topics": "lines"}}).status_code == 201
    return "writer"


MALFORMED_SINK_ENTRIES = [
    ({"partition": {"kafka_partition": 0}, "offset": {"kafka_offset": 1}},
     "offsets[0].partition"),
    ({"partition": {"kafka_topic": "lines"}, "offset": {"kafka_offset": 1}},
     "offsets[0].partition"),
    ({"partition": {"filename": "/tmp/in.txt"}, "offset": {"position": 1}},
     "offsets[0].partition"),
    ({"partition": {"kafka_topic": "lines", "kafka_partition": -1},
      "offset": {"kafka_offset": 1}}, "offsets[0].partition.kafka_partition"),
    ({"partition": {"kafka_topic": "lines", "kafka_partition": "zero"},
      "offset": {"kafka_offset": 1}}, "offsets[0].partition.kafka_partition"),
    ({"partition": {"kafka_topic": "lines", "kafka_partition": 1.5},
      "offset": {"kafka_offset": 1}}, "offsets[0].partition.kafka_partition"),
    ({"partition": {"kafka_topic": "lines", "kafka_partition": 2**31},
      "offset": {"kafka_offset": 1}}, "offsets[0].partition.kafka_partition"),
    ({"partition": {"kafka_topic": "lines", "kafka_partition": 0},
      "offset": {"kafka_offset": -3}}, "offsets[0].offset.kafka_offset"),
    ({"partition": {"kafka_topic": "lines", "kafka_partition": 0},
      "offset": {"kafka_offset": "3.0"}}, "offsets[0].offset.kafka_offset"),
    ({"partition": {"kafka_topic": "lines", "kafka_partition": 0}, "offset": {"n": 3}},
     "offsets[0].offset"),
]


def test_a_sink_refuses_malformed_positions_naming_the_field(client: httpx.Client,
                                                            file_sink: str):
    for entry, field in MALFORMED_SINK_ENTRIES:
        _refused(_patch(client, file_sink, entry), field)
    assert _offsets(client, file_sink) == []


def test_a_sink_takes_kafka_connects_forms_and_topics_it_does_not_read(
        client: httpx.Client, file_source: str, file_sink: str):
    # (file_source wrote two lines to the sink's topic "lines".)
    # As Kafka Connect: numbers may come as strings of digits.
    accepted = _patch(client, file_sink, {
        "partition": {"kafka_topic": "lines", "kafka_partition": "0"},
        "offset": {"kafka_offset": "2"}})
    assert accepted.json() == {"message": CONFIRMED}
    # A topic outside the connector's topics is accepted too (committed for its group).
    assert _patch(client, file_sink, {
        "partition": {"kafka_topic": "elsewhere", "kafka_partition": 0},
        "offset": {"kafka_offset": 1}}).status_code == 200
    # GET lists the positions in the connector's own topics only.
    assert _offsets(client, file_sink) == [{
        "partition": {"kafka_topic": "lines", "kafka_partition": 0},
        "offset": {"kafka_offset": 2}}]


@pytest.mark.parametrize(("entry", "field"), [
    ({"partition": {"datagen": "orders", "task": 0}, "offset": {"sequence": -1}},
     "offsets[0].offset.sequence"),
    ({"partition": {"datagen": "orders", "task": 0}, "offset": {"position": 1}},
     "offsets[0].offset.sequence"),
    ({"partition": {"filename": "x"}, "offset": {"sequence": 1}}, "offsets[0].partition"),
    ({"partition": {"datagen": "orders", "task": -2}, "offset": {"sequence": 1}},
     "offsets[0].partition"),
])
def test_datagen_refuses_offsets_of_another_shape(client: httpx.Client,
                                                  entry: dict[str, Any], field: str):
    assert client.post("/connectors", json={"name": "gen", "initial_state": "STOPPED",
                                            "config": {"connector.class": "datagen",
                                                       "topic": "orders"}}).status_code == 201
    _refused(_patch(client, "gen", entry), field)
    valid = {"partition": {"datagen": "orders", "task": 0}, "offset": {"sequence": 7}}
    assert _patch(client, "gen", valid).json() == {"message": CONFIRMED}


@pytest.mark.parametrize(("entry", "field"), [
    ({"partition": {"url": "U", "object": "a.jsonl"}, "offset": {"records": -1}},
     "offsets[0].offset.records"),
    ({"partition": {"url": "U", "object": "a.jsonl"}, "offset": {"records": 1, "done": 1}},
     "offsets[0].offset.done"),
    ({"partition": {"url": "U", "object": "a.jsonl"}, "offset": {"records": 1, "size": -5}},
     "offsets[0].offset.size"),
    ({"partition": {"url": "U"}, "offset": {"records": 1}}, "offsets[0].partition.object"),
    ({"partition": {"filename": "x"}, "offset": {"records": 1}}, "offsets[0].partition.url"),
])
def test_the_objectstore_source_refuses_offsets_of_another_shape(
        client: httpx.Client, tmp_path: Path, entry: dict[str, Any], field: str):
    (tmp_path / "objects").mkdir()
    assert client.post("/connectors", json={"name": "objects", "initial_state": "STOPPED",
                                            "config": {
                                                "connector.class": "objectstore-source",
                                                "objectstore.url": str(tmp_path / "objects"),
                                                "topic": "rows",
                                                "input.format": "jsonl"}}).status_code == 201
    _refused(_patch(client, "objects", entry), field)
    valid = {"partition": {"url": "U", "object": "a.jsonl"},
             "offset": {"records": 3, "done": True, "size": 40}}
    assert _patch(client, "objects", valid).json() == {"message": CONFIRMED}
