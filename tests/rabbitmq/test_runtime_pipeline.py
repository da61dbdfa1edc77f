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
from omconnect_rabbitmq.testing import BrokerHandle

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
    if mode == "streams":
        worker["rabbitmq.streams"] = "true"
    else:
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
            "file": tmp_path / "out.txt", "topics": topic}),
    ]
    log = tmp_path / "worker.log"
    with log.open("wb") as err:
        worker_process = subprocess.Popen(
            [sys.executable, "-m", "omconnect.cli", "standalone", *args],
            stdout=subprocess.DEVNULL, stderr=err, stdin=subprocess.DEVNULL)
    out = tmp_path / "out.txt"
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and worker_process.poll() is None:
            if out.exists() and out.read_bytes().count(b"\n") >= LINES:
                break
            time.sleep(0.2)
    finally:
        worker_process.terminate()
        try:
            worker_process.wait(30)
        except subprocess.TimeoutExpired:
            worker_process.kill()
    assert out.exists(), f"no output; worker log:\n{log.read_text()[-3000:]}"
    got = out.read_bytes()
    lines = got.count(b"\n")
    assert got == source_text.encode(), \
        f"{lines} lines out of {LINES}; worker log:\n{log.read_text()[-3000:]}"


RESTART_LINES = 40_000


@pytest.mark.parametrize("mode", ["classic", "streams"])
def test_a_broker_restart_mid_pipeline_loses_no_line(tmp_path: Path, broker: BrokerHandle,
                                                     mode: str) -> None:
    """The worker keeps running across ``stop_app``/``start_app`` while lines flow: every
    line arrives (at-least-once: a batch the broker did not confirm is sent again, so
    repeats are allowed, losses are not).
    """
    topic = f"restart-{mode}"
    worker: dict[str, object] = {
        "transport": "rabbitmq", "rabbitmq.url": broker.url,
        "key.converter": "string", "value.converter": "string",
        "offset.flush.interval.ms": 500,
    }
    if mode == "streams":
        worker["rabbitmq.streams"] = "true"
    else:
        worker["rabbitmq.declare.groups"] = "connect-restart-out"
    expected = [f"line {i}" for i in range(RESTART_LINES)]
    (tmp_path / "in.txt").write_text("".join(f"{line}\n" for line in expected))
    args = [
        write_properties(tmp_path / "worker.properties", worker),
        write_properties(tmp_path / "source.properties", {
            "name": "restart-in", "connector.class": "FileStreamSource",
            "file": tmp_path / "in.txt", "topic": topic}),
        write_properties(tmp_path / "sink.properties", {
            "name": "restart-out", "connector.class": "FileStreamSink",
            "file": tmp_path / "out.txt", "topics": topic}),
    ]
    out = tmp_path / "out.txt"
    log = tmp_path / "worker.log"

    def written() -> set[str]:
        return set(out.read_text().splitlines()) if out.exists() else set()

    with log.open("wb") as err:
        worker_process = subprocess.Popen(
            [sys.executable, "-m", "omconnect.cli", "standalone", *args],
            stdout=subprocess.DEVNULL, stderr=err, stdin=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while len(written()) < 500 and time.monotonic() < deadline \
                and worker_process.poll() is None:
            time.sleep(0.05)
        before_restart = len(written())
        assert 0 < before_restart < RESTART_LINES, (
            f"{before_restart} lines before the restart: the restart must land mid-stream; "
            f"worker log:\n{log.read_text()[-3000:]}")
        broker.restart()
        back = len(written())
        assert back < RESTART_LINES, "the lines were all out before the broker came back"
        deadline = time.monotonic() + 120
        while len(written()) < RESTART_LINES and time.monotonic() < deadline \
                and worker_process.poll() is None:
            time.sleep(0.2)
    finally:
        worker_process.terminate()
        try:
            worker_process.wait(30)
        except subprocess.TimeoutExpired:
            worker_process.kill()
    got = out.read_text().splitlines()
    missing = set(expected) - set(got)
    assert not missing, (
        f"{len(missing)} of {RESTART_LINES} lines lost across the restart (e.g. "
        f"{sorted(missing, key=lambda s: int(s.split()[1]))[:3]}); {before_restart} were out "
        f"before it, {back} when the broker was back; worker log:\n{log.read_text()[-3000:]}")
    assert set(got) <= set(expected)  # nothing invented or torn
