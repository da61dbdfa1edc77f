"""Pipeline cases: the promise where users meet it (TRANSPORT-60 to TRANSPORT-65).

A file source and a file sink run through ``omconnect standalone`` workers on the
transport under test, with the worker's default settings apart from ``transport`` and
the transport's own options (those of the ``transport_factory``), and what comes out is
compared with what went in. Each case runs ``--omconnect-trials`` pipelines (default 2;
the promise is checked with 50), each with a fresh topic, fresh connectors and fresh
workers; odd trials create the topic with 3 partitions (or the transport's maximum).
Workers are processes of their own when the transport is ``cross_process``, threads of
the test process otherwise (see :mod:`omconnect.testing.pipeline`). Every case carries the
marker ``omconnect_pipeline``: ``pytest -m omconnect_pipeline --omconnect-trials 50``
runs the promise's full check.

The ``transport_factory`` must be rebuildable from a class and a config (a
:class:`~omconnect.testing.profile.TransportFactory`, or anything pickling to one), and
the class registered under its ``name`` (entry-point group ``omconnect.transports``), so
a worker config can select it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from omconnect.testing.pipeline import LinePipeline, PipelineOutcome, worker_settings_for
from omconnect.testing.profile import TransportFactory
from omconnect.testing.transport.base import TransportCase, TransportHarness

__all__ = ["PipelineCases", "Pipelines"]

_STARTUP_S = 2.0  # how long a worker started first gets before the next one starts


class Pipelines:
    """Builds and runs the line pipelines of one case.

    Args:
        harness: The case's harness.
        workdir: A directory for the case's files.

    """

    def __init__(self, harness: TransportHarness, workdir: Path) -> None:
        self.harness = harness
        self.workdir = workdir
        factory = harness.factory if isinstance(harness.factory, TransportFactory) \
            else harness.portable_factory()
        if not isinstance(factory, TransportFactory):
            factory = TransportFactory.rebuilding(harness.transport)
        try:
            self.transport = worker_settings_for(factory.transport_type(),
                                                 factory.config)
        except LookupError as exc:
            pytest.skip(f"needs a transport a worker config can select: {exc}")
        self.cross_process = harness.capabilities.cross_process
        settings = harness.settings
        self.trials = settings.trials
        self.lines = harness.count(5000)
        self.idle = settings.idle
        self.timeout = max(120.0, settings.timeout * 4)
        # Where a group gets only what is sent after it exists (classic RabbitMQ topics),
        # what the sink's group was not there for is refused and sent again, after later
        # lines: no loss, no duplicate, but not in order.
        self.ordered = harness.capabilities.new_subscriber_receives_old_messages
        self._made: list[LinePipeline] = []

    def new(self, trial: int, *, lines: int | None = None) -> LinePipeline:
        """A fresh pipeline for ``trial`` (odd trials: a topic of several partitions)."""
        partitions = 1 if trial % 2 == 0 else self.harness.partitions(3)
        pipeline = LinePipeline(self.workdir / f"trial-{trial:03d}", self.transport,
                                lines=lines or self.lines, partitions=partitions)
        self._made.append(pipeline)
        return pipeline

    def run(self, pipeline: LinePipeline, files: list[str], **kwargs: Any) -> int | None:
        """Run one worker on ``files`` until it stops by itself (``--stop-when-idle``)."""
        worker = pipeline.start(files, cross_process=self.cross_process,
                                stop_when_idle=self.idle, **kwargs)
        return pipeline.finished(worker, self.timeout)

    def verdict(self, trial: int, pipeline: LinePipeline) -> str | None:
        """What is wrong with ``pipeline``'s outcome as a clean run (``None``: nothing)."""
        return _verdict(trial, pipeline, pipeline.outcome(), ordered=self.ordered)

    def close(self) -> None:
        """Stop every worker still running."""
        for pipeline in self._made:
            pipeline.close()


def _verdict(trial: int, pipeline: LinePipeline, outcome: PipelineOutcome, *,
             ordered: bool = True) -> str | None:
    """What is wrong with a clean run's outcome (``None``: nothing): a line lost or
    duplicated, a torn line, a worker not exiting 0, or, on one partition of a transport
    that keeps messages for new groups (``ordered``), the order.
    """
    problems = []
    if outcome.missing or outcome.duplicated or outcome.unknown:
        problems.append(f"{outcome.missing} lost, {outcome.duplicated} duplicated, "
                        f"{outcome.unknown} unknown of {len(outcome.expected)}")
    if any(code != 0 for code in outcome.exit_codes):
        problems.append(f"exit codes {outcome.exit_codes}")
    ordered = ordered and pipeline.worker_settings["topic.creation.default.partitions"] == 1
    if ordered and not problems and outcome.written != outcome.expected:
        problems.append("the lines of a one-partition topic came out of order")
    if not problems:
        return None
    return f"trial {trial} ({pipeline.topic}): {'; '.join(problems)}\n{outcome.describe()}"


class PipelineCases(TransportCase):
    """The promise, end to end: nothing lost or duplicated in a clean run, on the
    transport's defaults, whether the sink starts with, after or before the source;
    standalone workers that keep to their own connectors; a worker killed and restarted.
    """

    @pytest.fixture
    def pipelines(self, harness: TransportHarness, tmp_path: Path) -> Iterator[Pipelines]:
        """The case's pipelines; workers still running afterwards are stopped."""
        made = Pipelines(harness, tmp_path)
        try:
            yield made
        finally:
            made.close()

    @pytest.mark.omconnect_pipeline
    def test_clean_runs_lose_and_duplicate_nothing(self, pipelines: Pipelines) -> None:
        """TRANSPORT-60: a file source and a file sink in one ``omconnect standalone``
        worker (default settings, ``--stop-when-idle``) copy every line exactly once, in
        order on one partition, and the worker exits 0; in every trial.
        """
        failures = []
        for trial in range(pipelines.trials):
            pipeline = pipelines.new(trial)
            pipelines.run(pipeline, pipeline.source_and_sink())
            failures.append(pipelines.verdict(trial, pipeline))
        _report(failures)

    @pytest.mark.omconnect_pipeline
    def test_a_sink_started_after_the_source_receives_everything(
            self, harness: TransportHarness, pipelines: Pipelines) -> None:
        """TRANSPORT-61 (capability ``new_subscriber_receives_old_messages``): a sink
        connector started in a worker of its own after the source's worker finished and
        exited receives every line the source sent, once.
        """
        harness.require(new_subscriber_receives_old_messages=True)
        failures = []
        for trial in range(pipelines.trials):
            pipeline = pipelines.new(trial)
            pipelines.run(pipeline, [pipeline.worker_file("source-worker"),
                                     pipeline.source_file("source-worker")])
            pipelines.run(pipeline, [pipeline.worker_file("sink-worker"),
                                     pipeline.sink_file("sink-worker")])
            failures.append(pipelines.verdict(trial, pipeline))
        _report(failures)

    @pytest.mark.omconnect_pipeline
    def test_a_sink_started_before_the_source_receives_everything(
            self, pipelines: Pipelines) -> None:
        """TRANSPORT-62: a sink connector started in a worker of its own before its topic
        exists waits for it (sinks never create topics) and receives every line a source
        in another worker then sends, once; both workers exit 0.
        """
        failures = []
        for trial in range(pipelines.trials):
            pipeline = pipelines.new(trial)
            sink = pipeline.start([pipeline.worker_file("sink-worker"),
                                   pipeline.sink_file("sink-worker")],
                                  cross_process=pipelines.cross_process,
                                  stop_when_idle=pipelines.idle)
            assert sink.wait(_STARTUP_S) is None, \
                "the sink's worker stopped before its topic existed"
            pipelines.run(pipeline, [pipeline.worker_file("source-worker"),
                                     pipeline.source_file("source-worker")])
            pipeline.finished(sink, pipelines.timeout)
            failures.append(pipelines.verdict(trial, pipeline))
        _report(failures)

    @pytest.mark.omconnect_pipeline
    def test_standalone_workers_keep_to_their_own_connectors(
            self, pipelines: Pipelines) -> None:
        """TRANSPORT-63: two standalone workers with default settings on one transport
        never run, list or resume each other's connectors, even connectors of the same
        name: worker B neither runs worker A's pipeline nor resumes its offsets; worker A,
        started again with its files, resumes from its own.
        """
        first, second = pipelines.new(0), pipelines.new(2)
        # The same connector names in both workers, on different files and topics.
        files_a, files_b = first.source_and_sink("a"), second.source_and_sink("b")
        pipelines.run(first, files_a)
        assert pipelines.verdict(0, first) is None, first.outcome().describe()
        extra = f"line {len(first.expected):07d} {first.tag}"
        with first.input.open("a", encoding="utf-8") as appended:
            appended.write(f"{extra}\n")  # worker B would copy it if it ran A's connectors
        pipelines.run(second, files_b)
        assert pipelines.verdict(2, second) is None, (
            "worker B did not copy its own lines exactly once (did it resume worker A's "
            f"offsets?): {second.outcome().describe()}")
        assert sorted(first.written()) == sorted(first.expected), (
            "worker B ran worker A's connectors: A's output changed while only B ran")
        first.expected.append(extra)
        pipelines.run(first, files_a)
        assert pipelines.verdict(1, first) is None, (
            f"worker A did not resume from its own offsets: {first.outcome().describe()}")

    @pytest.mark.omconnect_pipeline
    def test_a_killed_worker_restarted_loses_nothing_and_stops_cleanly(
            self, harness: TransportHarness, pipelines: Pipelines) -> None:
        """TRANSPORT-64 (capabilities ``cross_process``, ``persistent``): a worker killed
        (SIGKILL) mid-run and started again with the same files delivers every line
        (at-least-once: repeats allowed, no loss) and exits 0 when stopped with SIGTERM.
        """
        harness.require(cross_process=True, persistent=True)
        pipeline = pipelines.new(1, lines=pipelines.lines * 4)
        files = pipeline.source_and_sink()
        worker = pipeline.start(files, cross_process=True)
        _wait_for_lines(pipeline, len(pipeline.expected) // 10, pipelines.timeout,
                        worker.running)
        worker.kill()
        restarted = pipeline.start(files, cross_process=True)
        assert restarted.wait_running(pipelines.timeout), (
            f"the restarted worker did not start: {pipeline.outcome().describe()}")
        complete = pipeline.wait_for_output(pipelines.timeout, alive=restarted.running)
        code = restarted.terminate()
        outcome = pipeline.outcome()
        assert complete and not outcome.missing, (
            f"after a kill and a restart: {outcome.describe()}")
        assert outcome.unknown == 0, f"torn or invented lines: {outcome.describe()}"
        assert code == 0, \
            f"the restarted worker exited {code} on SIGTERM: {outcome.describe()}"

    @pytest.mark.omconnect_pipeline
    def test_a_broker_restart_mid_pipeline_loses_nothing(self, harness: TransportHarness,
                                                        pipelines: Pipelines) -> None:
        """TRANSPORT-65 (capabilities ``cross_process``, ``persistent``, with a broker the
        test setup can restart): a worker keeps running across a broker restart in the
        middle of a pipeline and every line arrives (at-least-once).
        """
        if harness.broker is None:
            pytest.skip("needs a broker_control (the test setup supplies no broker restart)")
        harness.require(cross_process=True, persistent=True)
        from omconnect.testing.pipeline_restart import run_across_restart

        workdir = pipelines.workdir / "restart"
        workdir.mkdir(parents=True, exist_ok=True)
        run = run_across_restart(workdir, pipelines.transport,
                                 restart=harness.broker.restart, lines=pipelines.lines * 4,
                                 timeout=pipelines.timeout)
        assert not run.missing, run.describe()


def _wait_for_lines(pipeline: LinePipeline, count: int, timeout: float,
                    alive: Callable[[], bool]) -> None:
    """Wait until ``count`` lines are out (fail when the worker stops or time is up)."""
    deadline = time.monotonic() + timeout
    while len(pipeline.written()) < count and time.monotonic() < deadline and alive():
        time.sleep(0.05)
    assert len(pipeline.written()) >= count, (
        f"only {len(pipeline.written())} lines out before the kill; "
        f"{pipeline.outcome().describe()}")


def _report(failures: list[str | None]) -> None:
    """Fail naming every trial that went wrong."""
    bad = [f for f in failures if f is not None]
    assert not bad, f"{len(bad)} of {len(failures)} trials failed:\n" + "\n".join(bad)
