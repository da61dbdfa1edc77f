"""The connector conformance suite on the built-in file connectors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from omconnect_datagen.source import DatagenConnector
from omconnect_file.sink import FileStreamSinkConnector
from omconnect_file.source import FileStreamSourceConnector

from omconnect.records import SourceRecord
from omconnect.testing import ConnectorConformance


class TestFileSourceAcceptance(ConnectorConformance):
    connector_class = FileStreamSourceConnector
    max_tasks = 1

    def connector_config(self, workdir: Path) -> dict[str, Any]:
        source = workdir / "in.txt"
        source.write_text("".join(f"line {i}\n" for i in range(60)))
        return {"file": str(source), "topic": "lines"}

    def work_units(self, config: dict[str, Any]) -> list[str]:
        return [config["file"]]

    def task_work_units(self, task_config: dict[str, Any]) -> list[str]:
        return [task_config["file"]]


class TestFileSinkAcceptance(ConnectorConformance):
    connector_class = FileStreamSinkConnector

    def connector_config(self, workdir: Path) -> dict[str, Any]:
        return {"file": str(workdir / "out.txt"), "topics": "lines"}

    def sink_state(self, config: dict[str, Any]) -> bytes:
        path = Path(config["file"])
        return path.read_bytes() if path.exists() else b""


class TestDatagenPayloadAcceptance(ConnectorConformance):
    """The data generator's columnar task (quickstart=payload): the suite drives it through
    the poll derived from poll_batch, so resuming, offsets and redelivery hold for it as
    for any source.
    """

    connector_class = DatagenConnector

    def connector_config(self, workdir: Path) -> dict[str, Any]:
        return {"topic": "payload", "quickstart": "payload", "max.messages": 300,
                "batch.size": 64, "payload.size": 16}

    def record_identity(self, record: SourceRecord) -> Any:
        return record.value
