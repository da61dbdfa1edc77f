"""How the conformance suite runs against the embedded transport.

``pytest --omconnect-transport embedded`` finds :func:`conformance_profile` here (the
``embedded`` entry of the ``omconnect.conformance_profiles`` entry point): every
case gets a fresh data directory, and group timeouts are short so the take-over cases
finish in seconds rather than the default ten.
"""

from __future__ import annotations

from pathlib import Path

from omconnect.testing.profile import TMP_PLACEHOLDER, TransportProfile

__all__ = ["conformance_profile"]


def conformance_profile(workdir: Path) -> TransportProfile:
    """A profile with a data directory per case (``{tmp}``) and short group timeouts.

    Args:
        workdir: A directory for the run (unused: each case has its own directory).

    """
    return TransportProfile(config={
        "path": f"{TMP_PLACEHOLDER}/embedded",
        "session.timeout.ms": 2000,
        "heartbeat.interval.ms": 200,
    })
