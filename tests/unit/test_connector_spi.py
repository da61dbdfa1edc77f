"""The Connector SPI: abstract methods fail at instantiation, misuse fails clearly,
lifecycle transitions, and the default behaviours authors inherit.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import Future
from typing import Any

import pytest

from omconnect import (
    ConfigDef,
    ConfigType,
    Connector,
    ConnectorContext,
    SinkConnector,
    SinkTask,
    SinkTaskContext,
    SourceConnector,
    SourceTask,
    SourceTaskContext,
    State,
    Task,
)
from omconnect.connector import ErrantRecordReporter, OffsetStorageReader, freeze_partition
from omconnect.errors import IllegalStateError
from omconnect.records import JsonScalar, SinkRecord, SourceRecord, TopicPartition

# -- minimal complete implementations ---------------------------------------------------


class CountingSource(SourceTask):
    def version(self) -> str:
        return "1.0"

    def start(self, config: Mapping[str, Any]) -> None:
        self.next = 0

    def poll(self) -> Sequence[SourceRecord] | None:
        self.next += 1
        return [SourceRecord(topic="t", value=self.next, source_partition={"p": 0},
                             source_offset={"n": self.next})]

    def stop(self) -> None:
        pass


class CountingSourceConnector(SourceConnector):
    def version(self) -> str:
        return "1.0"

    def config_def(self) -> ConfigDef:
        return ConfigDef().define("topic", ConfigType.STRING, documentation="Where to write.")

    def start(self, config: Mapping[str, Any]) -> None:
        self.config = dict(config)

    def task_class(self) -> type[SourceTask]:
        return CountingSource

    def task_configs(self, max_tasks: int) -> list[dict[str, Any]]:
        return [dict(self.config)]

    def stop(self) -> None:
        pass


class RecordingSink(SinkTask):
    def __init__(self) -> None:
        super().__init__()
        self.flushed: list[dict[TopicPartition, int]] = []

    def version(self) -> str:
        return "1.0"

    def start(self, config: Mapping[str, Any]) -> None:
        pass

    def put(self, records: Sequence[SinkRecord]) -> None:
        pass

    def flush(self, offsets: Mapping[TopicPartition, int]) -> None:
        self.flushed.append(dict(offsets))

    def stop(self) -> None:
        pass


class RecordingSinkConnector(SinkConnector):
    def version(self) -> str:
        return "1.0"

    def config_def(self) -> ConfigDef:
        return ConfigDef()

    def start(self, config: Mapping[str, Any]) -> None:
        pass

    def task_class(self) -> type[SinkTask]:
        return RecordingSink

    def task_configs(self, max_tasks: int) -> list[dict[str, Any]]:
        return [{} for _ in range(max_tasks)]

    def stop(self) -> None:
        pass


# -- half-written classes fail at instantiation, naming what is missing ------------------


def test_a_source_task_without_poll_fails_at_instantiation_naming_it() -> None:
    class NoPoll(SourceTask):
        def version(self) -> str:
            return "1"

        def start(self, config: Mapping[str, Any]) -> None:
            pass

        def stop(self) -> None:
            pass

    # "with abstract method poll" (3.11) or "... abstract method 'poll'" (3.12+)
    with pytest.raises(TypeError, match=r"abstract class NoPoll\b.*abstract method '?poll\b"):
        NoPoll()  # type: ignore[abstract]


def test_a_sink_task_without_put_fails_naming_it() -> None:
    class NoPut(SinkTask):
        def version(self) -> str:
            return "1"

        def start(self, config: Mapping[str, Any]) -> None:
            pass

        def stop(self) -> None:
            pass

    with pytest.raises(TypeError, match=r"abstract class NoPut\b.*abstract method '?put\b"):
        NoPut()  # type: ignore[abstract]


def test_a_connector_missing_several_methods_names_them_all() -> None:
    class Half(SourceConnector):
        def version(self) -> str:
            return "1"

        def config_def(self) -> ConfigDef:
            return ConfigDef()

    with pytest.raises(TypeError) as caught:
        Half()  # type: ignore[abstract]
    for method in ("start", "stop", "task_class", "task_configs"):
        assert method in str(caught.value)
    assert "version" not in str(caught.value)


@pytest.mark.parametrize(
    ("base", "methods"),
    [(Connector, {"version", "config_def", "start", "task_class", "task_configs", "stop"}),
     (SourceConnector, {"version", "config_def", "start", "task_class", "task_configs",
                        "stop"}),
     (SinkConnector, {"version", "config_def", "start", "task_class", "task_configs",
                      "stop"}),
     (Task, {"version", "start", "stop"}),
     (SourceTask, {"version", "start", "stop", "poll"}),
     (SinkTask, {"version", "start", "stop", "put"})],
)
def test_the_abstract_methods_are_exactly_the_contract(base: type,
                                                       methods: set[str]) -> None:
    assert base.__abstractmethods__ == frozenset(methods)


def test_complete_implementations_instantiate() -> None:
    CountingSourceConnector()
    RecordingSinkConnector()
    CountingSource()
    RecordingSink()


def test_contexts_are_abstract_too() -> None:
    for context in (ConnectorContext, SourceTaskContext, SinkTaskContext, OffsetStorageReader,
                    ErrantRecordReporter):
        with pytest.raises(TypeError, match="abstract"):
            context()  # type: ignore[abstract]


# -- misuse ------------------------------------------------------------------------------


def test_connector_context_before_initialize_is_an_illegal_state() -> None:
    with pytest.raises(IllegalStateError, match=r"no context before initialize\(\)"):
        _ = CountingSourceConnector().context


def test_task_contexts_before_initialize_are_an_illegal_state() -> None:
    with pytest.raises(IllegalStateError, match=r"source task has no context before initialize"):
        _ = CountingSource().context
    with pytest.raises(IllegalStateError, match=r"sink task has no context before initialize"):
        _ = RecordingSink().context


def test_subclasses_that_skip_super_init_still_fail_clearly() -> None:
    class Forgetful(CountingSource):
        def __init__(self) -> None:  # no super().__init__()
            self.next = 0

    with pytest.raises(IllegalStateError):
        _ = Forgetful().context


class _ConnectorContext(ConnectorContext):
    def __init__(self) -> None:
        self.reconfigurations = 0
        self.errors: list[BaseException] = []

    def request_task_reconfiguration(self) -> None:
        self.reconfigurations += 1

    def raise_error(self, error: BaseException) -> None:
        self.errors.append(error)


class _Offsets(OffsetStorageReader):
    def __init__(self, stored: dict[Any, dict[str, Any]]) -> None:
        self.stored = stored

    def offsets(
        self, partitions: Iterable[Mapping[str, JsonScalar]]
    ) -> dict[tuple[tuple[str, JsonScalar], ...], dict[str, Any]]:
        keys = [freeze_partition(p) for p in partitions]
        return {k: self.stored[k] for k in keys if k in self.stored}


class _SourceContext(SourceTaskContext):
    def __init__(self, reader: OffsetStorageReader) -> None:
        self._reader = reader

    @property
    def offset_storage_reader(self) -> OffsetStorageReader:
        return self._reader

    @property
    def configs(self) -> Mapping[str, Any]:
        return {"topic": "t"}


def test_initialize_makes_the_context_available() -> None:
    connector = CountingSourceConnector()
    context = _ConnectorContext()
    connector.initialize(context)
    assert connector.context is context
    connector.context.request_task_reconfiguration()
    assert context.reconfigurations == 1

    task = CountingSource()
    source_context = _SourceContext(_Offsets({}))
    task.initialize(source_context)
    assert task.context is source_context


def test_offset_reader_finds_a_partition_whatever_its_key_order() -> None:
    stored = {freeze_partition({"file": "a.txt", "shard": 1}): {"position": 42}}
    reader = _Offsets(stored)
    assert reader.offset({"shard": 1, "file": "a.txt"}) == {"position": 42}
    assert reader.offset({"file": "b.txt", "shard": 1}) is None


def test_freeze_partition_is_hashable_and_order_independent() -> None:
    assert freeze_partition({"b": 1, "a": "x"}) == (("a", "x"), ("b", 1))
    assert hash(freeze_partition({"b": 1, "a": "x"})) == hash(freeze_partition({"a": "x",
                                                                               "b": 1}))


# -- defaults authors inherit ------------------------------------------------------------


def test_sink_pre_commit_flushes_and_returns_the_offsets() -> None:
    task = RecordingSink()
    offsets = {TopicPartition("t", 0): 10, TopicPartition("t", 1): 3}
    assert task.pre_commit(offsets) == offsets
    assert task.flushed == [offsets]


def test_a_sink_that_writes_asynchronously_can_commit_less() -> None:
    class Lagging(RecordingSink):
        def pre_commit(
            self, offsets: Mapping[TopicPartition, int]
        ) -> Mapping[TopicPartition, int]:
            return {tp: offset - 1 for tp, offset in offsets.items()}

    assert Lagging().pre_commit({TopicPartition("t", 0): 10}) == {TopicPartition("t", 0): 9}


def test_connector_validate_defaults_to_its_config_def() -> None:
    errors = CountingSourceConnector().validate({})
    assert errors == {"topic": ["missing required setting; set topic (Where to write)"]}
    assert CountingSourceConnector().validate({"topic": "t"}) == {"topic": []}


def test_exactly_once_is_off_unless_a_connector_claims_it() -> None:
    assert CountingSourceConnector().exactly_once_support() is False
    assert RecordingSinkConnector().exactly_once_support() is False


def test_optional_hooks_exist_and_do_nothing_by_default() -> None:
    connector = CountingSourceConnector()
    connector.on_pause()
    connector.on_resume()
    connector.on_failed(RuntimeError("x"))
    connector.on_destroyed()
    task = CountingSource()
    task.commit()
    task.commit_record(SourceRecord(topic="t"), None)
    sink = RecordingSink()
    sink.open(frozenset({TopicPartition("t", 0)}))
    sink.close(frozenset({TopicPartition("t", 0)}))


def test_sink_context_has_no_errant_record_reporter_unless_the_runtime_offers_one() -> None:
    class Context(SinkTaskContext):
        configs: Mapping[str, Any] = {}  # type: ignore[misc]

        def offset(self, offsets: Mapping[TopicPartition, int]) -> None: ...
        def assignment(self) -> frozenset[TopicPartition]:
            return frozenset()

        def pause(self, *partitions: TopicPartition) -> None: ...
        def resume(self, *partitions: TopicPartition) -> None: ...
        def request_commit(self) -> None: ...

    assert Context().errant_record_reporter is None

    class Reporter(ErrantRecordReporter):
        def report(self, record: SinkRecord, error: BaseException) -> Future[None]:
            future: Future[None] = Future()
            future.set_result(None)
            return future

    class WithReporter(Context):
        @property
        def errant_record_reporter(self) -> ErrantRecordReporter | None:
            return Reporter()

    reporter = WithReporter().errant_record_reporter
    assert reporter is not None
    assert reporter.report(SinkRecord(topic="t", partition=0), ValueError()).result() is None


# -- lifecycle ----------------------------------------------------------------------------

ALLOWED = {
    (State.UNASSIGNED, State.RUNNING), (State.UNASSIGNED, State.PAUSED),
    (State.UNASSIGNED, State.STOPPED), (State.UNASSIGNED, State.FAILED),
    (State.UNASSIGNED, State.DESTROYED),
    (State.RUNNING, State.PAUSED), (State.RUNNING, State.STOPPED),
    (State.RUNNING, State.FAILED), (State.RUNNING, State.DESTROYED),
    (State.RUNNING, State.UNASSIGNED),
    (State.PAUSED, State.RUNNING), (State.PAUSED, State.STOPPED),
    (State.PAUSED, State.FAILED), (State.PAUSED, State.DESTROYED),
    (State.PAUSED, State.UNASSIGNED),
    (State.FAILED, State.UNASSIGNED), (State.FAILED, State.RUNNING),
    (State.FAILED, State.STOPPED), (State.FAILED, State.DESTROYED),
    (State.STOPPED, State.UNASSIGNED), (State.STOPPED, State.RUNNING),
    (State.STOPPED, State.PAUSED), (State.STOPPED, State.DESTROYED),
}


@pytest.mark.parametrize("source", list(State), ids=lambda s: s.value)
@pytest.mark.parametrize("target", list(State), ids=lambda s: s.value)
def test_state_transitions(source: State, target: State) -> None:
    assert source.can_become(target) == ((source, target) in ALLOWED)


def test_destroyed_is_final_and_no_state_becomes_itself() -> None:
    assert not any(State.DESTROYED.can_become(s) for s in State)
    assert not any(s.can_become(s) for s in State)


def test_the_states_are_those_of_openmessaging_connect() -> None:
    assert [s.value for s in State] == ["UNASSIGNED", "RUNNING", "PAUSED", "FAILED",
                                        "STOPPED", "DESTROYED"]
