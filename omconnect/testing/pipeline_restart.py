"""A standalone worker running file → transport → file while the broker restarts.

Transport authors with a broker they can restart use it to check the whole runtime, not
only the transport API (TRANSPORT-50 covers that), across the restart::

    run = run_across_restart(tmp_path, {"transport": "rabbitmq", "rabbitmq.url": url},
                             restart=broker.restart)
    assert not run.missing, run.describe()

The worker is ``python -m omconnect.cli standalone`` in a subprocess: a file source reads
``lines`` numbered lines, a file sink writes them back. Once some lines are out, the
broker restarts (the worker keeps running); the run ends when every line is out or after
``timeout`` seconds. At-least-once allows repeats, never a missing line.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from pathlib import Path

import attrs

from omconnect.testing.pipeline import RunningWorker, start_worker, write_properties

__all__ = ["RestartRun", "run_across_restart"]


@attrs.frozen(kw_only=True)
class RestartRun:
    """What a :func:`run_across_restart` saw.

    Attributes:
        expected: Every line the source file holds.
        written: The sink file's lines, in order (repeats included).
        before_restart: Distinct lines out when the restart began.
        when_back: Distinct lines out when the broker was back.
        log: The worker's log (standard error).

    """

    expected: list[str]
    written: list[str]
    before_restart: int
    when_back: int
    log: str

    @property
    def missing(self) -> set[str]:
        """Lines of the source that never reached the sink."""
        return set(self.expected) - set(self.written)

    @property
    def restarted_mid_stream(self) -> bool:
        """Whether the restart began, and ended, while lines were still to come."""
        return self.before_restart > 0 and self.when_back < len(self.expected)

    def describe(self) -> str:
        """A summary for a failed assertion: counts, a few missing lines, the log's end."""
        missing = sorted(self.missing, key=lambda line: int(line.split()[1]))
        return (f"{len(missing)} of {len(self.expected)} lines missing (e.g. {missing[:3]}); "
                f"{self.before_restart} were out when the restart began, {self.when_back} "
                f"when the broker was back; worker log:\n{self.log[-3000:]}")


def run_across_restart(
    workdir: Path,
    worker: Mapping[str, object],
    *,
    restart: Callable[[], object],
    lines: int = 40_000,
    restart_after: int = 500,
    timeout: float = 120.0,
) -> RestartRun:
    """Run the pipeline in ``workdir``, restarting the broker after ``restart_after``
    lines are out.

    Args:
        workdir: An empty directory for the files and the worker's log.
        worker: Worker settings (the transport and its options); string converters are
            added.
        restart: Restarts the broker and returns once it accepts clients again.
        lines: Lines to move.
        restart_after: Distinct lines out before the restart.
        timeout: Seconds to wait for every line after the restart (and for the first
            ones before it).

    """
    expected = [f"line {i}" for i in range(lines)]
    (workdir / "in.txt").write_text("".join(f"{line}\n" for line in expected))
    out = workdir / "out.txt"
    settings = {"key.converter": "string", "value.converter": "string",
                "offset.flush.interval.ms": 500, **worker}
    args = [
        write_properties(workdir / "worker.properties", settings),
        write_properties(workdir / "source.properties", {
            "name": "restart-in", "connector.class": "FileStreamSource",
            "file": workdir / "in.txt", "topic": "restart-lines"}),
        write_properties(workdir / "sink.properties", {
            "name": "restart-out", "connector.class": "FileStreamSink",
            "file": out, "topics": "restart-lines",
            # the group a transport may be told to declare before the first send
            "consumer.override.group.id": "connect-restart-out"}),
    ]

    def written() -> set[str]:
        return set(out.read_text().splitlines()) if out.exists() else set()

    running = start_worker(args, cross_process=True, log=workdir / "worker.log")
    before = back = 0
    try:
        _wait(lambda: len(written()) >= restart_after, running, timeout)
        before = len(written())
        if 0 < before < lines:
            restart()
            back = len(written())
            _wait(lambda: len(written()) >= lines, running, timeout)
    finally:
        running.stop()
    got = out.read_text().splitlines() if out.exists() else []
    return RestartRun(expected=expected, written=got, before_restart=before, when_back=back,
                      log=running.log())


def _wait(condition: Callable[[], bool], worker: RunningWorker, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not condition() and time.monotonic() < deadline and worker.running():
        time.sleep(0.05)
