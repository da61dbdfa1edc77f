"""Source offsets: committed only when acknowledged with everything before them."""

from __future__ import annotations

import gc
import time
import weakref

import pytest
from runtime_connectors import GATE, STATE
from runtime_support import eventually, read_topic, source_config

from omconnect.connector.lifecycle import State
from omconnect.errors import RetriableTransportError, TransportError
from omconnect.records import SourceRecord
from omconnect.runtime import StandaloneHerder
from omconnect.runtime.submitted_records import SubmittedRecords


def _records(partition: dict, start: int, count: int) -> list[SourceRecord]:
    return [SourceRecord(topic="t", value=n, source_partition=partition,
                         source_offset={"position": n + 1}) for n in range(start, start + count)]


def test_an_offset_is_committable_only_after_every_earlier_record_of_its_partition():
    submitted = SubmittedRecords()
    first = submitted.submit(_records({"f": "a"}, 0, 10))
    second = submitted.submit(_records({"f": "a"}, 10, 10) + _records({"f": "b"}, 0, 5))
    first.waiting = second.waiting = 1
    second.waiting = 0  # the later batch is acknowledged first
    safe, covered = submitted.committable()
    # "b" had nothing before it; "a" waits for the first batch
    assert {k: v[1] for k, v in safe.items()} == {(("f", "b"),): {"position": 5}}
    assert covered == 5
    first.waiting = 0
    safe, covered = submitted.committable()
    assert {k: v[1] for k, v in safe.items()} == {(("f", "a"),): {"position": 20}}
    assert covered == 20
    assert submitted.committable() == ({}, 0)


def test_partitions_do_not_wait_for_each_other():
    submitted = SubmittedRecords()
    held = submitted.submit(_records({"f": "a"}, 0, 3))
    done = submitted.submit(_records({"f": "b"}, 0, 3))
    held.waiting, done.waiting = 1, 0
    safe, _ = submitted.committable()
    assert list(safe) == [(("f", "b"),)]


def test_equal_partitions_from_different_dicts_are_one_partition():
    submitted = SubmittedRecords()
    records = [SourceRecord(topic="t", source_partition={"f": "a"}, source_offset={"p": n})
               for n in range(4)]
    submission = submitted.submit(records)
    submission.waiting = 0
    safe, covered = submitted.committable()
    assert {k: v[1] for k, v in safe.items()} == {(("f", "a"),): {"p": 3}}
    assert covered == 4


def test_tracking_does_not_keep_submitted_records_alive_until_the_offset_flush():
    # Completed submissions wait in the tracker until the next offset flush; holding
    # their records that long made memory grow with the flush interval.
    submitted = SubmittedRecords()
    records = _records({"f": "a"}, 0, 3) + _records({"f": "b"}, 0, 2)
    alive = [weakref.ref(r) for r in records]
    submission = submitted.submit(records)
    submission.waiting = 0
    submitted.completed(submission)
    del records
    gc.collect()
    assert [ref() for ref in alive] == [None] * 5
    assert submitted.in_flight == 0
    safe, covered = submitted.committable()
    assert {k: v[1] for k, v in safe.items()} == {
        (("f", "a"),): {"position": 3}, (("f", "b"),): {"position": 2}}
    assert covered == 5


def test_held_acknowledgement_keeps_offsets_behind_it_and_restart_resumes_there(
        gated_config, source_path):
    GATE.hold(lambda m: m.value is not None and b'"s0-100"' in m.value)
    herder = StandaloneHerder(gated_config)
    herder.start()
    try:
        herder.create_connector(source_config(records=300, batch=50))
        eventually(lambda: len(read_topic(gated_config, "counting-out")) == 300)
        # everything after the held batch is acknowledged...
        eventually(lambda: herder.metrics()[0].acknowledged == 250, what="later acks")
        herder.stop_connector("counting")
        # ...but the stored offset stays where the unacknowledged batch begins.
        offsets = herder.offsets("counting").to_dict()["offsets"]
        assert offsets == [{"partition": {"stream": 0}, "offset": {"position": 100}}]
        if source_path == "records":  # the columnar source has no commit_record
            acked = {value for value, _ in STATE["counting"]["commit_record"]}
            assert "s0-99" in acked and "s0-150" in acked and "s0-100" not in acked
        GATE.release()
        herder.resume_connector("counting")
        eventually(lambda: herder.offsets("counting").offsets
                   and herder.offsets("counting").offsets[0]["offset"] == {"position": 300},
                   what="all offsets committed after the restart")
        assert STATE["counting"]["resumed_at"][-1] == {0: 100}
        values = [m.value for m in read_topic(gated_config, "counting-out")]
        expected = {f'"s0-{n}"' for n in range(300)}
        assert {v.decode().rsplit(":", 1)[1].rstrip("}") for v in values} == expected
        # duplicates only within the window that was not committed
        assert len(values) == 300 + 200
    finally:
        herder.stop()


def test_a_lost_acknowledgement_fails_the_task_and_nothing_past_it_commits(gated_config):
    GATE.fail(lambda m: m.value is not None and b'"s0-120"' in m.value,
              lambda: TransportError("broker lost the message"))
    with StandaloneHerder(gated_config) as herder:
        herder.create_connector(source_config(records=300, batch=50))
        eventually(lambda: herder.connector_status("counting").tasks[0].state is State.FAILED)
        status = herder.connector_status("counting").tasks[0]
        assert "PRODUCE" in status.trace and "broker lost the message" in status.trace
        offsets = herder.offsets("counting").offsets
        assert offsets[0]["offset"]["position"] <= 100


def test_a_retriable_send_failure_is_resent_and_nothing_is_lost(gated_config):
    # defaults: errors.retry.timeout=0, but delivery.timeout.ms (2 minutes) resends, as
    # Kafka's producer retries under Kafka Connect
    GATE.fail(lambda m: m.value is not None and b'"s0-120"' in m.value,
              lambda: RetriableTransportError("broker busy"), times=2)
    with StandaloneHerder(gated_config) as herder:
        herder.create_connector(source_config(records=300, batch=50,
                                              errors_retry_delay_max_ms=50))
        eventually(lambda: herder.offsets("counting").offsets
                   and herder.offsets("counting").offsets[0]["offset"] == {"position": 300})
        assert herder.connector_status("counting").tasks[0].state is State.RUNNING
        assert herder.metrics()[0].retries >= 2
        values = [m.value.decode() for m in read_topic(gated_config, "counting-out")]
        assert sum('"s0-120"' in v for v in values) == 3  # stored, then resent twice
        assert len({v for v in values}) == 300


def test_a_retriable_send_failure_fails_the_task_once_the_delivery_timeout_passed(
        gated_config):
    GATE.fail(lambda m: m.value is not None and b'"s0-120"' in m.value,
              lambda: RetriableTransportError("broker busy"), times=100)
    with StandaloneHerder(gated_config) as herder:
        herder.create_connector(source_config(records=300, batch=50,
                                              delivery_timeout_ms=400,
                                              errors_retry_delay_max_ms=50))
        eventually(lambda: herder.connector_status("counting").tasks[0].state is State.FAILED)
        status = herder.connector_status("counting").tasks[0]
        assert "PRODUCE" in status.trace and "broker busy" in status.trace
        assert herder.metrics()[0].retries >= 2  # resent until the 400 ms were up
        offsets = herder.offsets("counting").offsets
        assert not offsets or offsets[0]["offset"]["position"] <= 100


def test_back_pressure_stops_polling_while_too_much_is_unacknowledged(gated_config):
    GATE.hold(lambda m: True)
    config = dict(gated_config, **{"source.max.in.flight.records": 100})
    with StandaloneHerder(config) as herder:
        herder.create_connector(source_config(batch=50))
        eventually(lambda: herder.metrics()[0].in_flight >= 100)
        time.sleep(0.3)
        assert herder.metrics()[0].polled == 100
        GATE.release()
        eventually(lambda: herder.metrics()[0].polled > 1000, what="polling again")


def test_records_dropped_by_a_transform_count_as_done(herder, worker_config):
    herder.create_connector(source_config(
        records=120, batch=40, transforms="drop", **{
            "transforms.drop.type": "Filter", "transforms.drop.predicate": "all",
            "predicates": "all", "predicates.all.type": "TopicNameMatches",
            "predicates.all.pattern": ".*"}))
    eventually(lambda: herder.offsets("counting").offsets
               and herder.offsets("counting").offsets[0]["offset"] == {"position": 120})
    assert read_topic(worker_config, "counting-out") == []
    calls = STATE["counting"]["commit_record"]
    assert len(calls) == 120 and all(metadata is None for _, metadata in calls)
    assert herder.metrics()[0].filtered == 120


def test_commit_record_is_called_per_acknowledged_record_with_its_metadata(herder):
    herder.create_connector(source_config(records=60, batch=25))
    eventually(lambda: len(STATE["counting"]["commit_record"]) == 60)
    calls = STATE["counting"]["commit_record"]
    assert [v for v, _ in calls] == [f"s0-{n}" for n in range(60)]
    assert [m.offset for _, m in calls] == list(range(60))
    assert all(m.topic == "counting-out" for _, m in calls)
    eventually(lambda: STATE["counting"]["commits"], what="task.commit() after a flush")


@pytest.mark.parametrize("streams", [3])
def test_each_source_partition_resumes_from_its_own_offset(herder, streams):
    herder.create_connector(source_config(records=80, batch=30, streams=streams))
    eventually(lambda: len(herder.offsets("counting").offsets) == streams
               and all(e["offset"] == {"position": 80}
                       for e in herder.offsets("counting").offsets))
    herder.stop_connector("counting")
    herder.alter_offsets("counting", [{"partition": {"stream": 1}, "offset": {"position": 7}}])
    herder.resume_connector("counting")
    eventually(lambda: len(STATE["counting"]["resumed_at"]) == 2)
    assert STATE["counting"]["resumed_at"][-1] == {0: 80, 1: 7, 2: 80}


def test_a_retriable_poll_error_is_retried(herder):
    herder.create_connector(source_config(records=30, batch=10, retriable_failures=2,
                                          errors_retry_delay_max_ms=20))
    eventually(lambda: herder.offsets("counting").offsets
               and herder.offsets("counting").offsets[0]["offset"] == {"position": 30})
    assert herder.connector_status("counting").tasks[0].state is State.RUNNING
    assert herder.metrics()[0].retries == 2
