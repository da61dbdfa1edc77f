"""Connectors on the columnar path, for tests/runtime/test_columnar_path.py."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

import pyarrow as pa
from runtime_connectors import STATE, _Connector

from omconnect.columnar import SourceBatch
from omconnect.config import ConfigDef, ConfigType
from omconnect.connector import BatchSinkTask, BatchSourceTask, SinkConnector, SourceConnector
from omconnect.connector.task import SinkTask, SourceTask
from omconnect.data import SchemaBuilder
from omconnect.data.schema import STRING_SCHEMA
from omconnect.errors import DataError, RetriableError
from omconnect.records import ErrantSourceRecord

_COUNT_SCHEMA = SchemaBuilder.struct().name("count").field("n", SchemaBuilder.int64()).build()


class ArrowTask(BatchSourceTask):
    """Makes ``rows`` rows in batches of ``batch``: values ``v<n>`` as ``string`` (or
    ``binary``) columns, keys ``k<n % 3>``; offset ``{"row": n}``.
    """

    def version(self) -> str:
        return "1.0"

    def start(self, config: Mapping[str, Any]) -> None:
        self.topic = config["topic"]
        self.rows = int(config["rows"])
        self.batch = int(config["batch"])
        self.kind = config["kind"]
        self.partition = {"arrow": config["name"]}
        stored = self.context.offset_storage_reader.offset(self.partition) or {}
        self.next = int(stored.get("row", 0))
        STATE[config["name"]]["resumed_at"].append(self.next)
        self.stopping = threading.Event()

    def poll_batch(self) -> SourceBatch | None:
        if self.next >= self.rows:
            self.stopping.wait(0.05)
            return None
        end = min(self.rows, self.next + self.batch)
        values = [f"v{n}" for n in range(self.next, end)]
        keys = [f"k{n % 3}" for n in range(self.next, end)]
        if self.kind == "binary":
            columns = [pa.array([k.encode() for k in keys]), pa.array([v.encode() for v in values])]
        elif self.kind == "big":  # row 7 is 4 KiB
            columns = [pa.array(keys), pa.array(["x" * 4096 if n == 7 else f"v{n}"
                                                 for n in range(self.next, end)])]
        elif self.kind == "tombstones":  # every third value is null
            columns = [pa.array(keys), pa.array([None if n % 3 == 0 else f"v{n}"
                                                 for n in range(self.next, end)], pa.string())]
        elif self.kind in ("struct", "typed-struct"):  # schemaless, or of _COUNT_SCHEMA
            columns = [pa.array(keys), pa.array([{"n": n} for n in range(self.next, end)])]
        elif self.kind == "mixed":  # row 10k+5 is unreadable: an errant record between batches
            return self._mixed(keys, values, end)
        else:
            columns = [pa.array(keys), pa.array(values)]
        self.next = end
        return SourceBatch(topic=self.topic, records=pa.RecordBatch.from_arrays(
            columns, names=["key", "value"]), source_partition=self.partition,
            source_offset={"row": end},
            key_schema=None if self.kind == "binary" else STRING_SCHEMA,
            value_schema=_COUNT_SCHEMA if self.kind == "typed-struct" else None)

    def _mixed(self, keys: list[str], values: list[str], end: int) -> list[Any]:
        """The rows as batches, with each unreadable row an ErrantSourceRecord between
        the batch before it and the batch after it.
        """
        items: list[Any] = []
        start = self.next
        run = 0
        for n in range(start, end + 1):
            if n < end and n % 10 != 5:
                continue
            if n > start + run:
                first, last = start + run, n
                items.append(SourceBatch(
                    topic=self.topic, records=pa.RecordBatch.from_arrays(
                        [pa.array(keys[first - start:last - start]),
                         pa.array(values[first - start:last - start])],
                        names=["key", "value"]),
                    source_partition=self.partition, source_offset={"row": last},
                    key_schema=STRING_SCHEMA))
            if n < end:
                items.append(ErrantSourceRecord(
                    topic=self.topic, key_schema=STRING_SCHEMA, key=keys[n - start],
                    source_partition=self.partition, source_offset={"row": n + 1},
                    error=DataError(f"row {n} is unreadable", row=n)))
            run = n + 1 - start
        self.next = end
        return items

    def stop(self) -> None:
        self.stopping.set()


class ArrowSource(_Connector, SourceConnector):
    CONFIG = (ConfigDef()
              .define("topic", ConfigType.STRING, "arrow-out", documentation="Topic.")
              .define("rows", ConfigType.INT, 100, documentation="Rows in all.")
              .define("batch", ConfigType.INT, 10, documentation="Rows per batch.")
              .define("kind", ConfigType.STRING, "string", documentation="Value type."))

    def task_class(self) -> type[SourceTask]:
        return ArrowTask


class BatchListTask(BatchSinkTask):
    """Keeps every batch it is given (``retriable.failures`` first puts fail)."""

    def version(self) -> str:
        return "1.0"

    def start(self, config: Mapping[str, Any]) -> None:
        self.name = config["name"]
        self.failures = int(config.get("retriable.failures", 0))
        self.report = set(str(config.get("report.values") or "").split(",")) - {""}

    def put_batch(self, batch: pa.RecordBatch) -> None:
        if self.failures > 0:
            self.failures -= 1
            raise RetriableError("busy")
        if self.report:
            values = batch.column("value").to_pylist()
            bad = [i for i, v in enumerate(values) if v in self.report]
            for i in bad:
                self.report_row(batch, i, ValueError(f"rejected {values[i]!r}"))
            keep = pa.array([i not in bad for i in range(len(values))])
            batch = batch.filter(keep)
        STATE[self.name]["batches"].append(batch)

    def stop(self) -> None:
        pass


class BatchListSink(_Connector, SinkConnector):
    CONFIG = (ConfigDef()
              .define("retriable.failures", ConfigType.INT, 0, documentation="Busy puts.")
              .define("report.values", ConfigType.STRING, "",
                      documentation="Values reported as errant rows."))

    def task_class(self) -> type[SinkTask]:
        return BatchListTask


def rows(name: str) -> list[dict[str, Any]]:
    """Every row the batch sink was given."""
    out: list[dict[str, Any]] = []
    for batch in list(STATE[name]["batches"]):
        out += batch.to_pylist()
    return out
