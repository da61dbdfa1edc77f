"""Capabilities claim nothing unless declared: a transport that forgets a flag
under-claims, and the suite then skips the cases the flag gates, naming it."""

from __future__ import annotations

import attrs

from omconnect.transport import Capabilities


def test_a_capabilities_record_with_no_arguments_claims_nothing() -> None:
    claimed = Capabilities()
    flags = [f.name for f in attrs.fields(Capabilities) if f.type in (bool, "bool")]
    assert flags, "Capabilities has boolean flags"
    assert [name for name in flags if getattr(claimed, name)] == []
    assert claimed.max_partitions == 1
    assert claimed.max_message_bytes is None
    assert claimed.missing(replayable=True, headers=True, pause=False) == [
        "replayable", "headers"]
