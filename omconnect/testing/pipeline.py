"""Pipelines through ``omconnect standalone``: the promise, checked where users meet it.

A transport passing its own cases is not enough: the pipeline cases of the suite
(:mod:`omconnect.testing.transport.pipeline`) run a file source and a file sink through
real workers on the transport under test and compare what came out with what went in.
These are their pieces, public for transport authors who want more such runs::

    line_pipeline = LinePipeline(tmp_path, worker_settings_for(factory), lines=5000)
    worker = line_pipeline.start(line_pipeline.source_and_sink(), cross_process=True)
    assert worker.wait(timeout=120) == 0
    outcome = line_pipeline.outcome()
    assert not outcome.missing and not outcome.duplicated, outcome.describe()

A worker is ``python -m omconnect.cli standalone`` in a process of its own (its log in a
file), or, for a transport that lives in one process (``cross_process`` false), the same
run on a thread of this process, through the runtime calls the command makes
(:mod:`omconnect.runtime.standalone_run`): load and check the files, store the connector
configs, run until idle, stop.
"""

from __future__ import annotations

import collections
import logging
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from omconnect import plugins
from omconnect.config.types import Password
from omconnect.errors import ConfigError, ConnectError
from omconnect.testing.processes import kill_process_group, terminate_process_group

__all__ = [
    "RUNNING_MARK",
    "LinePipeline",
    "PipelineOutcome",
    "RunningWorker",
    "start_worker",
    "worker_settings_for",
    "write_properties",
]


_log = logging.getLogger(__name__)

RUNNING_MARK = "running connectors"
"""What ``omconnect standalone`` logs once every connector was started."""


def write_properties(path: Path, settings: Mapping[str, object]) -> str:
    """Write ``settings`` as a ``.properties`` file; its path as a string."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{k}={v}\n" for k, v in settings.items()), encoding="utf-8")
    return str(path)


def _as_property(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, Password):
        return value.value()
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple):
        return ",".join(str(v) for v in value)
    return str(value)


def worker_settings_for(transport_class: type, options: Mapping[str, Any]) -> dict[str, str]:
    """Worker settings that select ``transport_class`` with ``options``: ``transport`` and
    each option as ``<name>.<option>``.

    Raises:
        LookupError: The class is not registered under its ``name`` (entry point group
            ``omconnect.transports``), so a worker config cannot select it.

    """
    name = str(getattr(transport_class, "name", ""))
    try:
        registered = plugins.load(plugins.TRANSPORTS, name) if name else None
    except Exception:
        registered = None
    if registered is not transport_class:
        raise LookupError(
            f"transport class {transport_class.__module__}.{transport_class.__qualname__} is "
            f"not registered as {name!r} in the entry point group omconnect.transports, so "
            "a worker config cannot select it by name; register it (its entry-point name "
            "must equal its `name`)")
    settings = {"transport": name}
    for key, value in options.items():
        text = _as_property(value)
        if text is not None:
            settings[f"{name}.{key}"] = text
    return settings


class RunningWorker:
    """A running ``omconnect standalone``: a child process, or a thread of this one."""

    def __init__(self, process: subprocess.Popen[bytes] | None, thread: threading.Thread | None,
                 result: list[int], log: Path | None, log_start: int = 0) -> None:
        self._process = process
        self._thread = thread
        self._result = result
        self.log_path = log
        self._log_start = log_start  # a log file shared with earlier workers: ours after

    @property
    def cross_process(self) -> bool:
        """Whether the worker is a process of its own."""
        return self._process is not None

    def running(self) -> bool:
        """Whether the worker has not exited yet."""
        if self._process is not None:
            return self._process.poll() is None
        assert self._thread is not None
        return self._thread.is_alive()

    def wait_running(self, timeout: float) -> bool:
        """Wait until the worker has started its connectors (its log says ``running
        connectors``); a thread is taken as running. ``False`` if it exited or time ran
        out.
        """
        if self._process is None:
            return self.running()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if RUNNING_MARK in self.log():
                return True
            if self._process.poll() is not None:
                return False
            time.sleep(0.05)
        return False

    def wait(self, timeout: float) -> int | None:
        """Its exit status, waiting at most ``timeout`` seconds (``None``: still running)."""
        if self._process is not None:
            try:
                return self._process.wait(timeout)
            except subprocess.TimeoutExpired:
                return None
        assert self._thread is not None
        self._thread.join(timeout)
        return None if self._thread.is_alive() else self._result[0]

    def terminate(self, timeout: float = 60.0) -> int | None:
        """SIGTERM (a clean stop), then its exit status (SIGKILL after ``timeout``)."""
        if self._process is None:
            raise RuntimeError("a worker on a thread cannot be signalled; give it "
                               "stop_when_idle")
        if self._process.poll() is None:
            os.killpg(self._process.pid, signal.SIGTERM)
        try:
            return self._process.wait(timeout)
        except subprocess.TimeoutExpired:
            terminate_process_group(self._process, 5)
            return self._process.returncode

    def kill(self) -> None:
        """SIGKILL: no stop, no commit (a crash)."""
        if self._process is None:
            raise RuntimeError("a worker on a thread cannot be killed")
        kill_process_group(self._process)

    def log(self) -> str:
        """What this worker logged (its part of a process's log file, which earlier
        workers of the same pipeline may have written to first; empty for a thread).
        """
        if self.log_path is None or not self.log_path.exists():
            return ""
        with self.log_path.open("rb") as log:
            log.seek(self._log_start)
            return log.read().decode(errors="replace")

    def stop(self) -> None:
        """End it whatever its state (cleanup): SIGTERM, then SIGKILL."""
        if self._process is not None:
            terminate_process_group(self._process, 30)
        elif self._thread is not None:
            self._thread.join(120)


def start_worker(files: Sequence[str], *, cross_process: bool, log: Path | None = None,
                 stop_when_idle: float | None = None, options: Sequence[str] = ()) -> RunningWorker:
    """Start ``omconnect standalone FILES [--stop-when-idle SECONDS] OPTIONS``.

    Args:
        files: The worker config, then the connector configs.
        cross_process: In a process of its own (in its own process group, its standard
            error going to ``log``), or on a thread of this process.
        log: The log file of a process (default: ``worker.log`` beside the worker config).
        stop_when_idle: Stop cleanly once no task has moved a record for this many
            seconds; a worker on a thread needs it (it cannot be signalled).
        options: More command-line options of a process (e.g. ``--status-interval 1``).

    Raises:
        ValueError: A worker on a thread without ``stop_when_idle``, or with ``options``.

    """
    idle = ["--stop-when-idle", f"{stop_when_idle:g}"] if stop_when_idle else []
    if cross_process:
        args = ["standalone", *files, "--no-progress", *idle, *options]
        log = log or Path(files[0]).with_name("worker.log")
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        with log.open("ab") as err:
            start = err.tell()
            process = subprocess.Popen([sys.executable, "-m", "omconnect.cli", *args],
                                       stdout=subprocess.DEVNULL, stderr=err,
                                       stdin=subprocess.DEVNULL, env=env,
                                       start_new_session=True)
        return RunningWorker(process, None, [], log, start)
    if not stop_when_idle or options:
        raise ValueError("a worker on a thread cannot be signalled or given command-line "
                         "options: give it stop_when_idle and no options")
    result = [-1]
    window = stop_when_idle

    def run() -> None:
        result[0] = _run_until_idle(files, window)

    thread = threading.Thread(target=run, name="omconnect-pipeline-worker", daemon=True)
    thread.start()
    return RunningWorker(None, thread, result, None)


def _run_until_idle(files: Sequence[str], window: float) -> int:
    """Run a standalone worker on ``files`` here until it has been idle for ``window``
    seconds, as ``omconnect standalone --stop-when-idle`` does; its exit status (0 after
    a clean stop, 1 when a connector or task FAILED or the worker could not run, 2 for
    invalid configs).
    """
    from omconnect.runtime.idle_watch import IdleWatch
    from omconnect.runtime.standalone_run import (
        load_standalone_files,
        open_standalone,
        task_states,
    )

    try:
        herder = open_standalone(load_standalone_files(files[0], files[1:]))
    except ConfigError as exc:
        _log.error("invalid configs, nothing was started: %s", exc)
        return 2
    except ConnectError as exc:
        _log.error("the worker cannot run: %s", exc)
        return 1
    failed = False
    try:
        herder.start()
        watch = IdleWatch(window)
        while True:
            time.sleep(0.5)
            states, failed = task_states(herder)
            if watch.update(time.monotonic(), herder.metrics(), states):
                break
    except ConnectError as exc:
        _log.error("the worker cannot run: %s", exc)
        failed = True
    finally:
        herder.stop()
    return 1 if failed else 0


@attrs.frozen(kw_only=True)
class PipelineOutcome:
    """What a pipeline wrote, against what went in.

    Attributes:
        expected: Every line of the source file (unique).
        written: The sink file's lines, in order.
        exit_codes: The exit status of every worker that ran, in order.
        logs: The workers' logs (processes only).

    """

    expected: list[str]
    written: list[str]
    exit_codes: list[int | None]
    logs: list[str]

    @property
    def missing(self) -> int:
        """Lines of the source that never reached the sink."""
        return len(set(self.expected) - set(self.written))

    @property
    def duplicated(self) -> int:
        """Lines written more than once (each extra copy counts)."""
        counts = collections.Counter(self.written)
        return sum(n - 1 for n in counts.values() if n > 1)

    @property
    def unknown(self) -> int:
        """Written lines that are no line of the source (torn or invented)."""
        known = set(self.expected)
        return sum(1 for line in self.written if line not in known)

    def describe(self) -> str:
        """A summary for a failed assertion: counts, exit codes, the logs' ends."""
        tails = "\n".join(f"--- worker {i} log (end) ---\n{log[-2500:]}"
                          for i, log in enumerate(self.logs) if log)
        return (f"{self.missing} of {len(self.expected)} lines missing, {self.duplicated} "
                f"duplicated, {self.unknown} unknown; exit codes {self.exit_codes}\n{tails}")


class LinePipeline:
    """A file → topic → file pipeline in a directory of its own.

    Args:
        workdir: An empty directory (created when missing).
        transport: Worker settings selecting the transport (see
            :func:`worker_settings_for`).
        lines: How many lines the source file holds.
        partitions: ``topic.creation.default.partitions`` of the worker.
        tag: Makes topic and connector names unique (default: random).
        flush_ms: ``offset.flush.interval.ms``.

    """

    def __init__(self, workdir: Path, transport: Mapping[str, str], *, lines: int = 5000,
                 partitions: int = 1, tag: str | None = None, flush_ms: int = 500) -> None:
        self.workdir = workdir
        self.tag = tag or uuid.uuid4().hex[:8]
        self.topic = f"suite-lines-{self.tag}"
        workdir.mkdir(parents=True, exist_ok=True)
        self.expected = [f"line {i:07d} {self.tag}" for i in range(lines)]
        self.input = workdir / "in.txt"
        self.output = workdir / "out.txt"
        self.input.write_text("".join(f"{line}\n" for line in self.expected),
                              encoding="utf-8")
        self.worker_settings: dict[str, object] = {
            **transport, "key.converter": "string", "value.converter": "string",
            "offset.flush.interval.ms": flush_ms,
            "topic.creation.default.partitions": partitions}
        self._workers: list[RunningWorker] = []
        self._exit_codes: list[int | None] = []

    def worker_file(self, name: str = "worker") -> str:
        """A worker config (default settings apart from the transport and converters)
        in a directory of its own: ``<name>/worker.properties``.
        """
        return write_properties(self.workdir / name / "worker.properties",
                                self.worker_settings)

    def source_file(self, directory: str = "worker", name: str = "suite-source") -> str:
        """The file source's config (reads the input into the topic)."""
        return write_properties(self.workdir / directory / "source.properties", {
            "name": name, "connector.class": "FileStreamSource", "file": self.input,
            "topic": self.topic})

    def sink_file(self, directory: str = "worker", name: str = "suite-sink") -> str:
        """The file sink's config (writes the topic to the output)."""
        return write_properties(self.workdir / directory / "sink.properties", {
            "name": name, "connector.class": "FileStreamSink", "file": self.output,
            "topics": self.topic})

    def source_and_sink(self, directory: str = "worker") -> list[str]:
        """A worker config with the source and the sink: one worker runs both."""
        return [self.worker_file(directory), self.source_file(directory),
                self.sink_file(directory)]

    def start(self, files: Sequence[str], *, cross_process: bool,
              stop_when_idle: float | None = None, options: Sequence[str] = ()) -> RunningWorker:
        """Start a worker on ``files`` (see :func:`start_worker`); it is stopped by
        :meth:`close` if still running.
        """
        worker = start_worker(files, cross_process=cross_process,
                              stop_when_idle=stop_when_idle, options=options)
        self._workers.append(worker)
        return worker

    def finished(self, worker: RunningWorker, timeout: float) -> int | None:
        """Wait for ``worker`` to exit (at most ``timeout`` s) and note its status."""
        code = worker.wait(timeout)
        self._exit_codes.append(code)
        return code

    def written(self) -> list[str]:
        """The output's lines so far."""
        if not self.output.exists():
            return []
        return self.output.read_text(encoding="utf-8", errors="replace").splitlines()

    def wait_for_output(self, timeout: float, *, alive: Callable[[], bool] | None = None
                        ) -> bool:
        """Wait until every input line is out (``False`` after ``timeout``, or once
        ``alive`` says the workers have gone).
        """
        deadline = time.monotonic() + timeout
        wanted = set(self.expected)
        while time.monotonic() < deadline:
            if wanted <= set(self.written()):
                return True
            if alive is not None and not alive():
                return wanted <= set(self.written())
            time.sleep(0.1)
        return False

    def outcome(self) -> PipelineOutcome:
        """What came out, and how the workers ended."""
        return PipelineOutcome(expected=list(self.expected), written=self.written(),
                               exit_codes=list(self._exit_codes),
                               logs=[w.log() for w in self._workers])

    def close(self) -> None:
        """Stop every worker still running."""
        for worker in self._workers:
            if worker.running():
                worker.stop()
