"""Worker and connector configs: validated before anything starts, errors name the key."""

from __future__ import annotations

import logging

import pytest
from runtime_connectors import STATE
from runtime_support import read_topic, sink_config, source_config

from omconnect.errors import ConfigError
from omconnect.runtime import StandaloneHerder, WorkerConfig


def test_worker_defaults_follow_kafka_connect():
    config = WorkerConfig.parse({"embedded.path": "/tmp/x"})
    assert config.transport_name == "embedded"
    assert config["offset.flush.interval.ms"] == 10000
    assert config["task.shutdown.graceful.timeout.ms"] == 5000
    assert config["key.converter"] == config["value.converter"] == "json"
    assert config.transport_options == {"path": "/tmp/x"}


def test_a_bad_transport_option_is_named_with_its_prefix():
    with pytest.raises(ConfigError) as caught:
        WorkerConfig.parse({"transport": "memory", "memory.default.partitions": "zero"})
    assert "memory.default.partitions" in caught.value.errors


def test_an_unknown_transport_is_named_with_a_suggestion():
    with pytest.raises(ConfigError) as caught:
        WorkerConfig.parse({"transport": "memroy"})
    assert "transport" in caught.value.errors
    assert "did you mean 'memory'" in str(caught.value)


def test_kafka_connect_worker_keys_are_accepted_with_a_note(caplog):
    kafka_connect_file = {
        "bootstrap.servers": "localhost:9092",
        "key.converter": "org.apache.kafka.connect.json.JsonConverter",
        "value.converter": "org.apache.kafka.connect.json.JsonConverter",
        "key.converter.schemas.enable": "true",
        "value.converter.schemas.enable": "true",
        "offset.storage.file.filename": "/tmp/connect.offsets",
        "offset.flush.interval.ms": "10000",
        "plugin.path": "/usr/share/java",
        "transport": "memory",
    }
    with caplog.at_level(logging.INFO):
        config = WorkerConfig.parse(kafka_connect_file)
    notes = " ".join(config.notes)
    for key in ("bootstrap.servers", "offset.storage.file.filename", "plugin.path"):
        assert key in notes and key in caplog.text
    assert "key.converter.schemas.enable" not in notes


def test_options_of_other_transports_may_stay_in_the_file():
    config = WorkerConfig.parse({"transport": "memory", "embedded.path": "/tmp/x",
                                 "kafka.bootstrap.servers": "b:9092"})
    assert config.transport_options == {}
    assert any("kafka.bootstrap.servers" in note for note in config.notes)


@pytest.mark.parametrize(("change", "key"), [
    ({"tasks.max": "0"}, "tasks.max"),
    ({"connector.class": "runtime_connectors:NoSuchThing"}, "connector.class"),
    ({"connector.class": None}, "connector.class"),
    ({"topic": None}, "topic"),
    ({"errors.tolerance": "some"}, "errors.tolerance"),
    ({"value.converter": "jsn"}, "value.converter"),
    ({"transforms": "x", "transforms.x.type": "NoSuchTransform"}, "transforms.x.type"),
    ({"delivery.guarantee": "twice"}, "delivery.guarantee"),
])
def test_a_bad_connector_config_is_rejected_before_anything_starts(herder, worker_config,
                                                                   change, key):
    config = {k: v for k, v in {**source_config(records=5), **change}.items()
              if v is not None}
    with pytest.raises(ConfigError) as caught:
        herder.create_connector(config)
    assert key in caught.value.errors, caught.value.errors
    assert key in str(caught.value)
    assert herder.connectors() == []
    assert "counting" not in STATE
    assert read_topic(worker_config, "counting-out") == []


def test_a_sink_needs_exactly_one_of_topics_and_topics_regex(herder):
    with pytest.raises(ConfigError) as caught:
        herder.create_connector(sink_config(topics=""))
    assert "topics" in caught.value.errors
    with pytest.raises(ConfigError) as caught:
        herder.create_connector(sink_config(**{"topics.regex": "in.*"}))
    assert "topics" in caught.value.errors
    with pytest.raises(ConfigError) as caught:
        herder.create_connector(sink_config(errors_deadletterqueue_topic_name="in"))
    assert "errors.deadletterqueue.topic.name" in caught.value.errors


def test_validation_reports_every_problem_in_kafka_connect_shape(herder):
    result = herder.validate_connector_config({"connector.class":
                                               "runtime_connectors:CountingSource",
                                               "tasks.max": "-1"})
    assert not result.ok
    assert set(k for k, v in result.errors.items() if v) == {"name", "tasks.max", "topic"}
    shape = result.to_dict()
    assert shape["error_count"] == 3
    names = {c["value"]["name"] for c in shape["configs"]}
    assert {"name", "tasks.max", "topic", "errors.tolerance"} <= names


def test_exactly_once_is_refused_on_embedded_naming_what_cannot(tmp_path):
    config = {"transport": "embedded", "embedded.path": str(tmp_path)}
    with StandaloneHerder(config) as herder:
        with pytest.raises(ConfigError) as caught:
            herder.create_connector(source := source_config(
                delivery_guarantee="exactly-once"))
        message = str(caught.value)
        assert "delivery.guarantee" in caught.value.errors
        assert source["connector.class"].replace(":", ".") in message
        assert "exactly_once_support" in message
        with pytest.raises(ConfigError) as caught:
            herder.create_connector({**source_config(delivery_guarantee="exactly-once"),
                                     "connector.class":
                                     "runtime_connectors:ExactlyOnceCountingSource"})
        assert "'embedded'" in str(caught.value) and "transactions" in str(caught.value)
        assert herder.connectors() == []


def test_the_worker_default_delivery_guarantee_applies(tmp_path):
    config = {"transport": "embedded", "embedded.path": str(tmp_path),
              "delivery.guarantee": "exactly-once"}
    with StandaloneHerder(config) as herder, pytest.raises(ConfigError):
        herder.create_connector(source_config())


def test_connector_converter_overrides_apply(herder, worker_config):
    herder.create_connector(source_config(records=3, value_converter="string",
                                          key_converter="string"))
    from runtime_support import eventually

    eventually(lambda: len(read_topic(worker_config, "counting-out")) == 3)
    assert [m.value for m in read_topic(worker_config, "counting-out")] == [
        b"s0-0", b"s0-1", b"s0-2"]


def test_plugins_are_listed_with_versions():
    plugins = StandaloneHerder.plugins(["transport", "converter"])
    names = {(p.kind, p.name) for p in plugins}
    assert ("transport", "memory") in names and ("converter", "json") in names
    assert all(p.version for p in plugins if p.problem is None)
    with pytest.raises(ValueError, match="known"):
        StandaloneHerder.plugins(["nope"])


def test_worker_converters_are_checked_and_kafka_connect_class_names_resolve():
    with pytest.raises(ConfigError) as caught:
        WorkerConfig.parse({"transport": "memory", "value.converter": "jsn"})
    assert "value.converter" in caught.value.errors
    config = WorkerConfig.parse({
        "transport": "memory",
        "key.converter": "org.apache.kafka.connect.storage.StringConverter",
        "value.converter": "org.apache.kafka.connect.json.JsonConverter",
        "value.converter.schemas.enable": "false"})
    assert config["value.converter.schemas.enable"] == "false"
