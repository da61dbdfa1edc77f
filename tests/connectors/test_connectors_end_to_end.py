"""The built-in connectors running in the worker (StandaloneHerder), end to end."""

from __future__ import annotations

import ast

from omconnect_console.null import COUNTS

from omconnect.runtime import StandaloneHerder
from omconnect.testing.waiting import eventually


def _put(herder: StandaloneHerder, connector: str) -> int:
    return sum(m.put for m in herder.metrics() if m.connector == connector)


# Console output is read once the worker has stopped: capfd.readouterr() truncates its
# capture file after reading it, so a line a task thread writes in between is lost.


def test_datagen_orders_reach_the_console_in_order(capfd, tmp_path):
    worker = {"transport": "memory", "memory.namespace": str(tmp_path),
              "value.converter": "json",
              "value.converter.schemas.enable": "false", "key.converter": "json"}
    with StandaloneHerder(worker) as herder:
        herder.create_connector({"name": "gen", "connector.class": "datagen",
                                 "topic": "orders", "max.messages": 3000})
        herder.create_connector({"name": "peek", "connector.class": "console",
                                 "topics": "orders"})
        eventually(lambda: _put(herder, "peek") >= 3000, 60, "the pipeline")
    seen = capfd.readouterr().out.splitlines()
    fields = [line.split("\t") for line in seen]
    assert [int(f[2]) for f in fields] == list(range(3000))  # offsets
    assert [f[3] for f in fields[:2]] == ["key=0", "key=1"]
    first = ast.literal_eval(fields[0][4][len("value="):])  # the repr of a dict
    assert first["orderid"] == 0 and first["itemid"].startswith("Item_")


def test_datagen_into_the_null_sink_counts_every_record(tmp_path):
    worker = {"transport": "memory", "memory.namespace": str(tmp_path),
              "key.converter": "bytearray",
              "value.converter": "bytearray"}
    before = COUNTS["e2e-null"]
    with StandaloneHerder(worker) as herder:
        herder.create_connector({"name": "gen", "connector.class": "datagen",
                                 "topic": "bytes", "quickstart": "payload",
                                 "max.messages": 50_000, "tasks.max": 2})
        herder.create_connector({"name": "e2e-null", "connector.class": "null",
                                 "topics": "bytes"})
        eventually(lambda: COUNTS["e2e-null"] - before >= 50_000, 60, "the pipeline")
        status = herder.connector_status("gen")
        assert [t.state.value for t in status.tasks] == ["RUNNING", "RUNNING"]
    assert COUNTS["e2e-null"] - before == 50_000


def test_a_restarted_worker_continues_the_datagen_sequence(tmp_path, capfd):
    worker = {"transport": "embedded", "embedded.path": str(tmp_path / "data"),
              "value.converter": "json", "value.converter.schemas.enable": "false",
              "offset.flush.interval.ms": 100}
    source = {"name": "gen", "connector.class": "datagen", "topic": "orders",
              "max.messages": 2000, "rate": 1000, "batch.size": 100}
    sink = {"name": "peek", "connector.class": "console", "topics": "orders",
            "print.key": "false"}
    with StandaloneHerder(worker) as herder:
        herder.create_connector(source)
        herder.create_connector(sink)
        eventually(lambda: _put(herder, "peek") > 500, 60, "the pipeline")
    lines = capfd.readouterr().out.splitlines()
    assert len(lines) < 2000, "the first worker must stop before the generator is done"
    with StandaloneHerder(worker) as herder:  # the stored connectors resume
        assert herder.connectors() == ["gen", "peek"]
        eventually(lambda: len(lines) + _put(herder, "peek") >= 2000, 60, "the pipeline")
    lines += capfd.readouterr().out.splitlines()
    ids = [int(line.split("'orderid': ")[1].split(",")[0]) for line in lines]
    assert sorted(set(ids)) == list(range(2000))  # nothing lost across the restart
    assert ids == sorted(ids)  # the sink resumed after what it had committed, in order
