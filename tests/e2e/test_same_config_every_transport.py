"""The quick start's connector configs run unchanged on every transport.

``examples/quickstart/file-source.properties`` and ``file-sink.properties`` (file → topic
``quickstart-lines`` → file) are copied as they are; only the worker config changes, and
only in its ``transport`` key and that transport's own ``<name>.*`` connection options.
Each run copies a few thousand lines of mixed-script text and compares the output with
the input byte for byte.

The embedded and memory cases run in the unit environment; each broker case carries its
broker's marker (so it runs in that tox environment) and starts its own broker (a fresh
Tansu, pulsar-lite, redis-server, nats-server or RabbitMQ vhost), so the fixed topic and
connector names of the quick start never meet an earlier run's data. Every broker is
stopped at the end.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from omconnect.cli import main

REPO = Path(__file__).resolve().parents[2]
QUICKSTART = REPO / "examples" / "quickstart"
CONNECTOR_FILES = ("file-source.properties", "file-sink.properties")
LINES = 3000
NEWLINE = b"\n"


def _input_text() -> str:
    samples = ["ascii", "naïve café", "Grüße aus Köln", "日本語のテキスト", "Ελληνικά",
               "emoji 🚀✨🧪", "tab\tinside", "  leading and trailing  ",
               "quote \" and backslash \\", "עברית", "math ∑ ∞ ≠ ½"]
    return "".join(f"{i:05d} {samples[i % len(samples)]}\n" if i % 97 else "\n"
                   for i in range(LINES))


def _worker_properties(transport: str, options: dict[str, object]) -> str:
    """The quick start's worker config with ``transport`` changed, the embedded
    transport's own options replaced by ``transport``'s (written ``<transport>.<key>``),
    and every other line kept as it is.
    """
    kept = []
    for line in (QUICKSTART / "worker.properties").read_text(encoding="utf-8").splitlines():
        key = line.partition("=")[0].strip()
        if key == "transport":
            line = f"transport={transport}"
        elif key.startswith("embedded."):
            continue
        kept.append(line)
    kept += [f"{transport}.{key}={value}" for key, value in options.items()]
    return "\n".join(kept) + "\n"


def _run_quickstart(workdir: Path, monkeypatch: pytest.MonkeyPatch, transport: str,
                    options: dict[str, object], idle_seconds: float) -> None:
    """Runs ``omconnect standalone`` from ``workdir`` on the quick start's connector
    files and checks the output against the input, byte for byte, on every transport.
    """
    example = workdir / "examples" / "quickstart"
    example.mkdir(parents=True)
    for name in CONNECTOR_FILES:
        shutil.copyfile(QUICKSTART / name, example / name)
    (example / "input.txt").write_bytes(_input_text().encode("utf-8"))
    (example / "worker.properties").write_text(_worker_properties(transport, options),
                                               encoding="utf-8")
    monkeypatch.chdir(workdir)  # the quick start's files name paths relative to the root
    status = main(["standalone", *(f"examples/quickstart/{name}" for name in
                                   ("worker.properties", *CONNECTOR_FILES)),
                   "--stop-when-idle", str(idle_seconds), "--no-progress"])
    assert status == 0, f"omconnect standalone exited with {status} on {transport}"
    output = workdir / "quickstart-output.txt"
    assert output.exists(), f"the sink wrote nothing on {transport}"
    got, expected = output.read_bytes(), (example / "input.txt").read_bytes()
    if got != expected:
        pairs = enumerate(zip(got, expected, strict=False))
        differs_at = next((i for i, (a, b) in pairs if a != b), min(len(got), len(expected)))
        pytest.fail(f"{transport}: {got.count(NEWLINE)} of {expected.count(NEWLINE)} lines "
                    f"arrived; the output differs from the input at byte {differs_at}")


def test_the_connector_configs_are_the_quick_starts_own() -> None:
    # The broker cases below would prove nothing if the quick start's connector files
    # carried transport-specific settings: they must not.
    for name in CONNECTOR_FILES:
        text = (QUICKSTART / name).read_text(encoding="utf-8")
        for transport in ("embedded", "memory", "kafka", "rabbitmq", "pulsar", "redis",
                          "nats"):
            assert f"{transport}." not in text, f"{name} mentions {transport}"
    worker = _worker_properties("kafka", {"bootstrap.servers": "127.0.0.1:9092"})
    assert "transport=kafka\n" in worker and "embedded." not in worker
    assert "key.converter=string\n" in worker and "value.converter=string\n" in worker


def test_embedded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _run_quickstart(tmp_path, monkeypatch, "embedded", {"path": "quickstart-data"}, 2)


def test_memory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # In-process only: the worker runs in this process through the CLI's main().
    _run_quickstart(tmp_path, monkeypatch, "memory", {"namespace": str(tmp_path)}, 2)


def test_the_example_transport(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # docs/writing-a-transport.md's example (examples/sqlite_transport), installed as a
    # third-party transport would be.
    _run_quickstart(tmp_path, monkeypatch, "sqlite-log", {"path": "quickstart.db"}, 2)


@pytest.fixture
def broker_options(tmp_path_factory: pytest.TempPathFactory) -> Iterator[
        Callable[[str], dict[str, object]]]:
    """Starts a fresh broker of the named transport and returns its ``<name>.*``
    options for the worker config; stops every broker it started afterwards.
    """
    started: list[object] = []

    def start(transport: str) -> dict[str, object]:
        workdir = tmp_path_factory.mktemp(f"{transport}-broker")
        if transport == "kafka":
            from omconnect_testbrokers.kafka import TEST_CLIENT_OPTIONS
            from omconnect_testbrokers.kafka import start_broker as start_tansu
            tansu = start_tansu(workdir)
            started.append(tansu)
            return {"bootstrap.servers": tansu.url, **TEST_CLIENT_OPTIONS}
        if transport == "rabbitmq":
            from omconnect_testbrokers.rabbitmq import ensure_server_running
            from omconnect_testbrokers.rabbitmq import start_broker as start_vhost
            ensure_server_running()
            vhost = start_vhost(workdir)
            started.append(vhost)
            return {"url": vhost.url}  # the transport's defaults (stream topics)
        if transport == "redis":
            from omconnect_testbrokers.redis import start_broker as start_redis
            server = start_redis(workdir)
            started.append(server)
            return {"url": server.url}  # the transport's defaults
        if transport == "nats":
            from omconnect_testbrokers.nats import start_broker as start_nats
            server = start_nats(workdir)
            started.append(server)
            return {"servers": server.url}  # the transport's defaults
        from omconnect_testbrokers.pulsar import start_broker as start_lite
        lite = start_lite(workdir)
        started.append(lite)
        return {"service.url": lite.url}  # the transport's defaults

    yield start
    for handle in reversed(started):
        handle.stop()  # type: ignore[attr-defined]


@pytest.mark.kafka
def test_kafka(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
               broker_options: Callable[[str], dict[str, object]]) -> None:
    pytest.importorskip("kafka", reason="needs kafka-python (omconnect[kafka])")
    _run_quickstart(tmp_path, monkeypatch, "kafka", broker_options("kafka"), 5)


@pytest.mark.rabbitmq
def test_rabbitmq(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                  broker_options: Callable[[str], dict[str, object]]) -> None:
    pytest.importorskip("pika", reason="needs pika (omconnect[rabbitmq])")
    _run_quickstart(tmp_path, monkeypatch, "rabbitmq", broker_options("rabbitmq"), 5)


@pytest.mark.pulsar
def test_pulsar(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                broker_options: Callable[[str], dict[str, object]]) -> None:
    pytest.importorskip("pulsar", reason="needs pulsar-client (omconnect[pulsar])")
    # Byte for byte: what the broker sends again to a consumer that holds it is dropped
    # by the transport (pulsar-lite's Failover redeliveries included).
    _run_quickstart(tmp_path, monkeypatch, "pulsar", broker_options("pulsar"), 5)


@pytest.mark.redis
def test_redis(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
               broker_options: Callable[[str], dict[str, object]]) -> None:
    pytest.importorskip("redis", reason="needs redis-py (omconnect[redis])")
    _run_quickstart(tmp_path, monkeypatch, "redis", broker_options("redis"), 3)


@pytest.mark.nats
def test_nats(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
              broker_options: Callable[[str], dict[str, object]]) -> None:
    pytest.importorskip("nats", reason="needs nats-py (omconnect[nats])")
    _run_quickstart(tmp_path, monkeypatch, "nats", broker_options("nats"), 5)
