"""A small correct source and sink, and variants with one defect each, for the
connector acceptance self-tests.

The source reads the lines of a file, one record per line, offset = the next line's
number. The sink appends values to a file and makes them durable in ``flush``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from omconnect.config import ConfigDef, ConfigType
from omconnect.connector import SinkConnector, SinkTask, SourceConnector, SourceTask
from omconnect.records import SinkRecord, SourceRecord, TopicPartition

LINES_DEF = (ConfigDef()
             .define("path", ConfigType.STRING, documentation="The file to read.")
             .define("topic", ConfigType.STRING, documentation="The topic to write to.")
             .define("batch", ConfigType.INT, 5, documentation="Most lines per poll."))


class LinesTask(SourceTask):
    skip_on_resume = 0
    ignore_stop = False

    def version(self) -> str:
        return "1"

    def start(self, config: Mapping[str, Any]) -> None:
        self.path, self.topic = config["path"], config["topic"]
        self.batch = int(config.get("batch", 5))
        assert self.context is not None
        offset = self.context.offset_storage_reader.offset({"path": self.path})
        self.next = int(offset["line"]) + self.skip_on_resume if offset else 0
        self.stopped = threading.Event()

    def poll(self) -> Sequence[SourceRecord] | None:
        lines = Path(self.path).read_text().splitlines()
        if self.next >= len(lines):
            if self.ignore_stop and threading.current_thread().name != "MainThread":
                time.sleep(60)  # a long-poll that stop() does not interrupt
            self.stopped.wait(0.05)
            return None
        end = min(len(lines), self.next + self.batch)
        records = [SourceRecord(topic=self.topic, value=lines[i],
                                source_partition={"path": self.path},
                                source_offset={"line": i + 1}) for i in range(self.next, end)]
        self.next = end
        return records

    def stop(self) -> None:
        self.stopped.set()


class LinesSource(SourceConnector):
    task: type[LinesTask] = LinesTask
    definition = LINES_DEF

    def version(self) -> str:
        return "1"

    def config_def(self) -> ConfigDef:
        return self.definition

    def start(self, config: Mapping[str, Any]) -> None:
        self.config = dict(config)

    def task_class(self) -> type[SourceTask]:
        return self.task

    def task_configs(self, max_tasks: int) -> list[dict[str, Any]]:
        return [{k: v for k, v in self.config.items() if k in ("path", "topic", "batch")}]

    def stop(self) -> None:
        pass


class SkippingTask(LinesTask):
    skip_on_resume = 3


class SkippingSource(LinesSource):
    """Resumes a few lines after its committed offset: loses records."""

    task = SkippingTask


class StubbornTask(LinesTask):
    ignore_stop = True


class StubbornSource(LinesSource):
    """Blocks in poll for a minute when idle, whatever stop says."""

    task = StubbornTask


class UndocumentedSource(LinesSource):
    """Declares a setting without documentation."""

    definition = LINES_DEF.merge(ConfigDef().define("secret.knob", ConfigType.INT, 1))


class AppendTask(SinkTask):
    lazy = False

    def version(self) -> str:
        return "1"

    def start(self, config: Mapping[str, Any]) -> None:
        self.path = Path(config["path"])
        self.buffer: list[str] = []

    def put(self, records: Sequence[SinkRecord]) -> None:
        self.buffer.extend(str(r.value) for r in records)
        if not self.lazy:
            self._write()

    def _write(self) -> None:
        with self.path.open("a") as out:
            out.writelines(f"{line}\n" for line in self.buffer)
        self.buffer.clear()

    def flush(self, offsets: Mapping[TopicPartition, int]) -> None:
        if not self.lazy:
            self._write()

    def stop(self) -> None:
        self._write()


class AppendSink(SinkConnector):
    task: type[AppendTask] = AppendTask

    def version(self) -> str:
        return "1"

    def config_def(self) -> ConfigDef:
        return ConfigDef().define("path", ConfigType.STRING, documentation="File to append to.")

    def start(self, config: Mapping[str, Any]) -> None:
        self.config = dict(config)

    def task_class(self) -> type[SinkTask]:
        return self.task

    def task_configs(self, max_tasks: int) -> list[dict[str, Any]]:
        return [{"path": self.config["path"]}]

    def stop(self) -> None:
        pass


class LazyTask(AppendTask):
    lazy = True


class LazySink(AppendSink):
    """Writes only at stop, yet pre_commit declares everything put safe."""

    task = LazyTask


