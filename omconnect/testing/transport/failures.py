"""Transport cases: broker restarts, unreachable brokers, bad configuration
(TRANSPORT-50 to TRANSPORT-53).
"""

from __future__ import annotations

import time
import uuid
from typing import Any

import pytest

from omconnect.config.types import ConfigType
from omconnect.errors import ConfigError, RetriableError, TransportError
from omconnect.records import TopicPartition
from omconnect.testing.profile import TransportFactory
from omconnect.testing.transport.base import TransportCase, TransportHarness, message_ids
from omconnect.testing.waiting import Deadline, run_bounded
from omconnect.transport.messages import Message
from omconnect.transport.spi import Consumer, Producer

__all__ = ["FailureCases"]

_BREAKABLE = (ConfigType.INT, ConfigType.LONG, ConfigType.DOUBLE, ConfigType.BOOLEAN)


class FailureCases(TransportCase):
    """What happens when the broker goes away or the configuration is wrong."""

    def test_broker_restart_loses_no_acknowledged_message(self, harness: TransportHarness) -> None:
        """TRANSPORT-50: across a broker restart in the middle of a stream, no
        acknowledged message is lost (sends may fail and be retried meanwhile).
        """
        if harness.broker is None:
            pytest.skip("needs a broker_control (the test setup supplies no broker restart)")
        harness.require(persistent=True)
        topic, count = harness.topic(2), harness.count(200)
        acknowledged: set[bytes] = set()
        producer = harness.producer()
        half = count // 2
        for start in range(0, half, 20):
            batch = [f"r{i}".encode() for i in range(start, min(start + 20, half))]
            harness.send(producer, [Message(topic, value=v) for v in batch])
            acknowledged.update(batch)
        harness.broker.restart()
        deadline = Deadline(harness.settings.timeout * 2)
        pending = [f"r{i}".encode() for i in range(half, count)]
        while pending and not deadline.expired:
            batch, pending = pending[:20], pending[20:]
            try:
                harness.send(producer, [Message(topic, value=v) for v in batch])
                acknowledged.update(batch)
            except (TransportError, TimeoutError) as exc:
                pending = batch + pending  # not acknowledged: send again
                if not isinstance(exc, RetriableError):
                    producer = _fresh_producer(harness, producer)
        received = harness.receive(harness.subscribed(harness.group(), [topic]), len(acknowledged),
                               timeout=harness.settings.timeout * 2)
        lost = acknowledged - set(v for v in message_ids(received) if v is not None)
        assert not lost, (
            f"{len(lost)} acknowledged messages were lost across the restart (of "
            f"{len(acknowledged)}: {_sample(lost)}; the first {half} were sent before it); "
            f"received {len(received)}")

    def test_consumer_keeps_going_across_a_broker_restart(self, harness: TransportHarness) -> None:
        """TRANSPORT-53: a consumer subscribed while the broker restarts keeps going: a
        ``poll`` or ``commit`` meanwhile may raise a RetriableTransportError (and is
        called again, as the runtime does), and the same consumer then receives every
        message acknowledged before and after the restart, without those it committed.
        """
        if harness.broker is None:
            pytest.skip("needs a broker_control (the test setup supplies no broker restart)")
        harness.require(persistent=True)
        topic = harness.topic(1)
        tp = TopicPartition(topic, 0)
        consumer = harness.listening(harness.group(), [topic])
        before = [f"before-{i}".encode() for i in range(harness.count(50))]
        harness.produce(topic, before)
        first = _poll_through(consumer, set(before), Deadline(harness.settings.timeout))
        assert {m.value for m in first} >= set(before), "the consumer is not reading"
        last = max(m.offset for m in first if m.offset is not None)
        _commit_through(consumer, {tp: last + 1}, Deadline(harness.settings.timeout))
        harness.broker.restart()
        after = [f"after-{i}".encode() for i in range(harness.count(50))]
        producer = harness.producer()
        pending, deadline = list(after), Deadline(harness.settings.timeout * 2)
        while pending and not deadline.expired:
            try:
                harness.send(producer, [Message(topic, value=v) for v in pending[:10]])
                pending = pending[10:]
            except (TransportError, TimeoutError) as exc:
                if not isinstance(exc, RetriableError):
                    producer = _fresh_producer(harness, producer)
        assert not pending, f"{len(pending)} messages could not be sent after the restart"
        received = _poll_through(consumer, set(after), Deadline(harness.settings.timeout * 2))
        values = [m.value for m in received]
        missing = set(after) - set(values)
        assert not missing, (
            f"the consumer opened before the restart missed {len(missing)} of {len(after)} "
            f"messages sent after it: {_sample(missing)}")
        again = set(before) & set(values)
        assert not again, f"{len(again)} committed messages were delivered again"

    def test_unreachable_broker_fails_within_timeout(self, harness: TransportHarness) -> None:
        """TRANSPORT-51: against an unreachable broker, sending and admin calls fail with
        a TransportError within the configured timeout; they never hang.
        """
        unreachable = harness.unreachable
        if unreachable is None:
            pytest.skip("needs an unreachable_broker config (none supplied; a transport "
                        "without a broker has nothing to reach)")
        slack = unreachable.timeout + max(5.0, unreachable.timeout)
        bound = slack + 5.0

        def send_one() -> Any:
            transport = unreachable.factory()
            try:
                producer = transport.producer()
                future = producer.send([Message("omc-unreachable", value=b"x")])
                try:
                    future.result(timeout=slack)
                except TimeoutError as exc:
                    if isinstance(exc, TransportError):
                        raise
                    raise AssertionError(
                        f"a send to an unreachable broker was neither acknowledged nor "
                        f"failed within {slack:g} s (it hangs)") from None
                return "acknowledged"
            finally:
                _quietly_close(transport)

        def list_topics() -> Any:
            transport = unreachable.factory()
            try:
                admin = transport.admin()
                return admin.list_topics()
            finally:
                _quietly_close(transport)

        for what, call in (("send", send_one), ("Admin.list_topics", list_topics)):
            with pytest.raises(TransportError) as caught:
                result = run_bounded(call, bound, f"{what} to an unreachable broker")
                pytest.fail(f"{what} to an unreachable broker succeeded: {result!r}")
            assert str(caught.value), "the error says what failed"

    def test_bad_config_names_the_key(self, harness: TransportHarness) -> None:
        """TRANSPORT-52: a bad transport option is rejected with a ConfigError naming
        the key.
        """
        transport = harness.transport
        keys = list(type(transport).config_def)
        typed = [k for k in keys if k.type in _BREAKABLE]
        factory = TransportFactory.rebuilding(transport)
        if typed:
            key = typed[0]
            config = {**factory.config, key.name: f"not-a-{key.type.value}-{uuid.uuid4().hex[:4]}"}
        else:
            required = [k for k in keys if k.required]
            if not required:
                pytest.skip("needs a config_def with a typed or required key to break "
                            f"(transport {transport.name!r} declares none)")
            key = required[0]
            config = {k: v for k, v in factory.config.items() if k != key.name}
        with pytest.raises(ConfigError) as caught:
            TransportFactory(transport_class=factory.transport_class, config=config)()
        assert key.name in str(caught.value), f"the error does not name {key.name!r}"
        assert isinstance(caught.value, ValueError)

    def test_unknown_option_names_the_key(self, harness: TransportHarness) -> None:
        """TRANSPORT-75: an option the transport does not declare (and that is not one
        of its native client's pass-through prefixes) is rejected with a ConfigError
        naming it, before any client is opened.
        """
        factory = TransportFactory.rebuilding(harness.transport)
        key = f"no.such.option.{uuid.uuid4().hex[:6]}"
        with pytest.raises(ConfigError) as caught:
            TransportFactory(transport_class=factory.transport_class,
                             config={**factory.config, key: "1"})()
        assert key in str(caught.value), f"the error does not name the unknown key {key!r}"


def _poll_through(consumer: Consumer, wanted: set[bytes], deadline: Deadline
                  ) -> list[Message]:
    """Poll until every value of ``wanted`` arrived or the deadline passed, calling
    ``poll`` again after a retriable error (as the runtime does).
    """
    received: list[Message] = []
    seen: set[bytes | None] = set()
    while not wanted <= seen and not deadline.expired:
        try:
            batch = consumer.poll(500, 0.5)
        except RetriableError:
            time.sleep(0.2)
            continue
        received.extend(batch)
        seen.update(m.value for m in batch)
    return received


def _commit_through(consumer: Consumer, offsets: dict[TopicPartition, int],
                    deadline: Deadline) -> None:
    """Commit, trying again after a retriable error until the deadline."""
    while True:
        try:
            consumer.commit(offsets)
            return
        except RetriableError:
            if deadline.expired:
                raise
            time.sleep(0.2)


def _fresh_producer(harness: TransportHarness, old: Producer) -> Producer:
    _quietly_close(old)
    return harness.producer()


def _quietly_close(closeable: Any) -> None:
    try:
        closeable.close()
    except Exception:  # closing a client of a dead broker may fail too
        return


def _sample(values: set[bytes]) -> str:
    """A few of ``values``, in order (for a failure message)."""
    ordered = sorted(values, key=lambda v: (len(v), v))
    shown = [v.decode(errors="replace") for v in ordered[:3]]
    if len(ordered) > 6:
        shown.append("...")
    shown += [v.decode(errors="replace") for v in ordered[max(3, len(ordered) - 3):]]
    return ", ".join(shown)
