"""A worker killed with SIGKILL at random moments, then restarted, loses no line.

Each trial appends new lines to the input, starts ``omconnect standalone`` (file source →
embedded transport → file sink) and kills it with SIGKILL after a random delay: before it
started, while it moves lines, or after it caught up. A last run finishes the job. The
output must hold every input line, in order, where the only repetitions are contiguous
re-deliveries after a restart (from the last committed source offset or sink position):
at-least-once, duplicates only within the uncommitted window.
"""

from __future__ import annotations

import random
import signal
import time

import pytest
from e2e_helpers import pipeline_files, redelivery_runs, run_cli, start_worker

TRIALS = 20
LINES_PER_TRIAL = 3000


@pytest.mark.slow
def test_sigkill_at_random_points_loses_nothing_and_only_redelivers(tmp_path):
    rng = random.Random(20240501)
    # Frequent commits, small batches: kills land between and during commits. A killed
    # worker's sink stays in its consumer group until the session times out: keep that
    # short so that each restarted sink gets the partition back quickly.
    args = pipeline_files(tmp_path, flush_ms=150, batch_size=200, extra_worker={
        "embedded.session.timeout.ms": 1000, "embedded.heartbeat.interval.ms": 200})
    expected: list[str] = []
    source = tmp_path / "in.txt"
    source.write_text("")
    output = tmp_path / "out.txt"
    log = tmp_path / "worker.log"
    for trial in range(TRIALS):
        with source.open("a", encoding="utf-8") as f:
            for n in range(LINES_PER_TRIAL):
                line = f"trial {trial:02d} line {n:04d} ✓ {rng.randrange(10**9)}"
                expected.append(line)
                f.write(line + "\n")
        worker = start_worker(args, log)
        if trial % 4 == 0:  # anywhere: while starting, moving lines, or caught up
            time.sleep(rng.uniform(0.2, 2.0))
        else:  # while lines are moving: once the output grows
            _wait_for_growth(output, timeout=10)
            time.sleep(rng.uniform(0.0, 0.2))
        worker.send_signal(signal.SIGKILL)
        worker.wait(timeout=30)
        assert worker.returncode == -signal.SIGKILL, log.read_text()[-2000:]
    # Idle for longer than the session timeout: the last killed sink is evicted first.
    final = run_cli(["standalone", *args, "--stop-when-idle", "4"])
    assert final.returncode == 0, final.stderr[-3000:]
    got = output.read_text(encoding="utf-8").splitlines()
    jumps = redelivery_runs(expected, got)
    # At most one re-delivered run per restart from each side (source and sink).
    print(f"{jumps} re-delivered runs, {len(got) - len(expected)} duplicate lines")
    assert jumps <= 2 * TRIALS
    assert len(got) >= len(expected)


def _wait_for_growth(path, timeout: float) -> None:
    size = path.stat().st_size if path.exists() else 0
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and path.stat().st_size > size:
            return
        time.sleep(0.01)
