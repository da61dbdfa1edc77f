r"""Connector acceptance cases (CONNECTOR-1 to CONNECTOR-22), for connector authors.

Subclass :class:`ConnectorConformance`, name the connector and say how to configure it
for a fresh working directory; the optional hooks of :class:`ConnectorHooks` unlock the
cases that need to know more (what "all the work" is, how to read a sink's state)::

    class TestFileSource(ConnectorConformance):
        connector_class = FileStreamSourceConnector

        def connector_config(self, workdir):
            (workdir / "in.txt").write_text("".join(f"line {i}\n" for i in range(50)))
            return {"file": str(workdir / "in.txt"), "topic": "lines"}

Cases run the connector through a :class:`~omconnect.testing.harness.ConnectorHarness`
(no runtime, no broker). A case that needs a hook the class does not provide is skipped,
naming the hook; a SHOULD rule that is not met is reported as ``xfail``.
"""

from __future__ import annotations

import json
import threading
import uuid
from collections import Counter
from collections.abc import Collection, Hashable, Mapping
from pathlib import Path
from typing import Any, ClassVar

import pytest

from omconnect.config.types import ConfigType
from omconnect.connector import (
    Connector,
    SinkConnector,
    SinkTask,
    SourceConnector,
    SourceTask,
)
from omconnect.records import SinkRecord, SourceRecord
from omconnect.testing.harness import ConnectorHarness, SourceRun

__all__ = ["ConnectorConformance", "ConnectorHooks"]

_BREAKABLE = (ConfigType.INT, ConfigType.LONG, ConfigType.DOUBLE, ConfigType.BOOLEAN)
_SCALARS = (str, int, float, bool, type(None))


class ConnectorHooks:
    """What a connector author tells the acceptance cases. Only
    :meth:`connector_config` is required.
    """

    connector_class: ClassVar[type[Connector] | None] = None
    """The connector under test."""

    max_tasks: ClassVar[int] = 3
    """The ``max_tasks`` the source cases ask for."""

    graceful_timeout: ClassVar[float] = 5.0
    """Seconds within which a blocked ``poll`` must return after ``stop``."""

    idle_polls: ClassVar[int] = 3
    """Consecutive empty polls after which a source counts as having read everything."""

    def connector_config(self, workdir: Path) -> dict[str, Any]:
        """A valid connector config using a fresh ``workdir`` (write any source data the
        connector should read there). Called once per environment a case needs.
        """
        raise NotImplementedError("provide connector_config(workdir)")

    def prepare(self, config: dict[str, Any], workdir: Path) -> dict[str, Any]:
        """With ``--omconnect-connector``: adjust the config file's settings for a fresh
        ``workdir`` and write any source data there (default: the settings as they are,
        with ``{tmp}`` already replaced by ``workdir``).
        """
        return config

    def work_units(self, config: Mapping[str, Any]) -> Collection[Hashable] | None:
        """Every unit of work the connector's job has (files, tables, ...), or ``None``
        when the cases cannot know.
        """
        return None

    def task_work_units(self, task_config: Mapping[str, Any]) -> Collection[Hashable] | None:
        """The units of work one task config covers, or ``None``."""
        return None

    def bad_configs(self, config: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
        """Extra invalid configs, by the key validation must name."""
        return {}

    def sink_records(self, config: Mapping[str, Any]) -> list[SinkRecord]:
        """Records to feed a sink (default: 20 string key/values over two partitions of
        the first topic of ``topics``).
        """
        topics = config.get("topics") or "omc-acceptance"
        topic = topics[0] if isinstance(topics, list) else str(topics).split(",")[0].strip()
        return [SinkRecord(topic=topic, partition=i % 2, offset=i // 2,
                           key=f"key-{i}", value=f"value-{i}") for i in range(20)]

    def sink_state(self, config: Mapping[str, Any]) -> Any:
        """What the sink has written to the external system so far, in a form that
        compares equal for equal contents (e.g. a file's bytes). Raise
        ``NotImplementedError`` (the default) when it cannot be read.
        """
        raise NotImplementedError

    def record_identity(self, record: SourceRecord) -> Hashable:
        """What makes two source records "the same record", compared across runs in
        different working directories (default: topic, key and value; override it when
        the content is not stable across runs, e.g. includes a path or a random value).
        """
        return (record.topic, repr(record.key), repr(record.value))


def _should(holds: bool, message: str, must: bool) -> None:
    """Assert a MUST; report an unmet SHOULD as xfail."""
    if holds:
        return
    if must:
        raise AssertionError(message)
    pytest.xfail(f"SHOULD not met: {message}")


class ConnectorConformance(ConnectorHooks):
    """The connector acceptance cases. Subclass it (name it ``Test...``), set
    :attr:`connector_class` and implement :meth:`connector_config`.
    """

    # -- helpers -------------------------------------------------------------------
    @pytest.fixture
    def workdirs(self, tmp_path: Path) -> Any:
        """Fresh working directories, one per call."""
        def make() -> Path:
            path = tmp_path / uuid.uuid4().hex[:8]
            path.mkdir()
            return path
        return make

    def _connector(self) -> type[Connector]:
        if self.connector_class is None:
            raise AssertionError(f"{type(self).__name__} sets no connector_class")
        return self.connector_class

    def _harness(self, workdirs: Any) -> ConnectorHarness:
        return ConnectorHarness(self._connector(), self.connector_config(workdirs()))

    def _need(self, kind: type) -> None:
        if not issubclass(self._connector(), kind):
            pytest.skip(f"needs a {kind.__name__}")

    # -- every connector -----------------------------------------------------------
    def test_version_is_a_string(self, workdirs: Any) -> None:
        """CONNECTOR-1: ``version()`` of the connector and of its task is a non-empty
        string.
        """
        harness = self._harness(workdirs)
        assert isinstance(harness.connector.version(), str) and harness.connector.version()
        task = harness.connector.task_class()()
        assert isinstance(task.version(), str) and task.version()

    def test_config_def_documents_every_key(self, workdirs: Any) -> None:
        """CONNECTOR-2: every key of ``config_def()`` has non-empty documentation."""
        definition = self._harness(workdirs).connector.config_def()
        undocumented = [key.name for key in definition if not key.documentation.strip()]
        assert not undocumented, f"config keys without documentation: {undocumented}"

    def test_validate_accepts_the_config(self, workdirs: Any) -> None:
        """CONNECTOR-3: ``validate`` reports no error for a valid config, and the
        connector starts and stops with it.
        """
        harness = self._harness(workdirs)
        assert harness.validate() == {}
        harness.start()
        harness.stop()

    def test_validate_rejects_bad_configs_naming_the_key(self, workdirs: Any) -> None:
        """CONNECTOR-4: ``validate`` rejects a config with a missing required key or a
        value of the wrong type, with a message naming the key.
        """
        harness = self._harness(workdirs)
        bad: dict[str, dict[str, Any]] = {}
        for key in harness.connector.config_def():
            if key.required:
                bad.setdefault(key.name, {k: v for k, v in harness.config.items()
                                          if k != key.name})
            elif key.type in _BREAKABLE:
                bad.setdefault(key.name, {**harness.config,
                                          key.name: f"not-a-{key.type.value}"})
        bad.update(self.bad_configs(harness.config))
        if not bad:
            pytest.skip("needs a required or typed config key, or the bad_configs hook")
        for name, config in bad.items():
            errors = harness.connector.validate(config)
            messages = errors.get(name) or []
            assert messages, f"validate accepted a bad value of {name!r}: {config.get(name)!r}"
            assert any(name in m for m in messages), \
                f"the error for {name!r} does not name the key: {messages}"

    def test_task_configs_honour_max_tasks(self, workdirs: Any) -> None:
        """CONNECTOR-5: ``task_configs(max_tasks)`` returns between 1 and ``max_tasks``
        configs, each a JSON-serialisable mapping of str keys.
        """
        harness = self._harness(workdirs)
        harness.start()
        try:
            for max_tasks in (1, 2, 3, 8):
                configs = harness.connector.task_configs(max_tasks)
                assert 1 <= len(configs) <= max_tasks, \
                    f"task_configs({max_tasks}) returned {len(configs)} configs"
                for config in configs:
                    assert isinstance(config, Mapping)
                    assert all(isinstance(k, str) for k in config)
                    json.dumps(dict(config))
        finally:
            harness.stop()

    def test_task_configs_cover_all_the_work(self, workdirs: Any) -> None:
        """CONNECTOR-6: for any ``max_tasks`` the task configs together cover all the
        work, each unit exactly once.
        """
        harness = self._harness(workdirs)
        work = self.work_units(harness.config)
        if work is None:
            pytest.skip("needs the work_units and task_work_units hooks")
        harness.start()
        try:
            for max_tasks in (1, 2, 3, 8):
                covered: list[Hashable] = []
                for config in harness.connector.task_configs(max_tasks):
                    units = self.task_work_units(config)
                    assert units is not None, "task_work_units returned None"
                    covered.extend(units)
                assert set(covered) == set(work), \
                    f"max_tasks={max_tasks}: missing {set(work) - set(covered)}"
                assert len(covered) == len(set(covered)), \
                    f"max_tasks={max_tasks}: a unit of work is given to two tasks"
        finally:
            harness.stop()

    def test_task_class_matches_the_connector(self, workdirs: Any) -> None:
        """CONNECTOR-7: a source connector's task class is a SourceTask, a sink
        connector's a SinkTask.
        """
        connector = self._harness(workdirs).connector
        if isinstance(connector, SourceConnector):
            assert issubclass(connector.task_class(), SourceTask)
        elif isinstance(connector, SinkConnector):
            assert issubclass(connector.task_class(), SinkTask)
        else:
            pytest.fail(f"{type(connector).__name__} is neither a SourceConnector nor a "
                        "SinkConnector")

    # -- sources -------------------------------------------------------------------
    def _full_run(self, workdirs: Any) -> list[SourceRecord]:
        harness = self._harness(workdirs)
        records: list[SourceRecord] = []
        for config in harness.task_configs(self.max_tasks):
            records += harness.run_source(config, until_idle=self.idle_polls).records
        harness.stop()
        return records

    def test_source_records_carry_json_offsets(self, workdirs: Any) -> None:
        """CONNECTOR-10: source records name a topic and carry source partitions and
        offsets that are dicts of str to JSON scalars and survive a JSON round trip.
        """
        self._need(SourceConnector)
        records = self._full_run(workdirs)
        assert records, "the source produced no records: write data in connector_config"
        for record in records:
            assert isinstance(record, SourceRecord)
            assert isinstance(record.topic, str) and record.topic
            for what, data in (("partition", record.source_partition),
                               ("offset", record.source_offset)):
                assert isinstance(data, Mapping), f"source {what} is not a dict: {data!r}"
                bad = {k: v for k, v in data.items()
                       if not isinstance(k, str) or not isinstance(v, _SCALARS)}
                assert not bad, f"source {what} holds non-JSON-scalar entries: {bad!r}"
                assert json.loads(json.dumps(dict(data))) == dict(data)

    def _restarted_runs(self, workdirs: Any) -> tuple[list[SourceRecord], list[SourceRecord],
                                                      list[SourceRecord]]:
        """A full run; and a run stopped halfway plus a restarted run from its offsets."""
        full = self._full_run(workdirs)
        assert full, "the source produced no records: write data in connector_config"
        harness = self._harness(workdirs)
        first: list[SourceRecord] = []
        second: list[SourceRecord] = []
        configs = harness.task_configs(self.max_tasks)
        for config in configs:
            part: SourceRun = harness.run_source(config, until_records=max(1, len(full) // 2
                                                                           // len(configs)))
            first += part.records
            second += harness.run_source(config, offsets=part.offsets,
                                         until_idle=self.idle_polls).records
        harness.stop()
        return full, first, second

    def _identities(self, records: list[SourceRecord]) -> Counter[Hashable]:
        return Counter(self.record_identity(r) for r in records)

    def test_restarted_source_task_resumes_without_loss(self, workdirs: Any) -> None:
        """CONNECTOR-11: a source task restarted from its committed offsets goes on
        where it stopped: the records of both runs include every record of a full run.
        """
        self._need(SourceConnector)
        full, first, second = self._restarted_runs(workdirs)
        lost = self._identities(full) - self._identities(first + second)
        assert not lost, f"{sum(lost.values())} records were lost across the restart, " \
                         f"e.g. {sorted(map(repr, lost))[:3]}"

    def test_restarted_source_task_does_not_repeat_committed_records(
            self, workdirs: Any) -> None:
        """CONNECTOR-12 (SHOULD; MUST with ``exactly_once_support()``): a restarted task
        does not emit again records whose offsets were committed.
        """
        self._need(SourceConnector)
        full, first, second = self._restarted_runs(workdirs)
        again = self._identities(first + second) - self._identities(full)
        connector = self._connector()()
        assert isinstance(connector, SourceConnector)
        _should(not again, f"{sum(again.values())} committed records were emitted again, "
                f"e.g. {sorted(map(repr, again))[:3]}",
                must=connector.exactly_once_support())

    def test_stop_returns_promptly_while_poll_blocks(self, workdirs: Any) -> None:
        """CONNECTOR-13: ``stop`` from another thread makes a polling task return within
        the graceful timeout (``poll`` may block, but not past ``stop``).
        """
        self._need(SourceConnector)
        harness = self._harness(workdirs)
        config = harness.task_configs(1)[0]
        run = harness.run_source(config, until_idle=self.idle_polls, stop=False)
        task, stopped = run.task, threading.Event()
        errors: list[BaseException] = []

        def loop() -> None:
            while not stopped.is_set():
                try:
                    task.poll()
                except BaseException as exc:
                    if not stopped.is_set():
                        errors.append(exc)
                    return

        poller = threading.Thread(target=loop, name="omconnect-acceptance-poll", daemon=True)
        poller.start()
        poller.join(0.3)
        stopped.set()
        task.stop()
        poller.join(self.graceful_timeout)
        harness.stop()
        assert not poller.is_alive(), \
            f"poll did not return within {self.graceful_timeout:g} s of stop()"
        assert not errors, f"poll failed before stop: {errors[0]!r}"

    # -- sinks ---------------------------------------------------------------------
    def _sink_state(self, config: Mapping[str, Any]) -> Any:
        try:
            return self.sink_state(config)
        except NotImplementedError:
            pytest.skip("needs the sink_state hook (how to read what the sink wrote)")

    def test_pre_commit_never_beyond_written_data(self, workdirs: Any) -> None:
        """CONNECTOR-20: ``pre_commit`` returns, for partitions that were put only,
        offsets no greater than those consumed.
        """
        self._need(SinkConnector)
        harness = self._harness(workdirs)
        records = self.sink_records(harness.config)
        config = harness.task_configs(1)[0]
        consumed = harness.next_offsets(records)
        task = harness.sink_task(config, consumed)
        safe = harness.put_and_commit(task, records, consumed)
        task.stop()
        harness.stop()
        assert set(safe) <= set(consumed), f"pre_commit named partitions never put: " \
                                           f"{sorted(map(str, set(safe) - set(consumed)))}"
        beyond = {str(tp): (o, consumed[tp]) for tp, o in safe.items() if o > consumed[tp]}
        assert not beyond, f"pre_commit returned offsets beyond what was put: {beyond}"

    def test_committed_data_survives_a_crash(self, workdirs: Any) -> None:
        """CONNECTOR-21: what ``pre_commit`` declared safe is durable: after a crash (no
        stop, no close) and redelivery from the returned offsets, the external state
        equals that of a run without a crash.
        """
        self._need(SinkConnector)
        clean = self._harness(workdirs)
        records = self.sink_records(clean.config)
        consumed = clean.next_offsets(records)
        task = clean.sink_task(clean.task_configs(1)[0], consumed)
        clean.put_and_commit(task, records, consumed)
        task.stop()
        clean.stop()
        expected = self._sink_state(clean.config)

        crashed = self._harness(workdirs)
        config = crashed.task_configs(1)[0]
        doomed = crashed.sink_task(config, consumed)
        half = len(records) // 2
        crashed.put_and_commit(doomed, records[:half])
        safe = crashed.put_and_commit(doomed, records[half:], consumed)
        # The doomed task is never stopped or closed: it "crashed". Keep a reference so
        # nothing it buffered is written by garbage collection either.
        successor = crashed.sink_task(config, consumed)
        redelivered = [r for r in records if r.offset >= safe.get(r.topic_partition, 0)]
        crashed.put_and_commit(successor, redelivered, consumed)
        successor.stop()
        crashed.stop()
        assert self._sink_state(crashed.config) == expected, \
            "after a crash and redelivery from the offsets pre_commit returned, the " \
            "external state differs from a run without a crash (data declared safe was lost)"
        assert doomed is not None

    def test_sink_is_safe_under_redelivery(self, workdirs: Any) -> None:
        """CONNECTOR-22 (SHOULD; MUST with ``exactly_once_support()``): putting the same
        batch again and flushing leaves the external state unchanged.
        """
        self._need(SinkConnector)
        harness = self._harness(workdirs)
        records = self.sink_records(harness.config)
        consumed = harness.next_offsets(records)
        task = harness.sink_task(harness.task_configs(1)[0], consumed)
        harness.put_and_commit(task, records, consumed)
        once = self._sink_state(harness.config)
        harness.put_and_commit(task, records, consumed)
        twice = self._sink_state(harness.config)
        task.stop()
        harness.stop()
        connector = self._connector()()
        assert isinstance(connector, SinkConnector)
        _should(once == twice, "redelivering a batch changed the external state "
                "(duplicates)", must=connector.exactly_once_support())
