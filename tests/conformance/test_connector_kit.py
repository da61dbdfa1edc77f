"""The connector acceptance kit on the built-in file connectors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from omconnect_file.sink import FileStreamSinkConnector
from omconnect_file.source import FileStreamSourceConnector

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
