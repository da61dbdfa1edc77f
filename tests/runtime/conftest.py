from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
import runtime_connectors
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


