"""The columnar path through the runtime: Arrow batches from poll to send and from poll to
put, the per-record path where a batch cannot stay columnar, and offsets per batch.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

pa = pytest.importorskip("pyarrow")

from columnar_connectors import rows  # noqa: E402
from omconnect_console.null import COUNTS  # noqa: E402
from omconnect_datagen.quickstarts import BLOCK, block_rng, payload_bytes  # noqa: E402
from runtime_connectors import STATE  # noqa: E402
from runtime_support import eventually, read_topic, source_config  # noqa: E402
from test_error_handling import _produce  # noqa: E402

from omconnect.runtime import StandaloneHerder  # noqa: E402

BYTES = {"key.converter": "bytearray", "value.converter": "bytearray"}
STRINGS = {"key.converter": "string", "value.converter": "string"}


def _arrow_source(name: str = "arrow", **extra: Any) -> dict[str, Any]:
    config = {"name": name, "connector.class": "columnar_connectors:ArrowSource",
              "topic": f"{name}-out"}
    config.update({k.replace("_", "."): v for k, v in extra.items()})
    return config


def _batch_sink(name: str = "batches", topics: str = "arrow-out", **extra: Any) -> dict[str, Any]:
    config = {"name": name, "connector.class": "columnar_connectors:BatchListSink",
              "topics": topics}
    config.update({k.replace("_", "."): v for k, v in extra.items()})
    return config


def _metrics(herder: StandaloneHerder, name: str) -> Any:
    return next(m for m in herder.metrics() if m.connector == name)


def _payload(seed: int, count: int, size: int) -> list[bytes]:
    """What datagen's payload quickstart makes, by its own generator."""
    out: list[bytes] = []
    block = 0
    while len(out) < count:
        data = payload_bytes(block_rng(seed, block), BLOCK, size)
        out += [data[i:i + size] for i in range(0, BLOCK * size, size)]
        block += 1
    return out[:count]


@pytest.mark.parametrize("transport", ["memory", "embedded"])
def test_datagen_to_null_moves_every_record_as_batches(worker_config, tmp_path, transport):
    config = dict(worker_config, transport=transport, **BYTES,
                  **{"embedded.path": str(tmp_path / "log.db")})
    with StandaloneHerder(config) as herder:
        herder.create_connector({"name": "gen", "connector.class": "datagen", "topic": "t",
                                 "quickstart": "payload", "max.messages": 20_000,
                                 "batch.size": 3000})
        herder.create_connector({"name": "null-sink", "connector.class": "null",
                                 "topics": "t"})
        eventually(lambda: COUNTS["null-sink"] >= 20_000, timeout=60)
        eventually(lambda: herder.offsets("gen").offsets
                   and herder.offsets("gen").offsets[0]["offset"] == {"sequence": 20_000})
        source, sink = _metrics(herder, "gen"), _metrics(herder, "null-sink")
        assert (source.columnar, source.columnar_fallback) == (20_000, 0)
        assert (sink.columnar, sink.columnar_fallback) == (20_000, 0)
        eventually(lambda: _metrics(herder, "null-sink").committed == 20_000)
    assert COUNTS["null-sink"] == 20_000
    COUNTS.pop("null-sink")


def test_a_columnar_source_makes_the_same_records_as_the_per_record_one(worker_config):
    with StandaloneHerder(dict(worker_config, **BYTES)) as herder:
        herder.create_connector({"name": "gen", "connector.class": "datagen", "topic": "t",
                                 "quickstart": "payload", "max.messages": 2500,
                                 "batch.size": 700, "seed": 7, "payload.size": 33})
        eventually(lambda: len(read_topic(worker_config, "t")) == 2500)
    assert [m.value for m in read_topic(worker_config, "t")] == _payload(7, 2500, 33)


def test_a_restarted_columnar_source_resumes_after_its_last_committed_batch(worker_config):
    with StandaloneHerder(dict(worker_config, **STRINGS)) as herder:
        herder.create_connector(_arrow_source(rows=40, batch=7))
        eventually(lambda: len(read_topic(worker_config, "arrow-out")) == 40)
        eventually(lambda: [o["offset"] for o in herder.offsets("arrow").offsets]
                   == [{"row": 40}])  # none yet: an empty list, not an IndexError
    with StandaloneHerder(dict(worker_config, **STRINGS)) as herder:  # the config is kept
        herder.put_connector_config("arrow", _arrow_source(rows=70, batch=7))
        eventually(lambda: len(read_topic(worker_config, "arrow-out")) == 70)
        assert STATE["arrow"]["resumed_at"][0] == 0
        assert set(STATE["arrow"]["resumed_at"][1:]) == {40}, "resumed after the last batch"
    values = [m.value for m in read_topic(worker_config, "arrow-out")]
    assert sorted(values) == sorted(f"v{n}".encode() for n in range(70)), "no loss, no dup"


def test_records_between_batches_go_per_record_in_order_and_offsets_follow(worker_config):
    # poll_batch returns batches with an errant record between them (row 10k+5 unreadable)
    config = dict(worker_config, **STRINGS)
    with StandaloneHerder(config) as herder:
        herder.create_connector(_arrow_source(
            rows=40, batch=12, kind="mixed", errors_tolerance="all",
            errors_deadletterqueue_topic_name="dlq"))
        eventually(lambda: len(read_topic(worker_config, "dlq")) == 4)
        eventually(lambda: [o["offset"] for o in herder.offsets("arrow").offsets]
                   == [{"row": 40}])
        metrics = _metrics(herder, "arrow")
        assert metrics.columnar == 36
    values = [m.value for m in read_topic(worker_config, "arrow-out")]
    assert values == [f"v{n}".encode() for n in range(40) if n % 10 != 5]
    assert sorted(m.key for m in read_topic(worker_config, "dlq")) == \
        sorted(f"k{n % 3}".encode() for n in (5, 15, 25, 35))


def test_records_between_batches_fail_the_task_without_tolerance(worker_config):
    with StandaloneHerder(dict(worker_config, **STRINGS)) as herder:
        herder.create_connector(_arrow_source(rows=40, batch=12, kind="mixed"))
        eventually(lambda: herder.connector_status("arrow").tasks[0].trace)
        assert "row 5 is unreadable" in herder.connector_status("arrow").tasks[0].trace
        offsets = [o["offset"]["row"] for o in herder.offsets("arrow").offsets]
        assert offsets in ([], [5]), "nothing past the unreadable row is committed"
    assert [m.value for m in read_topic(worker_config, "arrow-out")][:5] == \
        [f"v{n}".encode() for n in range(5)]


def test_a_per_record_sink_reads_what_a_columnar_source_sent(worker_config):
    with StandaloneHerder(dict(worker_config, **STRINGS)) as herder:
        herder.create_connector(_arrow_source(rows=50, batch=20))
        herder.create_connector({"name": "listing", "connector.class":
                                 "runtime_connectors:ListSink", "topics": "arrow-out"})
        eventually(lambda: len(STATE["listing"]["records"]) == 50)
        assert _metrics(herder, "arrow").columnar == 50
    got = sorted((key, value) for _, _, _, key, value in STATE["listing"]["records"])
    assert got == sorted((f"k{n % 3}", f"v{n}") for n in range(50))


def test_a_columnar_sink_gets_typed_columns_from_a_per_record_source(worker_config):
    with StandaloneHerder(worker_config) as herder:  # json converters
        herder.create_connector(source_config(records=30, batch=10))
        herder.create_connector(_batch_sink(topics="counting-out"))
        eventually(lambda: len(rows("batches")) == 30)
        sink = _metrics(herder, "batches")
        assert sink.columnar == 30, "json string envelopes are read as columns"
        assert sink.put == 30
    got = rows("batches")
    assert {row["topic"] for row in got} == {"counting-out"}
    assert [row["offset"] for row in got] == list(range(30))
    assert [(row["key"], row["value"]) for row in got] == [("s0", f"s0-{n}") for n in range(30)]


def test_json_values_without_a_column_form_reach_a_batch_sink_per_record(worker_config):
    with StandaloneHerder(worker_config) as herder:  # json converters, struct values
        herder.create_connector(_arrow_source(kind="struct", rows=20, batch=10))
        herder.create_connector(_batch_sink())
        eventually(lambda: len(rows("batches")) == 20)
        sink = _metrics(herder, "batches")
        assert (sink.columnar, sink.columnar_fallback) == (0, 20)
    assert [row["value"] for row in rows("batches")] == [{"n": n} for n in range(20)]


def test_json_struct_values_with_schemas_reach_a_batch_sink_as_a_struct_column(worker_config):
    with StandaloneHerder(worker_config) as herder:  # json converters, schemas on
        herder.create_connector(_arrow_source(kind="typed-struct", rows=30, batch=10))
        herder.create_connector(_batch_sink())
        eventually(lambda: len(rows("batches")) == 30)
        sink = _metrics(herder, "batches")
        assert (sink.columnar, sink.columnar_fallback) == (30, 0)
    assert STATE["batches"]["batches"][0].schema.field("value").type == \
        pa.struct([pa.field("n", pa.int64())])
    assert sorted(row["value"]["n"] for row in rows("batches")) == list(range(30))


def test_a_string_sink_gets_string_columns_with_no_record_objects(worker_config):
    with StandaloneHerder(dict(worker_config, **STRINGS)) as herder:
        herder.create_connector(_arrow_source(rows=60, batch=25))
        herder.create_connector(_batch_sink())
        eventually(lambda: len(rows("batches")) == 60)
        assert _metrics(herder, "batches").columnar == 60
    batch = STATE["batches"]["batches"][0]
    assert batch.schema.field("value").type == pa.string()
    assert batch.schema.names == ["topic", "partition", "offset", "timestamp", "key", "value",
                                  "headers"]
    assert sorted(r["value"] for r in rows("batches")) == sorted(f"v{n}" for n in range(60))


def test_rows_that_are_not_utf8_are_dead_lettered_and_the_rest_delivered(worker_config):
    values = [f"ok{n}".encode() for n in range(10)]
    values[4] = b"\xff\xfe bad"
    _produce(worker_config, "in", values)
    with StandaloneHerder(dict(worker_config, **STRINGS)) as herder:
        herder.create_connector(_batch_sink(topics="in", errors_tolerance="all",
                                            errors_deadletterqueue_topic_name="dlq"))
        eventually(lambda: len(rows("batches")) == 9)
        eventually(lambda: len(read_topic(worker_config, "dlq")) == 1)
        eventually(lambda: herder.offsets("batches").offsets
                   and herder.offsets("batches").offsets[0]["offset"]["kafka_offset"] == 10)
        sink = _metrics(herder, "batches")
        assert sink.columnar_fallback == 10, "the batch with the bad row went per record"
    assert read_topic(worker_config, "dlq")[0].value == b"\xff\xfe bad"
    assert sorted(r["value"] for r in rows("batches")) == sorted(
        v.decode() for v in values if v != b"\xff\xfe bad")


def test_a_transform_without_a_column_form_takes_the_per_record_path_visibly(worker_config):
    with StandaloneHerder(dict(worker_config, **STRINGS)) as herder:
        herder.create_connector(_arrow_source(
            rows=30, batch=10, transforms="hoist", transforms_hoist_type="hoist-field-value",
            transforms_hoist_field="v"))
        eventually(lambda: len(read_topic(worker_config, "arrow-out")) == 30)
        source = _metrics(herder, "arrow")
        assert (source.columnar, source.columnar_fallback) == (0, 30)


CHAIN = {
    "transforms": "route,stamp,strip,dropTombstones",
    "transforms.route.type": "org.apache.kafka.connect.transforms.RegexRouter",
    "transforms.route.regex": "arrow-(.*)", "transforms.route.replacement": "routed-$1",
    "transforms.route.predicate": "isArrow",
    "transforms.stamp.type": "InsertHeader", "transforms.stamp.header": "origin",
    "transforms.stamp.value.literal": "42",
    "transforms.strip.type": "DropHeaders", "transforms.strip.headers": "origin",
    "transforms.strip.predicate": "isTombstone",
    "transforms.dropTombstones.type": "Filter",
    "transforms.dropTombstones.predicate": "hasOrigin", "transforms.dropTombstones.negate": "true",
    "predicates": "isArrow,isTombstone,hasOrigin",
    "predicates.isArrow.type": "TopicNameMatches", "predicates.isArrow.pattern": "arrow-.*",
    "predicates.isTombstone.type": "RecordIsTombstone",
    "predicates.hasOrigin.type": "HasHeaderKey", "predicates.hasOrigin.name": "origin",
}


@pytest.mark.parametrize("columnar", [True, False])
def test_columnar_transforms_give_what_the_per_record_chain_gives(worker_config, columnar):
    config = dict(worker_config, **STRINGS, **{"columnar.enable": columnar})
    with StandaloneHerder(config) as herder:
        herder.create_connector(_arrow_source(rows=60, batch=25, kind="tombstones", **{
            k.replace(".", "_"): v for k, v in CHAIN.items()}))
        eventually(lambda: herder.offsets("arrow").offsets
                   and herder.offsets("arrow").offsets[0]["offset"] == {"row": 60})
        source = _metrics(herder, "arrow")
        assert source.columnar == (60 if columnar else 0)
        assert source.filtered == 20, "the tombstones lost their header and were dropped"
    got = [(m.topic, m.key, m.value, m.headers) for m in read_topic(worker_config, "routed-out")]
    assert got == [("routed-out", f"k{n % 3}".encode(), f"v{n}".encode(), (("origin", b"42"),))
                   for n in range(60) if n % 3], "same rows, order and header bytes"


def test_a_put_batch_that_is_busy_gets_the_same_batch_again(worker_config):
    with StandaloneHerder(dict(worker_config, **STRINGS)) as herder:
        herder.create_connector(_arrow_source(rows=20, batch=20))
        herder.create_connector(_batch_sink(retriable_failures=2,
                                            errors_retry_timeout=10_000))
        eventually(lambda: len(rows("batches")) == 20)
        time.sleep(0.2)
        assert _metrics(herder, "batches").retries == 2
    assert sorted(r["value"] for r in rows("batches")) == sorted(f"v{n}" for n in range(20))


def test_columnar_enable_false_runs_batch_tasks_record_by_record(worker_config):
    config = dict(worker_config, **BYTES, **{"columnar.enable": False})
    with StandaloneHerder(config) as herder:
        herder.create_connector({"name": "gen", "connector.class": "datagen", "topic": "t",
                                 "quickstart": "payload", "max.messages": 3000,
                                 "batch.size": 1000, "seed": 3, "payload.size": 20})
        herder.create_connector({"name": "per-record-null", "connector.class": "null",
                                 "topics": "t"})
        eventually(lambda: COUNTS["per-record-null"] >= 3000)
        source, sink = _metrics(herder, "gen"), _metrics(herder, "per-record-null")
        assert (source.columnar, sink.columnar) == (0, 0)
        assert source.acknowledged == 3000
    assert [m.value for m in read_topic(worker_config, "t")] == _payload(3, 3000, 20)
    COUNTS.pop("per-record-null")


@pytest.mark.parametrize("columnar", [True, False])
def test_sink_transforms_run_on_columns_and_give_what_records_give(worker_config, columnar):
    config = dict(worker_config, **STRINGS, **{"columnar.enable": columnar})
    chain = {"transforms": "route,drop", "transforms.route.type": "RegexRouter",
             "transforms.route.regex": "arrow-(.*)", "transforms.route.replacement": "sunk-$1",
             "transforms.drop.type": "Filter", "transforms.drop.predicate": "tomb",
             "predicates": "tomb", "predicates.tomb.type": "RecordIsTombstone"}
    with StandaloneHerder(config) as herder:
        herder.create_connector(_arrow_source(rows=45, batch=20, kind="tombstones"))
        herder.create_connector(_batch_sink(**{k.replace(".", "_"): v
                                               for k, v in chain.items()}))
        eventually(lambda: len(rows("batches")) == 30)
        eventually(lambda: herder.offsets("batches").offsets
                   and herder.offsets("batches").offsets[0]["offset"]["kafka_offset"] == 45)
        sink = _metrics(herder, "batches")
        assert sink.columnar == (45 if columnar else 0)
        assert sink.filtered == 15
    got = sorted((r["topic"], r["key"], r["value"]) for r in rows("batches"))
    assert got == sorted(("sunk-out", f"k{n % 3}", f"v{n}") for n in range(45) if n % 3)


@pytest.mark.parametrize(("converter", "kind"), [("string", "tombstones"),
                                               ("bytearray", "binary")])
def test_the_file_sink_writes_the_same_lines_from_batches(worker_config, tmp_path, converter,
                                                          kind):
    written = {}
    for columnar in (True, False):
        out = tmp_path / f"{columnar}.txt"
        namespace = f"{worker_config['memory.namespace']}-{columnar}"
        config = dict(worker_config, **{"memory.namespace": namespace,
                                        "key.converter": converter,
                                        "value.converter": converter,
                                        "columnar.enable": columnar})
        with StandaloneHerder(config) as herder:
            herder.create_connector(_arrow_source(rows=300, batch=70, kind=kind))
            herder.create_connector({"name": "file", "connector.class": "file-sink",
                                     "topics": "arrow-out", "file": str(out)})
            eventually(lambda o=out: o.exists() and o.read_bytes().count(b"\n") == 300)
            assert _metrics(herder, "file").columnar == (300 if columnar else 0)
        written[columnar] = out.read_bytes()
    assert written[True] == written[False]
    first = [b"null", b"v1", b"v2", b"null"] if kind == "tombstones" else [b"v0", b"v1", b"v2"]
    assert written[True].splitlines()[:len(first)] == first


def test_a_batch_sink_reports_errant_rows_to_the_dead_letter_topic(worker_config):
    with StandaloneHerder(dict(worker_config, **STRINGS)) as herder:
        herder.create_connector(_arrow_source(rows=40, batch=40))
        herder.create_connector(_batch_sink(report_values="v7,v30", errors_tolerance="all",
                                            errors_deadletterqueue_topic_name="dlq"))
        eventually(lambda: len(rows("batches")) == 38)
        eventually(lambda: len(read_topic(worker_config, "dlq")) == 2)
        eventually(lambda: herder.offsets("batches").offsets
                   and herder.offsets("batches").offsets[0]["offset"]["kafka_offset"] == 40)
        assert _metrics(herder, "batches").columnar == 40
    assert sorted(m.value for m in read_topic(worker_config, "dlq")) == [b"v30", b"v7"]


def test_a_row_over_the_size_limit_is_dead_lettered_and_the_batch_goes_on(worker_config):
    config = dict(worker_config, **STRINGS, **{"memory.max.message.bytes": 1024})
    with StandaloneHerder(config) as herder:
        herder.create_connector(_arrow_source(
            rows=20, batch=10, kind="big", errors_tolerance="all",
            errors_deadletterqueue_topic_name="dlq"))
        eventually(lambda: len(read_topic(worker_config, "arrow-out")) == 19)
        eventually(lambda: len(read_topic(worker_config, "dlq")) == 1)
        eventually(lambda: [o["offset"] for o in herder.offsets("arrow").offsets]
                   == [{"row": 20}])
        source = _metrics(herder, "arrow")
        assert source.columnar_fallback == 10, "the batch with the big row went per record"
        assert source.columnar == 10
    assert sorted(m.value for m in read_topic(worker_config, "arrow-out")) == sorted(
        f"v{n}".encode() for n in range(20) if n != 7)


@pytest.mark.parametrize("schemas", [True, False])
def test_file_lines_go_columnar_through_the_default_json_converter(worker_config, tmp_path,
                                                                  schemas):
    """The file source's string batches stay columns through the JSON converter (its
    string column form) and give the bytes the per-record path gives; the batch with a
    line that needs a JSON escape goes per record, visibly.
    """
    from omconnect.converters.json import JsonConverter
    from omconnect.data import STRING_SCHEMA

    lines = [f"line {n} ünï" for n in range(30)] + ['a "quoted" line']
    path = tmp_path / "in.txt"
    path.write_text("".join(f"{line}\n" for line in lines))
    config = dict(worker_config, **{"value.converter.schemas.enable": schemas})
    with StandaloneHerder(config) as herder:
        herder.create_connector({"name": "lines", "connector.class": "FileStreamSource",
                                 "file": str(path), "topic": "lines", "batch.size": 10})
        eventually(lambda: len(read_topic(worker_config, "lines")) == 31)
        source = _metrics(herder, "lines")
        assert (source.columnar, source.columnar_fallback) == (30, 1)
    converter = JsonConverter()
    converter.configure({"schemas.enable": schemas}, is_key=False)
    assert [m.value for m in read_topic(worker_config, "lines")] == [
        converter.from_connect("lines", STRING_SCHEMA, line) for line in lines]
