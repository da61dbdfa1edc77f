"""Each deliberately broken transport is caught by the case meant to catch it."""

from __future__ import annotations

import pytest
from nested_suite import outcomes, run_suite

pytest_plugins = ["pytester"]

CAUGHT_BY = {
    "DropsEvery100th": {"test_round_trip", "test_concurrent_producers_lose_nothing"},
    "IgnoresCommit": {"test_commit_then_reopen_no_redelivery",
                      "test_uncommitted_messages_are_redelivered"},
    "ReordersWithinKey": {"test_order_per_key"},
    "ForgetfulStore": {"test_survives_close_and_reopen"},
}


@pytest.mark.parametrize("broken", sorted(CAUGHT_BY))
def test_breakage_is_caught_by_its_case(pytester: pytest.Pytester, broken: str) -> None:
    result, data = run_suite(pytester, "--omconnect-transport", f"broken_transports:{broken}")
    seen = outcomes(data)
    assert len(seen) > 30, "the whole suite ran"
    failed = {case for case, outcome in seen.items() if outcome == "fail"}
    assert CAUGHT_BY[broken] <= failed, f"{broken} was not caught; failures: {sorted(failed)}"
    assert result.ret == pytest.ExitCode.TESTS_FAILED


def test_broker_restart_case_passes_when_nothing_is_lost(pytester: pytest.Pytester) -> None:
    config = pytester.path / "profile.yaml"
    config.write_text("conformance.profile: broken_transports:pretend_broker_profile\n")
    _, data = run_suite(pytester, "--omconnect-transport", "broken_transports:KeepingBroker",
                        "--omconnect-transport-config", str(config), "-k", "broker_restart_loses")
    assert outcomes(data) == {"test_broker_restart_loses_no_acknowledged_message": "pass"}


def test_broker_restart_case_catches_a_broker_that_forgets(pytester: pytest.Pytester) -> None:
    config = pytester.path / "profile.yaml"
    config.write_text("conformance.profile: broken_transports:pretend_broker_profile\n")
    _, data = run_suite(pytester, "--omconnect-transport", "broken_transports:AmnesiacBroker",
                        "--omconnect-transport-config", str(config), "-k", "broker_restart_loses")
    assert outcomes(data) == {"test_broker_restart_loses_no_acknowledged_message": "fail"}
    assert "acknowledged messages were lost" in data["cases"][0]["reason"]


def test_unreachable_case_passes_on_a_clear_error(pytester: pytest.Pytester) -> None:
    config = pytester.path / "profile.yaml"
    config.write_text("conformance.profile: broken_transports:unreachable_profile\n")
    _, data = run_suite(pytester, "--omconnect-transport",
                        "broken_transports:ConnectingTransport",
                        "--omconnect-transport-config", str(config), "-k", "unreachable")
    assert outcomes(data) == {"test_unreachable_broker_fails_within_timeout": "pass"}


def test_unreachable_case_catches_a_hang(pytester: pytest.Pytester) -> None:
    config = pytester.path / "profile.yaml"
    config.write_text("conformance.profile: broken_transports:unreachable_profile\n")
    _, data = run_suite(pytester, "--omconnect-transport",
                        "broken_transports:HangsWhenUnreachable",
                        "--omconnect-transport-config", str(config), "-k", "unreachable")
    assert outcomes(data) == {"test_unreachable_broker_fails_within_timeout": "fail"}
    assert "hangs" in data["cases"][0]["reason"]
