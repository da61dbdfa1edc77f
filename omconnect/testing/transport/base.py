"""The shared fixtures and helpers of the transport cases.

Every case gets a :class:`TransportHarness`: it opens the transport from the ``transport_factory``
fixture, names topics and groups uniquely (so cases never see each other's data), keeps
track of every client it opened and closes them (and deletes its topics) afterwards, and
waits only until a deadline.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pytest

from omconnect.records import RecordMetadata, TopicPartition
from omconnect.testing.profile import BrokerControl, TransportFactory, UnreachableBroker
from omconnect.testing.waiting import Deadline
from omconnect.transport.capabilities import Capabilities
from omconnect.transport.messages import Message, TopicSpec
from omconnect.transport.spi import Consumer, KeyValueStore, Producer, StartFrom, Transport

__all__ = ["SuiteSettings", "TransportCase", "TransportHarness", "message_ids"]


class SuiteSettings:
    """Run-wide settings, from the command line.

    Attributes:
        scale: Multiplies the message counts of the volume cases.
        timeout: Seconds a case waits for messages that must arrive.
        quiet: Seconds a case polls to make sure nothing more arrives.
        trials: How many times each pipeline case runs its pipeline (a fresh topic, fresh
            connectors and fresh workers each time).
        idle: The ``--stop-when-idle`` window of the pipeline cases' workers, in seconds.

    """

    def __init__(self, scale: float = 1.0, timeout: float = 30.0, quiet: float = 0.5,
                 trials: int = 2, idle: float = 3.0) -> None:
        self.scale = scale
        self.timeout = timeout
        self.quiet = quiet
        self.trials = trials
        self.idle = idle

    @classmethod
    def from_config(cls, config: pytest.Config) -> SuiteSettings:
        """The settings given on the pytest command line (defaults when absent)."""

        def option(name: str, default: float) -> float:
            value = config.getoption(name, default=None)
            return float(value) if value is not None else default

        return cls(
            scale=option("omconnect_scale", 1.0),
            timeout=option("omconnect_timeout", 30.0),
            quiet=option("omconnect_quiet", 0.5),
            trials=max(1, int(option("omconnect_trials", 2))),
            idle=option("omconnect_idle", 3.0),
        )


def message_ids(messages: Sequence[Message]) -> list[bytes | None]:
    """The values of ``messages``, in order (cases put an id in each value)."""
    return [m.value for m in messages]


class TransportHarness:
    """What a case uses to drive the transport under test.

    Args:
        factory: Builds a fresh transport (calling it again reopens the same storage).
        settings: Run-wide settings.
        broker: Restarts the broker, if the test setup can.
        unreachable: How to reach no broker, if the transport has one.
        case: The case's name (used in topic names).

    """

    def __init__(
        self,
        factory: Callable[[], Transport],
        settings: SuiteSettings,
        *,
        broker: BrokerControl | None = None,
        unreachable: UnreachableBroker | None = None,
        case: str = "case",
    ) -> None:
        self.factory = factory
        self.settings = settings
        self.broker = broker
        self.unreachable = unreachable
        self.case = case
        self._transport: Transport | None = None
        self._closeables: list[Any] = []
        self._topics: list[str] = []
        self._partitions: dict[str, int] = {}

    # -- the transport -------------------------------------------------------------
    @property
    def transport(self) -> Transport:
        """The transport under test (opened on first use)."""
        if self._transport is None:
            self._transport = self.factory()
        return self._transport

    @property
    def capabilities(self) -> Capabilities:
        """The transport's declared capabilities."""
        return self.transport.capabilities

    def require(self, **flags: bool) -> None:
        """Skip the case unless the transport has every capability named (``=True``)."""
        missing = self.capabilities.missing(**flags)
        if missing:
            pytest.skip(f"needs capability {', '.join(missing)}")

    def partitions(self, wanted: int) -> int:
        """``wanted``, or fewer when the transport allows fewer partitions per topic."""
        return max(1, min(wanted, self.capabilities.max_partitions))

    def count(self, base: int) -> int:
        """A message count scaled by ``--omconnect-scale``."""
        return max(1, int(base * self.settings.scale))

    def reopen(self) -> Transport:
        """Close the transport and every client opened so far; open it again."""
        self._close_clients()
        if self._transport is not None:
            self._transport.close()
        self._transport = self.factory()
        return self._transport

    def portable_factory(self) -> Callable[[], Transport]:
        """A picklable factory for this transport, to rebuild it in another process."""
        import pickle

        try:
            pickle.dumps(self.factory)
        except Exception:
            return TransportFactory.rebuilding(self.transport)
        return self.factory

    # -- names and clients ---------------------------------------------------------
    def name(self, kind: str) -> str:
        """A name no other case uses, e.g. ``omc-round-trip-1f2e3d4c``."""
        label = self.case.removeprefix("test_").replace("_", "-")[:32]
        return f"omc-{kind}-{label}-{uuid.uuid4().hex[:8]}"

    def topic(self, partitions: int = 1) -> str:
        """Create a fresh topic with (up to) ``partitions`` partitions; return its name."""
        name = self.name("t")
        admin = self.transport.admin()
        try:
            admin.create_topics([TopicSpec(name, self.partitions(partitions))])
        finally:
            admin.close()
        self._topics.append(name)
        self._partitions[name] = self.partitions(partitions)
        return name

    def adopt(self, name: str, partitions: int) -> None:
        """Treat ``name`` (created outside :meth:`topic`) as this case's topic with
        ``partitions`` partitions: it is deleted after the case.
        """
        if name not in self._topics:
            self._topics.append(name)
        self._partitions[name] = partitions

    def group(self) -> str:
        """A fresh consumer group name."""
        return self.name("g")

    def producer(self) -> Producer:
        """A new producer, closed after the case."""
        producer = self.transport.producer()
        self._closeables.append(producer)
        return producer

    def consumer(self, group: str | None, *, start: StartFrom = "earliest") -> Consumer:
        """A new consumer, closed after the case."""
        consumer = self.transport.consumer(group, start=start)
        self._closeables.append(consumer)
        return consumer

    def subscribed(
        self, group: str, topics: Sequence[str], *, start: StartFrom = "earliest"
    ) -> Consumer:
        """A new consumer of ``group`` subscribed to ``topics``."""
        consumer = self.consumer(group, start=start)
        consumer.subscribe(list(topics))
        return consumer

    def listening(self, group: str, topics: Sequence[str]) -> Consumer:
        """A new consumer of ``group`` subscribed to ``topics`` (empty, new topics of this
        case) and ready to receive what is sent from now on.

        Cases subscribe before they send: on a transport without
        ``new_subscriber_receives_old_messages`` (e.g. one queue per group, declared on
        subscribe) a group only receives what is sent after it joined. There, this polls
        until the consumer holds every partition of ``topics`` (when it reports its
        assignment).
        """
        consumer = self.subscribed(group, topics)
        if not self.capabilities.new_subscriber_receives_old_messages:
            wanted = {TopicPartition(t, p) for t in topics
                      for p in range(self._partitions.get(t, 1))}
            early = self.wait_assigned([consumer], wanted)
            assert not early, f"a new topic delivered {len(early)} messages nobody sent"
        return consumer

    def kv_store(self, namespace: str) -> KeyValueStore:
        """The key/value store ``namespace``, closed after the case."""
        store = self.transport.kv_store(namespace)
        self._closeables.append(store)
        return store

    # -- sending and receiving -----------------------------------------------------
    def send(
        self, producer: Producer, messages: Sequence[Message], batch: int = 500
    ) -> list[RecordMetadata]:
        """Send ``messages`` in batches and wait for every acknowledgement."""
        futures = [producer.send(messages[i:i + batch]) for i in range(0, len(messages), batch)]
        deadline = Deadline(self.settings.timeout)
        acks: list[RecordMetadata] = []
        for future in futures:
            acks.extend(future.result(timeout=max(deadline.remaining, 0.001)))
        return acks

    def produce(self, topic: str, values: Sequence[bytes], *, keys: Sequence[bytes | None]
                | None = None) -> list[RecordMetadata]:
        """Send one message per value to ``topic`` (keys optional) and wait for the acks."""
        producer = self.producer()
        keys = keys if keys is not None else [None] * len(values)
        return self.send(producer, [Message(topic, key=k, value=v)
                                    for k, v in zip(keys, values, strict=True)])

    def receive(
        self,
        consumer: Consumer,
        count: int,
        *,
        timeout: float | None = None,
        max_records: int = 500,
    ) -> list[Message]:
        """Poll until ``count`` messages arrived or the deadline passed; what arrived."""
        deadline = Deadline(self.settings.timeout if timeout is None else timeout)
        received: list[Message] = []
        while len(received) < count and not deadline.expired:
            received.extend(consumer.poll(max_records, min(0.5, max(deadline.remaining, 0.01))))
        return received

    def receive_until(
        self,
        consumer: Consumer,
        done: Callable[[list[Message]], bool],
        *,
        timeout: float | None = None,
    ) -> list[Message]:
        """Poll until ``done(received)`` holds or the deadline passed; what arrived."""
        deadline = Deadline(self.settings.timeout if timeout is None else timeout)
        received: list[Message] = []
        while not done(received) and not deadline.expired:
            received.extend(consumer.poll(500, min(0.5, max(deadline.remaining, 0.01))))
        return received

    def receive_quiet(self, consumer: Consumer) -> list[Message]:
        """Poll for ``quiet`` seconds; whatever arrives (cases expect nothing more)."""
        deadline = Deadline(self.settings.quiet)
        received: list[Message] = []
        while not deadline.expired:
            received.extend(consumer.poll(500, max(deadline.remaining, 0.01)))
        return received

    def sentinels(self, producer: Producer, topic: str, partitions: int) -> set[bytes]:
        """Send one marker message to each partition of ``topic``; their values.

        A consumer that received every marker has read past everything sent before them,
        so a case can tell "nothing was redelivered" without waiting for a quiet period.
        """
        values = [f"sentinel-{p}-{uuid.uuid4().hex[:6]}".encode() for p in range(partitions)]
        self.send(producer, [Message(topic, value=v, partition=p)
                             for p, v in enumerate(values)])
        return set(values)

    def wait_assigned(self, consumers: Sequence[Consumer], partitions: set[TopicPartition]
                      ) -> list[Message]:
        """Poll ``consumers`` in turn until together they are assigned ``partitions`` (or
        the deadline passes, or the transport cannot report assignments); what arrived.
        """
        deadline = Deadline(self.settings.timeout)
        received: list[Message] = []
        while not deadline.expired:
            for consumer in consumers:
                received.extend(consumer.poll(500, 0.1))
            try:
                held = [consumer.assignment() for consumer in consumers]
            except NotImplementedError:
                return received
            every_member = all(held) or len(partitions) < len(consumers)
            if every_member and set().union(*held) >= partitions:
                return received
        return received

    # -- cleanup -------------------------------------------------------------------
    def _close_clients(self) -> None:
        while self._closeables:
            with contextlib.suppress(Exception):
                self._closeables.pop().close()

    def close(self) -> None:
        """Close every client, delete the case's topics, close the transport."""
        self._close_clients()
        if self._transport is None:
            return
        if self._topics:
            with contextlib.suppress(Exception):
                admin = self._transport.admin()
                admin.delete_topics(self._topics)
                admin.close()
        with contextlib.suppress(Exception):
            self._transport.close()
        self._transport = None


class TransportCase:
    """Base of the transport case classes: provides the ``harness`` fixture.

    A subclass (or a conftest) provides the ``transport_factory`` fixture: a callable
    that builds a fresh transport. Optional fixtures: ``broker_control`` (with
    ``restart()``), ``unreachable_broker`` (an
    :class:`~omconnect.testing.profile.UnreachableBroker`), ``expected_failures`` (a
    mapping of case name to reason: those cases are marked ``xfail(strict=True)``, for
    defects of the broker under test) and ``skip_cases`` (case name to reason: skipped,
    for a broker defect that breaks a case only in some runs).
    """

    @pytest.fixture
    def harness(self, request: pytest.FixtureRequest, transport_factory: Callable[[], Transport]
            ) -> Iterator[TransportHarness]:
        """The case's :class:`TransportHarness`; everything it opened is closed afterwards."""
        harness = TransportHarness(
            transport_factory,
            SuiteSettings.from_config(request.config),
            broker=_optional_fixture(request, "broker_control"),
            unreachable=_optional_fixture(request, "unreachable_broker"),
            case=request.node.originalname if hasattr(request.node, "originalname")
            else request.node.name,
        )
        _mark_expected_failure(request, harness.case)
        _skip_named_case(request, harness.case)
        try:
            yield harness
        finally:
            if harness._transport is not None:
                _record_transport(request.config, harness._transport)
            harness.close()


def _mark_expected_failure(request: pytest.FixtureRequest, case: str) -> None:
    """Mark the case ``xfail(strict=True)`` when the ``expected_failures`` fixture (case
    name -> reason) names it: a known defect of the broker under test is reported as
    such, and a case that starts passing fails the run until the entry is removed.
    """
    expected = _optional_fixture(request, "expected_failures") or {}
    reason = expected.get(case)
    if reason:
        request.applymarker(pytest.mark.xfail(reason=str(reason), strict=True))


def _skip_named_case(request: pytest.FixtureRequest, case: str) -> None:
    """Skip the case when the ``skip_cases`` fixture (case name -> reason) names it: a
    defect of the broker under test that breaks the case in some runs but not all, so
    that a strict xfail cannot pin it (pin it with a deterministic reproduction of its
    own, and name that here).
    """
    skips = _optional_fixture(request, "skip_cases") or {}
    reason = skips.get(case)
    if reason:
        pytest.skip(f"skipped on this broker: {reason}")


def _optional_fixture(request: pytest.FixtureRequest, name: str) -> Any:
    """The value of fixture ``name``, or ``None`` when nobody defines it."""
    try:
        return request.getfixturevalue(name)
    except pytest.FixtureLookupError:
        return None


def _record_transport(config: pytest.Config, transport: Transport) -> None:
    """Remember which transport ran, for the summary table."""
    from omconnect.testing.plugin import record_transport

    record_transport(config, transport)
