from __future__ import annotations

import inspect
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
import runtime_connectors
import runtime_support
from runtime_connectors import GATE, RELEASE_BLOCKED, reset_state
from runtime_support import eventually, read_topic, sink_config, source_config  # noqa: F401

from omconnect.runtime import StandaloneHerder
from omconnect.transport.memory import MemoryTransport


@pytest.fixture(autouse=True)
def _clean_state() -> Iterator[None]:
    reset_state()
    GATE.reset()
    yield
    RELEASE_BLOCKED.set()
    GATE.release()
    GATE.reset()


def _constants(code: Any) -> Iterator[Any]:
    for constant in code.co_consts:
        if isinstance(constant, tuple):
            yield from constant
        elif hasattr(constant, "co_consts"):
            yield from _constants(constant)
        else:
            yield constant


_RECORDS_ONLY_SOURCE = ("commit_record", "poison_at", "poison.at")
"""What a test of the per-record source relies on (see CountingBatchSource)."""


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Every runtime test whose connectors come from ``sink_config``/``source_config``
    runs twice: on the per-record path (``poll``/``put``) and on the columnar one, with
    a sink taking Arrow batches (``put_batch``) and a source returning them
    (``poll_batch``). A test that names its own connector class, or uses what only the
    per-record source has (``commit_record``, ``poison.at``), keeps that side per record,
    unless it takes the ``source_path`` fixture to tell the two apart itself.
    """
    code = metafunc.function.__code__
    words = set(code.co_names) | {c for c in _constants(code) if isinstance(c, str)}
    own_class = "connector_class" in words
    sink = "sink_config" in words and not own_class
    source = "source_config" in words and not own_class and (
        not words.intersection(_RECORDS_ONLY_SOURCE)
        or "source_path" in inspect.signature(metafunc.function).parameters)
    if sink or source:
        metafunc.parametrize(
            ("sink_path", "source_path"),
            [("records", "records"),
             ("columns" if sink else "records", "columns" if source else "records")],
            indirect=True, ids=["records", "columns"])


@pytest.fixture(autouse=True)
def sink_path(request: pytest.FixtureRequest) -> Iterator[str]:
    """The path of the test sink (see :func:`pytest_generate_tests`); a columns run
    checks afterwards that every put the sinks got was a ``put_batch``.
    """
    path = getattr(request, "param", "records")
    runtime_support.sink_path = path
    yield path
    runtime_support.sink_path = "records"
    if path == "columns":  # the sinks were the batch ones
        for name, state in list(runtime_connectors.STATE.items()):
            assert len(state["batch_puts"]) == len(state["put_batches"]), name


@pytest.fixture(autouse=True)
def source_path(request: pytest.FixtureRequest) -> Iterator[str]:
    """The path of the test source (see :func:`pytest_generate_tests`); a columns run
    checks afterwards that the runtime polled the sources' batches, never their
    records.
    """
    path = getattr(request, "param", "records")
    runtime_support.source_path = path
    yield path
    runtime_support.source_path = "records"
    if path == "columns":
        for name, state in list(runtime_connectors.STATE.items()):
            assert not state["record_polls"], f"{name} was polled record by record"


@pytest.fixture
def namespace() -> Iterator[str]:
    name = f"rt-{uuid.uuid4().hex[:10]}"
    yield name
    MemoryTransport.reset(name)


@pytest.fixture
def worker_config(namespace: str) -> dict[str, Any]:
    return {
        "transport": "memory",
        "memory.namespace": namespace,
        "offset.flush.interval.ms": 50,
        "task.shutdown.graceful.timeout.ms": 2000,
        "offset.flush.timeout.ms": 1000,
    }


@pytest.fixture
def gated_config(namespace: str) -> dict[str, Any]:
    assert runtime_connectors.GatedTransport.name == "gated"
    return {
        "transport": "gated",
        "gated.namespace": namespace,
        "offset.flush.interval.ms": 50,
        "task.shutdown.graceful.timeout.ms": 2000,
        "offset.flush.timeout.ms": 500,
    }


@pytest.fixture
def herder(worker_config: dict[str, Any]) -> Iterator[StandaloneHerder]:
    with StandaloneHerder(worker_config) as h:
        yield h


