"""The pytest plugin: silent unless asked, collects the suite, summarises every case."""

from __future__ import annotations

import json

import pytest
from nested_suite import MEMORY, outcomes, plugin_args, run_suite

pytest_plugins = ["pytester"]


def test_plugin_does_nothing_without_its_options(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_plain="def test_plain():\n    assert True\n")
    result = pytester.runpytest(*plugin_args(), "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    assert "omconnect conformance" not in result.stdout.str()


def test_memory_transport_passes_the_suite(pytester: pytest.Pytester) -> None:
    result, data = run_suite(pytester, "--omconnect-transport", MEMORY, timeout=30)
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()[-3000:]
    assert data["transport"]["name"] == "memory"
    seen = outcomes(data)
    assert seen["test_round_trip"] == "pass"
    assert seen["test_member_killed_hands_over"] == "skip"
    assert seen["test_send_batch_round_trip"] == "pass"
    assert seen["test_batches_and_messages_mix"] == "pass"
    assert "omconnect conformance: transport memory" in result.stdout.str()


def test_every_skip_names_its_reason(pytester: pytest.Pytester) -> None:
    _, data = run_suite(pytester, "--omconnect-transport", MEMORY, "-k", "process or persist")
    skipped = [case for case in data["cases"] if case["outcome"] == "skip"]
    assert skipped, "the memory transport is neither persistent nor cross-process"
    for case in skipped:
        assert case["reason"].startswith("needs "), case
    assert all(case["rule"].startswith("TRANSPORT-") for case in data["cases"])


def test_explicit_paths_are_kept_beside_the_suite(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_own="def test_own():\n    assert True\n")
    result, data = run_suite(pytester, "--omconnect-transport", MEMORY, "test_own.py",
                             "-k", "test_own or declares")
    result.assert_outcomes(passed=2)
    assert [case["case"] for case in data["cases"]] == [
        "MessagingCases::test_declares_capabilities"]


def test_unknown_transport_is_a_clear_error(pytester: pytest.Pytester) -> None:
    result, _ = run_suite(pytester, "--omconnect-transport", "memroy")
    assert result.ret != pytest.ExitCode.OK
    assert "did you mean 'memory'" in result.stdout.str()


def test_third_party_subclass_runs_the_cases(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_mine=f'''
import pytest
from omconnect.testing import TransportConformance
from omconnect.testing.profile import TransportFactory
from omconnect.plugins import load


class TestMine(TransportConformance):
    @pytest.fixture
    def transport_factory(self, tmp_path):
        return TransportFactory(transport_class="{MEMORY}",
                                config={{"namespace": str(tmp_path)}})
''')
    report = pytester.path / "out.json"
    result = pytester.runpytest(*plugin_args(), "-p", "no:cacheprovider", "-q",
                                "--omconnect-json", str(report), "-k", "put_get or round_trip")
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()[-3000:]
    data = json.loads(report.read_text())
    assert {c["case"] for c in data["cases"]} >= {"MessagingCases::test_round_trip",
                                                   "KeyValueCases::test_put_get"}
    assert "omconnect conformance: transport memory" in result.stdout.str()


def test_embedded_transport_passes_the_suite(pytester: pytest.Pytester) -> None:
    result, data = run_suite(pytester, "--omconnect-transport", "embedded", timeout=30)
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()[-3000:]
    seen = outcomes(data)
    assert data["transport"]["capabilities"]["persistent"] is True
    # Persistent and cross-process: the process-kill and two-process cases ran.
    assert seen["test_survives_process_restart"] == "pass"
    assert seen["test_member_killed_hands_over"] == "pass"
    assert seen["test_concurrent_writers_from_two_processes"] == "pass"
    # The columnar calls, native on this transport.
    for case in ("test_send_batch_round_trip", "test_poll_batch_keeps_partition_order_and_commits",
                 "test_batches_and_messages_mix", "test_send_batch_over_maximum_is_rejected"):
        assert seen[case] == "pass", case


def test_suite_subscribes_before_sending_where_new_groups_miss_old_messages(
        pytester: pytest.Pytester) -> None:
    result, data = run_suite(pytester, "--omconnect-transport", "broken_transports:LateJoiner",
                             timeout=10)
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()[-3000:]
    assert outcomes(data)["test_new_group_receives_old_messages"] == "skip"
