"""The RabbitMQ transport's pure parts, without a broker: the message codec, the key/value
record format, queue names and the translation of pika's errors.
"""

from __future__ import annotations

import pika.exceptions as pe
import pytest
from omconnect_rabbitmq import topology
from omconnect_rabbitmq.codec import amqp_headers, decode_headers, encode_headers, to_message
from omconnect_rabbitmq.errors import ErrorContext, translate
from omconnect_rabbitmq.kv_store import decode_items, encode_items

from omconnect.errors import (
    MessageTooLargeError,
    RetriableTransportError,
    TransportError,
    TransportTimeoutError,
)
from omconnect.transport import Message

TARGET = ErrorContext("127.0.0.1", 5672, "alice", "orders")


def test_headers_round_trip_in_order_with_repeats_and_nulls() -> None:
    headers = (("trace", b"1"), ("κλειδί", b""), ("trace", b"2"), ("null", None),
               ("bin", bytes(range(256))))
    assert decode_headers(encode_headers(headers)) == headers


def test_corrupt_headers_are_a_transport_error() -> None:
    with pytest.raises(TransportError, match="corrupt"):
        decode_headers(b"\x00\x00\x00\x09abc")


def test_message_round_trip_through_amqp_properties() -> None:
    import pika

    for key, value in ((b"k", b"v"), (None, b""), (b"", None)):
        message = Message("t", key, value, (("h", b"x"),), 1_700_000_000_123)
        properties = pika.BasicProperties(headers=amqp_headers(message, 1_700_000_000_123))
        back = to_message("t", 3, 42, properties, message.value or b"")
        assert back == Message("t", key, value, (("h", b"x"),), 1_700_000_000_123, 3, 42)


def test_key_value_records_round_trip() -> None:
    items = {"a": b"1", "empty": b"", "gone": None, "ключ": bytes(range(256))}
    assert dict(decode_items(encode_items(items))) == items
    assert decode_items(encode_items({})) == []


def test_long_names_stay_within_the_limit_and_distinct() -> None:
    first = topology.group_queue("g" * 200, "t" * 200, 1)
    second = topology.group_queue("g" * 200, "t" * 199 + "u", 1)
    assert len(first.encode()) <= 255 and len(second.encode()) <= 255
    assert first != second
    assert topology.group_queue("g", "t", 0) == "omc.q.g.t.0"


def test_broker_size_limit_becomes_message_too_large() -> None:
    closed = pe.ChannelClosedByBroker(
        406, "PRECONDITION_FAILED - message size 200 is larger than configured max size 100")
    error = translate(closed, action="publishing", where=TARGET)
    assert isinstance(error, MessageTooLargeError)
    assert (error.size, error.limit) == (200, 100)
    assert error.__cause__ is closed


def test_login_refused_names_user_and_vhost() -> None:
    error = translate(pe.ProbableAuthenticationError(
        "ConnectionClosedByBroker: (403) 'ACCESS_REFUSED - Login was refused'"),
        action="connecting", where=TARGET)
    assert type(error) is TransportError
    assert "'alice'" in str(error) and "'orders'" in str(error) and "ACCESS_REFUSED" in str(error)


def test_lost_connections_are_retriable_and_silence_times_out() -> None:
    forced = translate(pe.ConnectionClosedByBroker(320, "CONNECTION_FORCED - shutdown"),
                       action="publishing", where=TARGET)
    assert isinstance(forced, RetriableTransportError)
    silent = translate(pe.AMQPHeartbeatTimeout("no heartbeat"), action="reading",
                       where=TARGET, timeout=3.0)
    assert isinstance(silent, TransportTimeoutError) and "3 s" in str(silent)
    refused = translate(pe.ChannelClosedByBroker(406, "PRECONDITION_FAILED - inequivalent "
                                                      "arg 'x-max-age'"), action="declaring")
    assert type(refused) is TransportError and "inequivalent" in str(refused)


def test_the_translation_passes_the_kits_check() -> None:
    from omconnect.testing import TranslationCase, check_error_translation

    check_error_translation(lambda exc: translate(exc, action="publishing", where=TARGET), [
        TranslationCase(pe.ConnectionClosedByBroker(320, "CONNECTION_FORCED - shutdown"),
                        RetriableTransportError, subclasses=True),
        TranslationCase(pe.ProbableAuthenticationError("ACCESS_REFUSED - Login was refused"),
                        TransportError, mentions=("ACCESS_REFUSED", "'alice'")),
        TranslationCase(pe.ChannelClosedByBroker(406, "PRECONDITION_FAILED - message size 200 "
                                                      "is larger than max size 100"),
                        MessageTooLargeError),
    ], action="publishing")
