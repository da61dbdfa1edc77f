"""Standalone workers keep to their own connectors, statuses and offsets.

Two worker files in two directories point at one embedded data directory (standing in for
a shared broker: both workers see the same topics and key/value stores). With default
settings neither may run, list or resume the other's connectors, even under the same
connector name; a worker runs only the connectors on its command line and those created
through its API; the same worker file resumes from its own offsets.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from omconnect.cli import main
from omconnect.records import TopicPartition
from omconnect.runtime import StandaloneHerder
from omconnect.runtime.worker_config import WorkerConfig
from omconnect.transport.embedded import EmbeddedTransport


def _props(path: Path, **settings: Any) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{k}={v}\n" for k, v in settings.items()), encoding="utf-8")
    return str(path)


def _worker(directory: Path, shared: Path) -> str:
    return _props(directory / "worker.properties", transport="embedded",
                  **{"embedded.path": shared, "key.converter": "string",
                     "value.converter": "string", "offset.flush.interval.ms": 200})


def _source(directory: Path, name: str, topic: str) -> str:
    return _props(directory / f"{name}.properties", name=name,
                  **{"connector.class": "FileStreamSource", "file": directory / "in.txt",
                     "topic": topic})


def _topic(shared: Path, topic: str) -> list[str]:
    with EmbeddedTransport({"path": str(shared)}) as transport:
        if topic not in transport.admin().list_topics():
            return []
        consumer = transport.consumer()
        consumer.assign([TopicPartition(topic, 0)])
        values: list[str] = []
        while batch := consumer.poll(10_000, 0.1):
            values.extend(m.value.decode() for m in batch if m.value is not None)
        consumer.close()
    return values


def _run(*files: str) -> int:
    return main(["standalone", *files, "--stop-when-idle", "1", "--no-progress"])


def test_two_workers_with_default_settings_never_run_each_others_connectors(tmp_path):
    shared = tmp_path / "broker"
    a, b = tmp_path / "a", tmp_path / "b"
    worker_a, worker_b = _worker(a, shared), _worker(b, shared)
    for directory, lines in ((a, "a1\na2\n"), (b, "b1\n")):
        directory.mkdir(exist_ok=True)
        (directory / "in.txt").write_text(lines, encoding="utf-8")
    # The same connector name in both workers: each has offsets of its own.
    source_a, source_b = _source(a, "src", "a-lines"), _source(b, "src", "b-lines")

    assert _run(worker_a, source_a) == 0
    with (a / "in.txt").open("a", encoding="utf-8") as f:
        f.write("a3\n")  # would reach a-lines if worker B ran worker A's connector
    assert _run(worker_b, source_b) == 0
    assert _topic(shared, "a-lines") == ["a1", "a2"]
    assert _topic(shared, "b-lines") == ["b1"], "worker B resumed worker A's offsets"

    assert _run(worker_a, source_a) == 0  # the same worker file resumes where it stopped
    assert _topic(shared, "a-lines") == ["a1", "a2", "a3"]

    with StandaloneHerder(WorkerConfig.parse({"transport": "embedded",
                                              "embedded.path": str(shared)},
                                             origin=worker_b)) as herder:
        assert herder.connectors() == ["src"]
        offsets = herder.offsets("src").to_dict()["offsets"]
        assert [o["offset"]["position"] for o in offsets] == [len("b1\n")]


def test_a_connector_left_off_the_command_line_is_not_run_again(tmp_path, caplog):
    shared = tmp_path / "broker"
    worker = _worker(tmp_path, shared)
    (tmp_path / "in.txt").write_text("x1\n", encoding="utf-8")
    source = _source(tmp_path, "src", "lines")
    other = _props(tmp_path / "other.properties", name="other",
                   **{"connector.class": "FileStreamSource", "file": tmp_path / "o.txt",
                      "topic": "other-lines"})
    (tmp_path / "o.txt").write_text("o1\n", encoding="utf-8")
    assert _run(worker, source, other) == 0

    with (tmp_path / "in.txt").open("a", encoding="utf-8") as f:
        f.write("x2\n")
    caplog.set_level("INFO", logger="omconnect.cli")
    assert _run(worker, other) == 0
    assert _topic(shared, "lines") == ["x1"], "a connector off the command line ran"
    assert any("not running connector 'src'" in r.getMessage() for r in caplog.records)

    assert _run(worker, source) == 0  # given again: resumes from its own offsets
    assert _topic(shared, "lines") == ["x1", "x2"]


def test_a_connector_created_through_the_api_runs_on_every_start(tmp_path):
    shared = tmp_path / "broker"
    worker = _worker(tmp_path, shared)
    (tmp_path / "in.txt").write_text("r1\n", encoding="utf-8")
    config = WorkerConfig.parse({"transport": "embedded", "embedded.path": str(shared),
                                 "value.converter": "string"}, origin=worker)
    with StandaloneHerder(config, command_line=[]) as herder:
        herder.create_connector({"name": "made-by-api", "connector.class": "FileStreamSource",
                                 "file": str(tmp_path / "in.txt"), "topic": "api-lines"},
                                initial_state="STOPPED")
    assert _run(worker) == 0  # no connector file: the API's connector still runs ...
    assert _topic(shared, "api-lines") == []  # ... in its stored target state (STOPPED)
    stored = _stored_origins(shared, worker)
    assert stored == {"made-by-api": "api"}


def _stored_origins(shared: Path, worker: str) -> dict[str, str]:
    namespace = WorkerConfig.parse({}, origin=worker)["config.storage.namespace"]
    with EmbeddedTransport({"path": str(shared)}) as transport:
        store = transport.kv_store(namespace)
        return {key.removeprefix("connector-"): json.loads(value)["origin"]
                for key, value in store.scan("connector-")}


@pytest.mark.parametrize("key", ["config.storage.namespace", "offset.storage.namespace",
                                 "status.storage.namespace"])
def test_an_explicit_namespace_is_used_as_written_and_standalone_id_names_the_rest(key):
    config = WorkerConfig.parse({key: "shared-on-purpose", "standalone.id": "etl-7"})
    assert config[key] == "shared-on-purpose"
    others = {k for k in ("config.storage.namespace", "offset.storage.namespace",
                          "status.storage.namespace") if k != key}
    assert all(config[k].endswith("-etl-7") for k in others)


def test_the_derived_id_differs_by_directory_and_is_stable(tmp_path):
    one, two = tmp_path / "one" / "worker.properties", tmp_path / "two" / "worker.properties"
    first = WorkerConfig.parse({}, origin=one)["standalone.id"]
    assert first == WorkerConfig.parse({}, origin=one)["standalone.id"]
    assert first != WorkerConfig.parse({}, origin=two)["standalone.id"]
    assert "worker" in first


def _sink(directory: Path, name: str, topic: str, **extra: Any) -> str:
    return _props(directory / f"{name}.properties", name=name,
                  **{"connector.class": "FileStreamSink", "file": directory / "out.txt",
                     "topics": topic, **extra})


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines() if path.exists() else []


def test_sinks_of_the_same_name_in_two_workers_keep_their_own_positions(tmp_path):
    shared = tmp_path / "broker"
    a, b = tmp_path / "a", tmp_path / "b"
    worker_a, worker_b = _worker(a, shared), _worker(b, shared)
    a.mkdir(exist_ok=True)
    (a / "in.txt").write_text("l1\nl2\n", encoding="utf-8")
    # Worker A copies the topic and commits its sink's positions ...
    assert _run(worker_a, _source(a, "src", "lines"), _sink(a, "copy", "lines")) == 0
    assert _lines(a / "out.txt") == ["l1", "l2"]
    # ... worker B's sink of the same name reads the whole topic in a group of its own
    # (a shared group would have started it at A's positions, with nothing to read).
    assert _run(worker_b, _sink(b, "copy", "lines")) == 0
    assert _lines(b / "out.txt") == ["l1", "l2"]
    groups = {WorkerConfig.parse({}, origin=w).sink_group("copy") for w in (worker_a, worker_b)}
    assert len(groups) == 2 and all(g.startswith("connect-") and g.endswith("-copy")
                                    for g in groups)


def test_consumer_override_group_id_shares_a_sinks_positions_on_purpose(tmp_path):
    shared = tmp_path / "broker"
    a, b = tmp_path / "a", tmp_path / "b"
    worker_a, worker_b = _worker(a, shared), _worker(b, shared)
    a.mkdir(exist_ok=True)
    (a / "in.txt").write_text("s1\ns2\n", encoding="utf-8")
    group = {"consumer.override.group.id": "copies"}
    assert _run(worker_a, _source(a, "src", "lines"), _sink(a, "copy", "lines", **group)) == 0
    assert _run(worker_b, _sink(b, "copy", "lines", **group)) == 0
    assert _lines(a / "out.txt") == ["s1", "s2"]
    assert _lines(b / "out.txt") == [], "the shared group's positions were not used"


def test_a_standalone_worker_never_joins_a_cluster_with_a_distributed_file(caplog):
    caplog.set_level("INFO", logger="omconnect.runtime.worker_config")
    config = WorkerConfig.parse({"group.id": "etl", "scheduled.rebalance.max.delay.ms": 0})
    assert not config.distributed
    assert config.sink_group("copy") == f"connect-{config['standalone.id']}-copy"
    assert any("group.id is a distributed worker's setting" in note for note in config.notes)
    cluster = WorkerConfig.parse({"group.id": "etl"}, distributed=True)
    assert cluster.sink_group("copy") == "connect-copy"
    assert cluster["config.storage.namespace"] == "connect-configs-etl"
