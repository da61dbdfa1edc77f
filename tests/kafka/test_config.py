"""The transport's options: checked when it opens, each problem naming the key as the user
wrote it (no broker needed: no client connects before it is used; marked ``kafka`` so they
run where the client libraries are installed: ``tox -e kafka``).
"""

from __future__ import annotations

import pytest
from omconnect_kafka import KafkaTransport
from omconnect_kafka.client import DRIVERS

from omconnect import plugins
from omconnect.errors import ConfigError

pytestmark = pytest.mark.kafka

pytest.importorskip("kafka")
pytest.importorskip("confluent_kafka")


def test_registered_under_the_name_kafka():
    assert plugins.load(plugins.TRANSPORTS, "kafka") is KafkaTransport
    assert KafkaTransport.name == "kafka"


def test_a_misspelled_option_gets_a_did_you_mean():
    with pytest.raises(ConfigError) as caught:
        KafkaTransport({"bootstrap.server": "b:9092"})
    assert "kafka.bootstrap.server" in str(caught.value)
    assert "did you mean kafka.bootstrap.servers" in str(caught.value)


def test_an_unknown_driver_lists_the_drivers():
    with pytest.raises(ConfigError) as caught:
        KafkaTransport({"client.driver": "librdkafka"})
    assert "kafka.client.driver" in str(caught.value)
    assert all(name in str(caught.value) for name in DRIVERS)


def test_the_default_driver_is_confluent_when_it_is_installed_and_says_so(caplog):
    caplog.set_level("INFO", logger="omconnect_kafka.transport")
    transport = KafkaTransport({"bootstrap.servers": "127.0.0.1:1"})
    try:
        assert transport.config["client.driver"] == "auto"
        assert transport.driver_name == "confluent"
        assert type(transport.driver).__name__ == "ConfluentDriver"
    finally:
        transport.close()
    assert any("client driver confluent" in r.getMessage() for r in caplog.records)


def test_a_driver_set_explicitly_is_kept():
    transport = KafkaTransport({"bootstrap.servers": "127.0.0.1:1",
                                "client.driver": "kafka-python"})
    try:
        assert (transport.driver_name, type(transport.driver).__name__) == \
            ("kafka-python", "KafkaPythonDriver")
    finally:
        transport.close()


@pytest.mark.parametrize("key", ["request.timeout.ms", "max.request.size", "default.partitions"])
def test_a_bad_number_names_the_key(key):
    with pytest.raises(ConfigError) as caught:
        KafkaTransport({key: "soon"})
    assert f"kafka.{key}" in str(caught.value)


def test_a_misspelled_kafka_python_option_is_refused_when_the_transport_opens():
    with pytest.raises(ConfigError) as caught:
        KafkaTransport({"client.driver": "kafka-python", "producer.linger.msx": "5"})
    assert "kafka.producer.linger.msx" in str(caught.value)
    assert "did you mean kafka.producer.linger_ms" in str(caught.value)


def test_kafka_python_options_take_dotted_names_and_string_values():
    transport = KafkaTransport({"client.driver": "kafka-python", "producer.linger.ms": "5",
                                "consumer.max.poll.records": "100",
                                "producer.enable.idempotence": "false"})
    native = transport.driver._producer_options  # type: ignore[attr-defined]
    assert native == {"linger_ms": 5, "enable_idempotence": False}


def test_a_bad_kafka_python_option_value_names_the_key():
    with pytest.raises(ConfigError) as caught:
        KafkaTransport({"client.driver": "kafka-python", "producer.linger.ms": "later"})
    assert "kafka.producer.linger.ms" in str(caught.value)


@pytest.mark.parametrize("driver", DRIVERS)
@pytest.mark.parametrize(("key", "fix"), [
    ("consumer.enable.auto.commit", "commits only when asked"),
    ("consumer.group.id", "Transport.consumer(group)"),
    ("producer.bootstrap.servers", "kafka.bootstrap.servers"),
])
def test_options_the_transport_sets_itself_are_refused(driver, key, fix):
    with pytest.raises(ConfigError) as caught:
        KafkaTransport({"client.driver": driver, key: "x"})
    assert fix in str(caught.value)


def test_a_librdkafka_option_it_does_not_know_is_named_when_a_client_opens():
    transport = KafkaTransport({"client.driver": "confluent", "producer.linger.msx": "5"})
    with pytest.raises(ConfigError) as caught:
        transport.producer()
    assert "kafka.producer.linger.msx" in str(caught.value)
    assert caught.value.context["key"] == "kafka.producer.linger.msx"


def test_passwords_are_masked():
    transport = KafkaTransport({"security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN",
                                "sasl.username": "alice", "sasl.password": "s3cret-pw",
                                "ssl.key.password": "k3y-pw"})
    shown = repr(transport.config) + str(transport.settings)
    assert "s3cret-pw" not in shown and "k3y-pw" not in shown
    assert transport.settings.security["sasl.username"] == "alice"


def test_security_options_reach_the_kafka_python_client_spelling():
    transport = KafkaTransport({"client.driver": "kafka-python", "security.protocol": "sasl_ssl",
                                "sasl.mechanism": "SCRAM-SHA-512",
                                "sasl.username": "alice", "sasl.password": "pw",
                                "ssl.ca.location": "/etc/ca.pem",
                                "ssl.endpoint.identification.algorithm": "none"})
    common = transport.driver._common("producer")  # type: ignore[attr-defined]
    assert common["security_protocol"] == "SASL_SSL"
    assert common["sasl_mechanism"] == "SCRAM-SHA-512"
    assert (common["sasl_plain_username"], common["sasl_plain_password"]) == ("alice", "pw")
    assert common["ssl_cafile"] == "/etc/ca.pem" and common["ssl_check_hostname"] is False


def test_capabilities_declare_the_size_limit_below_max_request_size():
    capabilities = KafkaTransport({"max.request.size": 65536}).capabilities
    assert capabilities.max_message_bytes == 65536 - 512
    assert capabilities.replayable and capabilities.persistent and capabilities.consumer_groups
