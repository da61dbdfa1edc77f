"""Client exceptions become omconnect errors at the boundary, keeping the client's message
(real exception objects of both client libraries; no broker needed, but marked ``kafka``
so they run where the client libraries are installed: ``tox -e kafka``).
"""

from __future__ import annotations

import pytest
from omconnect_kafka.errors import ErrorContext, translate, translated_errors

from omconnect.errors import (
    ConfigError,
    MessageTooLargeError,
    RetriableError,
    RetriableTransportError,
    TransportError,
    TransportTimeoutError,
)

pytestmark = pytest.mark.kafka

kafka_errors_module = pytest.importorskip("kafka.errors")
ck = pytest.importorskip("confluent_kafka")


def test_kafka_python_timeout_is_retriable_timeout():
    error = translate(kafka_errors_module.KafkaTimeoutError("Unable to bootstrap"), "sending")
    assert isinstance(error, TransportTimeoutError) and isinstance(error, RetriableError)
    assert "Unable to bootstrap" in str(error)


def test_kafka_python_authentication_failure_is_fatal_with_the_brokers_message():
    cause = kafka_errors_module.SaslAuthenticationFailedError("invalid credentials for alice")
    error = translate(cause, "connecting")
    assert type(error) is TransportError
    assert "invalid credentials for alice" in str(error)
    assert error.__cause__ is cause


def test_kafka_python_too_large_names_size_limit_and_option():
    error = translate(kafka_errors_module.MessageSizeTooLargeError("too big"), "sending",
                      where=ErrorContext(2_000_000, 1_048_064, "kafka.max.request.size"),
                      topic="t")
    assert isinstance(error, MessageTooLargeError)
    assert (error.size, error.limit) == (2_000_000, 1_048_064)
    assert "1048064" in str(error) and "kafka.max.request.size" in str(error)


def test_kafka_python_retriable_broker_error_is_retriable():
    error = translate(kafka_errors_module.NotLeaderForPartitionError("moved"), "sending")
    assert isinstance(error, RetriableTransportError)


def test_kafka_python_configuration_error_is_a_config_error():
    error = translate(kafka_errors_module.KafkaConfigurationError("bad acks"), "opening")
    assert isinstance(error, ConfigError) and isinstance(error, ValueError)


@pytest.mark.parametrize(("code", "expected"), [
    (58, TransportError),               # SASL_AUTHENTICATION_FAILED
    (-169, TransportError),             # _AUTHENTICATION
    (-185, TransportTimeoutError),      # _TIMED_OUT
    (-195, TransportTimeoutError),      # _TRANSPORT (no broker reachable)
    (10, MessageTooLargeError),         # MSG_SIZE_TOO_LARGE
    (-186, ConfigError),                # _INVALID_ARG
])
def test_confluent_errors_by_code(code, expected):
    cause = ck.KafkaException(ck.KafkaError(code, "the broker's own words"))
    error = translate(cause, "doing it",
                      where=ErrorContext(10, 5, "kafka.max.request.size"))
    assert type(error) is expected
    if expected is not MessageTooLargeError:
        assert "the broker's own words" in str(error)


def test_confluent_retriable_error_is_retriable():
    cause = ck.KafkaException(ck.KafkaError(7, "request timed out", retriable=True))
    assert isinstance(translate(cause, "committing"), RetriableTransportError)


def test_a_full_local_queue_is_a_timeout():
    assert isinstance(translate(BufferError("Local: Queue full"), "sending"),
                      TransportTimeoutError)


def test_translated_errors_translates_and_lets_omconnect_errors_through():
    with pytest.raises(TransportTimeoutError) as caught, translated_errors("polling", topic="t"):
        raise kafka_errors_module.KafkaTimeoutError("slow")
    assert "polling" in str(caught.value) and caught.value.context["topic"] == "t"
    original = ConfigError("mine")
    with pytest.raises(ConfigError) as kept, translated_errors("anything"):
        raise original
    assert kept.value is original


def test_the_translation_passes_the_kits_check_on_both_clients():
    from omconnect.testing import TranslationCase, check_error_translation

    check_error_translation(lambda exc: translate(exc, "sending to 'orders'"), [
        TranslationCase(kafka_errors_module.KafkaTimeoutError("Unable to bootstrap"),
                        TransportTimeoutError, mentions=("Unable to bootstrap",)),
        TranslationCase(kafka_errors_module.SaslAuthenticationFailedError("bad creds"),
                        TransportError, mentions=("bad creds",)),
        TranslationCase(kafka_errors_module.NotLeaderForPartitionError("moved"),
                        RetriableTransportError, subclasses=True),
        TranslationCase(ck.KafkaException(ck.KafkaError(ck.KafkaError._TRANSPORT)),
                        RetriableTransportError, subclasses=True),
    ], action="sending to 'orders'")
