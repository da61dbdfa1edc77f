"""Opening a configured transport: what the runtime and the Spark adapter share."""

from __future__ import annotations

import pytest

from omconnect.errors import ConfigError
from omconnect.runtime.worker_config import WorkerConfig
from omconnect.transport import open_transport, select_transport, transport_config_errors
from omconnect.transport.memory import MemoryTransport


def test_a_configuration_opens_the_transport_it_names_with_its_options() -> None:
    transport = open_transport({"transport": "memory", "memory.namespace": "selected",
                                "tasks.max": 3})  # keys of others are not its business
    try:
        assert isinstance(transport, MemoryTransport)
        assert transport.config["namespace"] == "selected"
    finally:
        transport.close()


def test_without_a_transport_key_the_embedded_transport_is_selected() -> None:
    assert select_transport({}).name == "embedded"


def test_an_unknown_transport_is_an_error_of_the_transport_key() -> None:
    selection, errors = transport_config_errors({"transport": "kafak"})
    assert selection is None
    assert "kafka" in errors["transport"][0]  # did you mean


def test_a_bad_option_value_is_named_as_written() -> None:
    with pytest.raises(ConfigError) as caught:
        select_transport({"transport": "embedded", "embedded.session.timeout.ms": "soon"})
    assert "embedded.session.timeout.ms" in (caught.value.errors or {})


def test_an_unknown_option_is_refused_when_the_transport_opens() -> None:
    with pytest.raises(ConfigError, match=r"memory\.namspace"):
        open_transport({"transport": "memory", "memory.namspace": "x"})


def test_the_worker_opens_its_transport_the_same_way() -> None:
    config = WorkerConfig.parse({"transport": "memory", "memory.namespace": "worker"})
    selection = select_transport({"transport": "memory", "memory.namespace": "worker"})
    assert (config.transport_class, config.transport_options) == \
        (selection.transport_class, selection.options)
