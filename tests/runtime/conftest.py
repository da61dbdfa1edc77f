from __future__ import annotations

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


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Every runtime test whose sink comes from ``sink_config`` runs twice: with a sink
    taking records (``put``) and with one taking Arrow batches (``put_batch``, the
    columnar path).
    """
    code = metafunc.function.__code__
    own_class = any(isinstance(c, tuple) and "connector_class" in c for c in code.co_consts)
    if "sink_config" in code.co_names and not own_class:  # its own sink: one path
        metafunc.parametrize("sink_path", ["records", "columns"], indirect=True)


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


