"""Transport cases: broker restarts, unreachable brokers, bad configuration
(TRANSPORT-50 to TRANSPORT-52).
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from omconnect.config.types import ConfigType
from omconnect.errors import ConfigError, RetriableError, TransportError
from omconnect.testing.profile import TransportFactory
from omconnect.testing.transport.base import Kit, TransportCase, message_ids
from omconnect.testing.waiting import Deadline, run_bounded
from omconnect.transport.messages import Message
from omconnect.transport.spi import Producer

__all__ = ["FailureCases"]

_BREAKABLE = (ConfigType.INT, ConfigType.LONG, ConfigType.DOUBLE, ConfigType.BOOLEAN)


class FailureCases(TransportCase):
    """What happens when the broker goes away or the configuration is wrong."""

    def test_broker_restart_loses_no_acknowledged_message(self, kit: Kit) -> None:
        """TRANSPORT-50: across a broker restart in the middle of a stream, no
        acknowledged message is lost (sends may fail and be retried meanwhile).
        """
        if kit.broker is None:
            pytest.skip("needs a broker_control (the test setup supplies no broker restart)")
        kit.require(persistent=True)
        topic, count = kit.topic(2), kit.count(200)
        acknowledged: set[bytes] = set()
        producer = kit.producer()
        half = count // 2
        for start in range(0, half, 20):
            batch = [f"r{i}".encode() for i in range(start, min(start + 20, half))]
            kit.send(producer, [Message(topic, value=v) for v in batch])
            acknowledged.update(batch)
        kit.broker.restart()
        deadline = Deadline(kit.settings.timeout * 2)
        pending = [f"r{i}".encode() for i in range(half, count)]
        while pending and not deadline.expired:
            batch, pending = pending[:20], pending[20:]
            try:
                kit.send(producer, [Message(topic, value=v) for v in batch])
                acknowledged.update(batch)
            except (TransportError, TimeoutError) as exc:
                pending = batch + pending  # not acknowledged: send again
                if not isinstance(exc, RetriableError):
                    producer = _fresh_producer(kit, producer)
        received = kit.receive(kit.subscribed(kit.group(), [topic]), len(acknowledged),
                               timeout=kit.settings.timeout * 2)
        lost = acknowledged - set(v for v in message_ids(received) if v is not None)
        assert not lost, (
            f"{len(lost)} acknowledged messages were lost across the restart (of "
            f"{len(acknowledged)}: {_sample(lost)}; the first {half} were sent before it); "
            f"received {len(received)}")

    def test_unreachable_broker_fails_within_timeout(self, kit: Kit) -> None:
        """TRANSPORT-51: against an unreachable broker, sending and admin calls fail with
        a TransportError within the configured timeout; they never hang.
        """
        unreachable = kit.unreachable
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

    def test_bad_config_names_the_key(self, kit: Kit) -> None:
        """TRANSPORT-52: a bad transport option is rejected with a ConfigError naming
        the key.
        """
        transport = kit.transport
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


def _fresh_producer(kit: Kit, old: Producer) -> Producer:
    _quietly_close(old)
    return kit.producer()


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
