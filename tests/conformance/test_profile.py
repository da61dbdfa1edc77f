"""How a transport profile is resolved from a config file."""

from __future__ import annotations

import importlib
import importlib.metadata
import pickle
import warnings
from pathlib import Path

import pytest

from omconnect.errors import ConfigError
from omconnect.testing.profile import (
    PROFILE_ENTRY_POINTS,
    CommandBrokerControl,
    TransportFactory,
    TransportProfile,
    load_config_file,
    substitute_tmp,
)
from omconnect.transport.memory import MemoryTransport


def test_conformance_keys_configure_the_kit_and_the_rest_the_transport(tmp_path: Path) -> None:
    config = tmp_path / "suite.yaml"
    config.write_text(
        "memory.namespace: '{tmp}'\n"
        "default.partitions: 3\n"
        "conformance:\n"
        "  restart.command: 'true'\n"
        "  unreachable.config.namespace: elsewhere\n"
        "  unreachable.timeout: 2.5\n"
        "  xfail.test_seek_back_redelivers: the broker ignores seek\n")
    profile = TransportProfile.resolve(MemoryTransport, load_config_file(config), tmp_path)
    assert profile.config == {"namespace": "{tmp}", "default.partitions": 3}
    assert profile.broker == CommandBrokerControl(command="true")
    assert profile.unreachable_config == {"namespace": "elsewhere"}
    assert profile.unreachable_timeout == 2.5
    assert profile.expected_failures == {"test_seek_back_redelivers": "the broker ignores seek"}


def test_a_failing_restart_command_says_why() -> None:
    with pytest.raises(RuntimeError, match="exited 3: nope"):
        CommandBrokerControl(command="echo nope >&2; exit 3").restart()


def test_profile_hook_that_cannot_be_imported_names_the_key(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        TransportProfile.resolve(MemoryTransport, {"conformance.profile": "no.such:thing"},
                                 tmp_path)
    assert caught.value.context["key"] == "conformance.profile"


def test_a_bad_unreachable_timeout_names_the_key(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"conformance\.unreachable\.timeout"):
        TransportProfile.resolve(MemoryTransport, {"conformance.unreachable.timeout": "soon"},
                                 tmp_path)


def test_embedded_transport_ships_a_profile(tmp_path: Path) -> None:
    from omconnect.transport.embedded import EmbeddedTransport

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # found by its entry point, not by convention
        profile = TransportProfile.resolve(EmbeddedTransport, {}, tmp_path)
    assert "{tmp}" in profile.config["path"]


def test_the_test_brokers_register_their_profiles_by_transport_name() -> None:
    registered = {e.name: e.value for e in
                  importlib.metadata.entry_points(group=PROFILE_ENTRY_POINTS)}
    assert registered["kafka"] == "omconnect_testbrokers.kafka:conformance_profile"
    assert registered["rabbitmq"] == "omconnect_testbrokers.rabbitmq:conformance_profile"
    assert registered["pulsar"] == "omconnect_testbrokers.pulsar:conformance_profile"
    assert registered["nats"] == "omconnect_testbrokers.nats:conformance_profile"


def test_a_transport_without_a_registered_profile_gets_an_empty_one(tmp_path: Path) -> None:
    profile = TransportProfile.resolve(MemoryTransport, {"namespace": "x"}, tmp_path)
    assert profile.config == {"namespace": "x"}
    assert profile.broker is None
    assert profile.unreachable_config is None


def test_factory_is_picklable_and_reopens_the_same_storage(tmp_path: Path) -> None:
    factory = TransportFactory.of(MemoryTransport,
                                  substitute_tmp({"namespace": "{tmp}"}, tmp_path))
    assert factory.config == {"namespace": str(tmp_path)}
    clone = pickle.loads(pickle.dumps(factory))
    first = factory()
    first.kv_store("s").put("k", b"v")
    assert clone().kv_store("s").get("k") == b"v"
