"""Each deliberately broken transport is caught by the case meant to catch it."""

from __future__ import annotations

import pytest
from kit import outcomes, run_suite

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
