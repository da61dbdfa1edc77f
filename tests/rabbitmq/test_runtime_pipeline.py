"""The standalone runtime on the RabbitMQ transport: file → rabbitmq → file, byte for byte.

Classic mode needs the sink's group queues before the source produces (a group only
receives what is published after its queues exist), so the worker declares the sink's
group ``connect-lines-out`` with the topic (``rabbitmq.declare.groups``); stream mode needs
nothing of the kind.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from omconnect_testbrokers.rabbitmq import BrokerHandle

from omconnect.testing.pipeline_restart import run_across_restart
from omconnect.testing.processes import terminate_process_group

pytestmark = pytest.mark.rabbitmq

LINES = 3000


def write_properties(path: Path, settings: dict[str, object]) -> str:
    path.write_text("".join(f"{k}={v}\n" for k, v in settings.items()), encoding="utf-8")
    return str(path)


@pytest.mark.parametrize("mode", ["classic", "streams"])
def test_file_to_rabbitmq_to_file(tmp_path: Path, broker: BrokerHandle, mode: str) -> None:
    topic = f"lines-{mode}"
    worker: dict[str, object] = {
        "transport": "rabbitmq", "rabbitmq.url": broker.url,
        "key.converter": "string", "value.converter": "string",
        "offset.flush.interval.ms": 500,
    }
    if mode == "classic":  # streams are the default
        worker["rabbitmq.streams"] = "false"
        worker["rabbitmq.declare.groups"] = "connect-lines-out"
    source_text = "".join(f"line {i} {'é' * (i % 7)}\n" for i in range(LINES))
    (tmp_path / "in.txt").write_text(source_text, encoding="utf-8")
    args = [
        write_properties(tmp_path / "worker.properties", worker),
        write_properties(tmp_path / "source.properties", {
            "name": "lines-in", "connector.class": "FileStreamSource",
            "file": tmp_path / "in.txt", "topic": topic}),
        write_properties(tmp_path / "sink.properties", {
            "name": "lines-out", "connector.class": "FileStreamSink",
            "file": tmp_path / "out.txt", "topics": topic,
            "consumer.override.group.id": "connect-lines-out"}),
    ]
    log = tmp_path / "worker.log"
    with log.open("wb") as err:
        worker_process = subprocess.Popen(
            [sys.executable, "-m", "omconnect.cli", "standalone", *args],
            stdout=subprocess.DEVNULL, stderr=err, stdin=subprocess.DEVNULL,
            start_new_session=True)
    out = tmp_path / "out.txt"
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and worker_process.poll() is None:
            if out.exists() and out.read_bytes().count(b"\n") >= LINES:
                break
            time.sleep(0.2)
    finally:
        terminate_process_group(worker_process, 30)
    assert out.exists(), f"no output; worker log:\n{log.read_text()[-3000:]}"
    got = out.read_bytes()
    lines = got.count(b"\n")
    assert got == source_text.encode(), \
        f"{lines} lines out of {LINES}; worker log:\n{log.read_text()[-3000:]}"


@pytest.mark.parametrize("mode", ["classic", "streams"])
def test_a_broker_restart_mid_pipeline_loses_no_line(tmp_path: Path, broker: BrokerHandle,
                                                     mode: str) -> None:
    """The worker keeps running across ``stop_app``/``start_app`` while lines flow: every
    line arrives (at-least-once: a batch the broker did not confirm is sent again, so
    repeats are allowed, losses are not).
    """
    worker: dict[str, object] = {"transport": "rabbitmq", "rabbitmq.url": broker.url}
    if mode == "classic":  # streams are the default
        worker["rabbitmq.streams"] = "false"
        worker["rabbitmq.declare.groups"] = "connect-restart-out"
    run = run_across_restart(tmp_path, worker, restart=broker.restart)
    assert run.restarted_mid_stream, run.describe()
    assert not run.missing, run.describe()
    assert set(run.written) <= set(run.expected)  # nothing invented or torn
