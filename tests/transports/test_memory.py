"""The memory transport: the shared in-core cases, plus what is particular to it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from incore_cases import InCoreTransportCases, MakeTransport, drain, send

from omconnect import plugins
from omconnect.records import TopicPartition
from omconnect.transport import Message, Transport
from omconnect.transport.memory import MemoryTransport


@pytest.fixture(autouse=True)
def fresh_memory() -> Iterator[None]:
    MemoryTransport.reset()
    yield
    MemoryTransport.reset()


class TestMemoryTransport(InCoreTransportCases):
    name = "memory"

    @pytest.fixture
    def make_transport(self) -> Iterator[MakeTransport]:
        opened: list[Transport] = []

        def make(**options: Any) -> Transport:
            transport = MemoryTransport(options)
            opened.append(transport)
            return transport

        yield make
        for transport in opened:
            transport.close()


def test_capabilities_say_in_process_only() -> None:
    capabilities = MemoryTransport().capabilities
    assert capabilities.replayable and capabilities.consumer_groups
    assert capabilities.ordered_per_key and capabilities.new_subscriber_receives_old_messages
    assert not capabilities.persistent and not capabilities.cross_process
    assert capabilities.max_message_bytes == 1024 * 1024


def test_namespaces_share_state_within_and_are_isolated_between() -> None:
    send(MemoryTransport({"namespace": "a"}), [Message("t", None, b"in a")])
    same = MemoryTransport({"namespace": "a"}).consumer(None)
    same.assign([TopicPartition("t", 0)])
    assert [m.value for m in drain(same, 1)] == [b"in a"]
    assert "t" not in MemoryTransport({"namespace": "b"}).admin().list_topics()


def test_reset_forgets_one_namespace() -> None:
    send(MemoryTransport({"namespace": "a"}), [Message("t", None, b"v")])
    send(MemoryTransport({"namespace": "b"}), [Message("t", None, b"v")])
    MemoryTransport.reset("a")
    assert MemoryTransport({"namespace": "a"}).admin().list_topics() == {}
    assert "t" in MemoryTransport({"namespace": "b"}).admin().list_topics()


def test_loaded_by_name_through_the_plugin_registry() -> None:
    if "memory" not in plugins.available(plugins.TRANSPORTS):
        pytest.skip("omconnect is not installed, so its entry points are not registered")
    assert plugins.load(plugins.TRANSPORTS, "memory") is MemoryTransport


def test_every_option_is_documented() -> None:
    doc = (Path(__file__).parents[2] / "docs" / "transports" / "memory.md").read_text()
    for key in MemoryTransport.config_def:
        assert f"`memory.{key.name}`" in doc, f"memory.{key.name} is not documented"
