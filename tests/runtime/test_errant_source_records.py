"""ErrantSourceRecord: a source task hands over a record it could not read, and the
runtime routes it per errors.tolerance (dead-letter topic, or a failed task), committing
its offset in order with the others.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from typing import Any

from runtime_support import eventually, read_topic

from omconnect.config import ConfigDef, ConfigType
from omconnect.connector import SourceConnector, SourceTask
from omconnect.connector.lifecycle import State
from omconnect.data import STRING_SCHEMA, Headers
from omconnect.errors import DataError
from omconnect.records import ErrantSourceRecord, RecordMetadata, SourceRecord

COMMITTED: dict[str, list[tuple[Any, RecordMetadata | None]]] = {}
_LOCK = threading.Lock()


class LinesSource(SourceConnector):
    """Emits lines 1..lines of one source partition; the lines in ``bad`` are errant."""

    CONFIG = (ConfigDef()
              .define("topic", ConfigType.STRING, documentation="Where records go.")
              .define("lines", ConfigType.INT, 10, documentation="How many lines.")
              .define("bad", ConfigType.LIST, [], documentation="Errant line numbers.")
              .define("batch", ConfigType.INT, 100, documentation="Lines per poll."))

    def version(self) -> str:
        return "1.0"

    def config_def(self) -> ConfigDef:
        return self.CONFIG

    def start(self, config: Mapping[str, Any]) -> None:
        self.config = dict(config)

    def task_class(self) -> type[SourceTask]:
        return LinesTask

    def task_configs(self, max_tasks: int) -> list[dict[str, Any]]:
        return [self.config]

    def stop(self) -> None:
        pass


class LinesTask(SourceTask):
    def version(self) -> str:
        return "1.0"

    def start(self, config: Mapping[str, Any]) -> None:
        values = LinesSource.CONFIG.parse(config)
        self.name = config["name"]
        self.topic = values["topic"]
        self.bad = {int(n) for n in values["bad"]}
        self.batch = values["batch"]
        stored = self.context.offset_storage_reader.offset({"file": "in.txt"}) or {}
        self.next = int(stored.get("line", 0)) + 1
        self.last = values["lines"]
        COMMITTED.setdefault(self.name, [])

    def poll(self) -> list[SourceRecord] | None:
        if self.next > self.last:
            return None
        records: list[SourceRecord] = []
        while self.next <= self.last and len(records) < self.batch:
            n = self.next
            self.next += 1
            common: dict[str, Any] = {
                "topic": self.topic, "source_partition": {"file": "in.txt"},
                "source_offset": {"line": n}}
            if n in self.bad:
                records.append(ErrantSourceRecord(
                    **common, headers=Headers([("file", "in.txt"), ("line", str(n))]),
                    error=DataError(f"line {n} is malformed", object="in.txt", line=n)))
            else:
                records.append(SourceRecord(**common, value_schema=STRING_SCHEMA,
                                            value=f"line {n}"))
        return records

    def commit_record(self, record: SourceRecord, metadata: RecordMetadata | None) -> None:
        with _LOCK:
            COMMITTED[self.name].append((record.source_offset["line"], metadata))

    def stop(self) -> None:
        pass


def _config(**extra: Any) -> dict[str, Any]:
    config = {"name": "lines", "connector.class": f"{__name__}:LinesSource",
              "topic": "out", "value.converter": "string"}
    config.update({k.replace("_", "."): v for k, v in extra.items()})
    return config


def _committed_line(herder) -> int | None:
    offsets = herder.offsets("lines").offsets
    return offsets[0]["offset"]["line"] if offsets else None


def _headers(message) -> dict[str, str]:
    return {k: (v or b"").decode() for k, v in message.headers}


def test_errant_records_go_to_the_dead_letter_topic_and_their_offsets_commit(
        herder, worker_config):
    herder.create_connector(_config(
        lines=10, bad="4,10", batch=3, errors_tolerance="all",
        errors_deadletterqueue_topic_name="dlq",
        errors_deadletterqueue_context_headers_enable="true"))
    # line 10, the last, is errant: its offset is committed once the DLQ write is done
    eventually(lambda: _committed_line(herder) == 10, what="offset of line 10")
    values = [m.value.decode() for m in read_topic(worker_config, "out")]
    assert values == [f"line {n}" for n in (1, 2, 3, 5, 6, 7, 8, 9)]
    dead = read_topic(worker_config, "dlq")
    assert [_headers(m)["line"] for m in dead] == ["4", "10"]
    first = _headers(dead[0])
    assert first["file"] == "in.txt"
    assert first["__connect.errors.stage"] == "TASK_POLL"
    assert first["__connect.errors.class.name"] == f"{__name__}.LinesTask"
    assert first["__connect.errors.exception.class.name"] == "omconnect.errors.DataError"
    assert "line 4 is malformed" in first["__connect.errors.exception.message"]
    assert json.loads(first["__connect.errors.source.offset"]) == {"line": 4}
    assert dead[0].value is None  # the errant record carries no value
    # the task hears of each errant record once it is dead-lettered (metadata None)
    eventually(lambda: len(COMMITTED["lines"]) == 10)
    assert sorted((n, m is None) for n, m in COMMITTED["lines"]) == [
        (n, n in (4, 10)) for n in range(1, 11)]
    metrics = herder.metrics()[0]
    assert metrics.errors == 2 and metrics.dead_lettered == 2
    assert herder.connector_status("lines").tasks[0].state is State.RUNNING


def test_a_batch_of_only_errant_records_without_a_dead_letter_topic_is_skipped(
        herder, worker_config):
    herder.create_connector(_config(lines=4, bad="1,2,3,4", batch=4, errors_tolerance="all"))
    eventually(lambda: _committed_line(herder) == 4, what="offset of line 4")
    assert read_topic(worker_config, "out") == []
    assert herder.metrics()[0].errors == 4
    assert herder.connector_status("lines").tasks[0].state is State.RUNNING


def test_an_errant_record_fails_the_task_under_tolerance_none(herder, worker_config):
    herder.create_connector(_config(lines=10, bad="5", batch=2))
    eventually(lambda: herder.connector_status("lines").tasks[0].state is State.FAILED)
    trace = herder.connector_status("lines").tasks[0].trace
    assert "TASK_POLL" in trace and "line 5 is malformed" in trace
    assert "{'line': 5}" in trace  # the record's source offset
    assert _committed_line(herder) in (None, 2, 4)  # never at or past the errant line
    assert [m.value.decode() for m in read_topic(worker_config, "out")] == [
        f"line {n}" for n in range(1, 5)]
