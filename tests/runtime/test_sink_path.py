"""The sink path: subscriptions, rebalances, offset resets, and oversized source records."""

from __future__ import annotations

import time
from typing import ClassVar

import attrs
from runtime_connectors import GATE, STATE
from runtime_support import eventually, read_topic, sink_config, source_config
from test_error_handling import _headers, _json, _produce

from omconnect import plugins
from omconnect.errors import RetriableTransportError
from omconnect.runtime import StandaloneHerder
from omconnect.transport import Capabilities
from omconnect.transport.memory import MemoryTransport


def test_topics_regex_picks_up_topics_created_later(worker_config):
    config = dict(worker_config, **{"topics.regex.refresh.interval.ms": 100})
    with StandaloneHerder(config) as herder:
        _produce(worker_config, "in-a", [_json("a")])
        herder.create_connector(sink_config(topics="", **{"topics.regex": "in-.*"}))
        eventually(lambda: len(STATE["listing"]["records"]) == 1)
        _produce(worker_config, "in-b", [_json("b")])
        _produce(worker_config, "other", [_json("x")])
        eventually(lambda: len(STATE["listing"]["records"]) == 2)
        assert sorted(r[0] for r in STATE["listing"]["records"]) == ["in-a", "in-b"]


def test_offsets_a_task_sets_in_open_apply_before_reading(herder, worker_config):
    _produce(worker_config, "in", [_json(f"v{n}") for n in range(10)])
    herder.create_connector(sink_config(seek_to=7))
    eventually(lambda: len(STATE["listing"]["records"]) == 3)
    assert [r[2] for r in STATE["listing"]["records"]] == [7, 8, 9]


def test_two_sink_tasks_share_the_partitions_and_receive_everything_once(worker_config):
    config = dict(worker_config, **{"topic.creation.default.partitions": 2})
    with StandaloneHerder(config) as herder:
        herder.create_connector(source_config(records=200, batch=50, streams=4))
        eventually(lambda: len(read_topic(worker_config, "counting-out")) == 800)
        herder.create_connector(sink_config(topics="counting-out", tasks_max=2))
        eventually(lambda: len(STATE["listing"]["records"]) == 800)
        values = [r[4] for r in STATE["listing"]["records"]]
        assert len(set(values)) == 800
        eventually(lambda: sum(e["offset"]["kafka_offset"]
                               for e in herder.offsets("listing").offsets) == 800)
        opened = [tp for call in STATE["listing"]["opened"] for tp in call]
        assert {tp.partition for tp in opened} == {0, 1}


def test_an_oversized_source_record_is_dead_lettered_without_its_value(worker_config):
    config = dict(worker_config, **{"memory.max.message.bytes": 1024})
    with StandaloneHerder(config) as herder:
        herder.create_connector(source_config(
            records=100, batch=50, big_at=60, errors_tolerance="all",
            errors_deadletterqueue_topic_name="dlq",
            errors_deadletterqueue_context_headers_enable=True))
        eventually(lambda: herder.offsets("counting").offsets
                   and herder.offsets("counting").offsets[0]["offset"] == {"position": 100})
        assert len(read_topic(worker_config, "counting-out")) == 99
        [dead] = read_topic(worker_config, "dlq")
        headers = _headers(dead)
        assert dead.value is None and dead.key is not None
        assert headers["__connect.errors.stage"] == "PRODUCE"
        assert headers["__connect.errors.exception.class.name"].endswith(
            "MessageTooLargeError")
        assert "1024" in headers["__connect.errors.exception.message"]


def test_an_oversized_source_record_fails_the_task_without_tolerance(worker_config):
    config = dict(worker_config, **{"memory.max.message.bytes": 1024})
    with StandaloneHerder(config) as herder:
        herder.create_connector(source_config(records=100, batch=50, big_at=60))
        eventually(lambda: herder.connector_status("counting").tasks[0].trace)
        trace = herder.connector_status("counting").tasks[0].trace
        assert "PRODUCE" in trace and "exceeds the transport's limit of 1024" in trace
        offsets = herder.offsets("counting").offsets
        assert offsets[0]["offset"]["position"] <= 50


def test_request_task_reconfiguration_restarts_tasks_with_new_configs(herder):
    herder.create_connector({**source_config(batch=10, streams=2, tasks_max=2),
                             "connector.class": "runtime_connectors:ReconfiguringSource"})
    eventually(lambda: len(herder.metrics()) == 1)
    STATE["counting"]["connector"][0].set_tasks(2)
    eventually(lambda: len(herder.metrics()) == 2, what="a second task")
    assert len(herder.task_configs("counting")) == 2
    assert len(STATE["counting"]["connector_starts"]) == 1


def test_only_what_pre_commit_returns_is_committed(herder, worker_config):
    _produce(worker_config, "in", [_json(f"v{n}") for n in range(10)])
    herder.create_connector(sink_config(commit_lag=4))
    eventually(lambda: herder.offsets("listing").offsets
               and herder.offsets("listing").offsets[0]["offset"] == {"kafka_offset": 6})
    assert len(STATE["listing"]["records"]) == 10
    assert STATE["listing"]["pre_commits"][-1] == {
        next(iter(STATE["listing"]["pre_commits"][-1])): 10}


def test_sink_stop_comes_last_on_the_task_thread_after_the_final_commit(herder, worker_config):
    """SinkTask contract: stop() is called last, after the final pre_commit and close, on
    the task's own thread, so a sink may close its writer in stop() safely."""
    _produce(worker_config, "in", [_json(f"v{n}") for n in range(5)])
    herder.create_connector(sink_config())
    eventually(lambda: len(STATE["listing"]["records"]) == 5)
    herder.stop_connector("listing")
    eventually(lambda: any(call == "stop" for call, _ in STATE["listing"]["calls"]))
    calls = STATE["listing"]["calls"]
    assert [call for call, _ in calls[-3:]] == ["pre_commit", "close", "stop"]
    assert len({thread for _, thread in calls[-3:]}) == 1
    assert STATE["listing"]["pre_commits"][-1] == {
        tp: 5 for tp in STATE["listing"]["pre_commits"][-1]}


def test_a_sink_reports_its_partitions_and_a_lag_that_does_not_wait_for_commits(
        worker_config):
    # Commits every minute, and put() keeps failing retriably so nothing is ever put:
    # the lag must follow what arrives without waiting for a commit.
    config = dict(worker_config, **{"offset.flush.interval.ms": 60_000})
    with StandaloneHerder(config) as herder:
        _produce(worker_config, "in", [_json("first")])
        herder.create_connector(sink_config(retriable_failures=1_000_000,
                                            errors_retry_timeout=0))
        eventually(lambda: herder.metrics() and herder.metrics()[0].assigned_partitions == 1,
                   what="the partition assigned")
        eventually(lambda: herder.metrics()[0].lag == 1, what="lag 1")
        _produce(worker_config, "in", [_json(f"v{n}") for n in range(25)])
        eventually(lambda: herder.metrics()[0].lag == 26, what="lag 26")
        assert STATE["listing"]["records"] == []
        # The task thread keeps going round its loop (what --stop-when-idle looks at).
        loops = herder.metrics()[0].loops
        eventually(lambda: herder.metrics()[0].loops >= loops + 2, what="the loop going round")


def test_a_sink_waits_for_its_topic_and_never_creates_it(gated_config):
    # The gated transport's consumers create what they subscribe to, with 1 partition.
    worker_config = {"memory.namespace": gated_config["gated.namespace"]}
    config = dict(gated_config, **{"topic.creation.default.partitions": 3})
    with StandaloneHerder(config) as herder:
        herder.create_connector(sink_config(topics="counting-out"))
        eventually(lambda: herder.connector_status("listing").tasks[0].state.value
                   == "RUNNING")
        time.sleep(0.5)  # long enough for a sink that creates topics to have done so
        assert "counting-out" not in _topics(worker_config)
        herder.create_connector(source_config(records=50, batch=25, streams=6))
        eventually(lambda: len(STATE["listing"]["records"]) == 300)
        # The source's layout (topic.creation.default.partitions), not a sink's default.
        assert _topics(worker_config)["counting-out"].partitions == 3
        assert len({r[4] for r in STATE["listing"]["records"]}) == 300


def test_retriable_poll_and_commit_failures_are_retried_keeping_positions(gated_config):
    GATE.fail_consumer("poll", [RetriableTransportError("broker restarting")] * 3)
    GATE.fail_consumer("commit", [RetriableTransportError("broker restarting")] * 2)
    with StandaloneHerder(gated_config) as herder:
        herder.create_connector(source_config(records=40, batch=10, streams=5))
        herder.create_connector(sink_config(topics="counting-out"))
        eventually(lambda: len(STATE["listing"]["records"]) == 200)
        eventually(lambda: herder.offsets("listing").offsets
                   and herder.offsets("listing").offsets[0]["offset"]["kafka_offset"] == 200)
        assert herder.connector_status("listing").tasks[0].state.value == "RUNNING"
        assert len({r[4] for r in STATE["listing"]["records"]}) == 200
        assert GATE.consumer_calls["poll"] > 3 and GATE.consumer_calls["commit"] > 2


def test_a_poll_failing_past_the_delivery_timeout_fails_the_task_naming_it(gated_config):
    GATE.fail_consumer("poll", [RetriableTransportError("broker gone")] * 1000)
    with StandaloneHerder(gated_config) as herder:
        herder.create_connector(source_config(records=10, batch=10))
        herder.create_connector(sink_config(topics="counting-out",
                                            delivery_timeout_ms=700))
        eventually(lambda: herder.connector_status("listing").tasks[0].state.value
                   == "FAILED", timeout=15)
        trace = herder.connector_status("listing").tasks[0].trace or ""
        assert "poll kept failing with retriable transport errors" in trace
        assert "broker gone" in trace


def _topics(worker_config):
    from omconnect.transport.memory import MemoryTransport

    with MemoryTransport({"namespace": worker_config["memory.namespace"]}) as transport:
        return transport.admin().list_topics()


def test_a_sink_on_a_transport_without_old_messages_for_new_groups_is_warned_about(
        worker_config, caplog):
    config = dict(worker_config, transport="forgetful",
                  **{"forgetful.namespace": worker_config["memory.namespace"]})
    del config["memory.namespace"]
    _produce(worker_config, "in", [_json("early")])
    caplog.set_level("WARNING", logger="omconnect.runtime.sink_task_runner")
    with StandaloneHerder(config) as herder:
        herder.create_connector(sink_config(topics="in"))
        eventually(lambda: any("does not keep messages for a group" in r.getMessage()
                               for r in caplog.records), what="the warning")
    [warning] = [r.getMessage() for r in caplog.records
                 if "does not keep messages for a group" in r.getMessage()]
    assert "'listing'" in warning and "'in'" in warning and "'forgetful'" in warning


class ForgetfulTransport(MemoryTransport):
    """The memory transport, declaring that a new group does not get older messages (as
    RabbitMQ's classic topics do)."""

    name: ClassVar[str] = "forgetful"

    @property
    def capabilities(self) -> Capabilities:
        return attrs.evolve(super().capabilities, new_subscriber_receives_old_messages=False)


plugins.register_alias(plugins.TRANSPORTS, "forgetful", f"{__name__}:ForgetfulTransport")
