"""The console sink prints what it is given; the null sink counts and discards."""

from __future__ import annotations

import io

from omconnect_console.console import ConsoleSinkConnector, ConsoleSinkTask
from omconnect_console.null import COUNTS, NullSinkConnector

from omconnect.connector import resolve_connector_class
from omconnect.data import Headers
from omconnect.records import SinkRecord


def test_console_prints_topic_partition_offset_key_and_value():
    out = io.StringIO()
    task = ConsoleSinkTask(out)
    task.start({"print.headers": "true", "print.timestamp": "true"})
    task.put([SinkRecord(topic="orders", partition=2, offset=41, key=7, value={"a": 1},
                         timestamp=1234, headers=Headers([("h", b"v")]))])
    task.flush({})
    assert out.getvalue() == \
        "orders\t2\t41\ttimestamp=1234\tkey=7\tvalue={'a': 1}\theaders=h=b'v'\n"


def test_console_can_leave_out_the_key():
    out = io.StringIO()
    task = ConsoleSinkTask(out)
    task.start({"print.key": "false"})
    task.put([SinkRecord(topic="t", partition=0, offset=0, key="k", value="v")])
    assert out.getvalue() == "t\t0\t0\tvalue='v'\n"


def test_null_sink_counts_per_connector_and_keeps_nothing():
    connector = NullSinkConnector()
    connector.start({"name": "bench-null", "topics": "t"})
    configs = connector.task_configs(2)
    assert len(configs) == 2
    task = connector.task_class()()
    task.start(configs[0])
    before = COUNTS["bench-null"]
    task.put([SinkRecord(topic="t", partition=0, offset=i, value=b"x") for i in range(5)])
    task.put([])
    assert task.count == 5
    assert COUNTS["bench-null"] - before == 5
    assert resolve_connector_class("null") is NullSinkConnector
    assert resolve_connector_class("console") is ConsoleSinkConnector
