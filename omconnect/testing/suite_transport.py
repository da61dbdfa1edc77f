"""The transport suite as ``pytest --omconnect-transport NAME`` collects it.

The transport class is resolved by name (entry point, alias or Python path); options
come from ``--omconnect-transport-config`` and the transport package's
``conformance_profile`` (see :mod:`omconnect.testing.profile`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from omconnect import plugins
from omconnect.testing.profile import (
    BrokerControl,
    TransportFactory,
    TransportProfile,
    UnreachableBroker,
    load_config_file,
    substitute_tmp,
)
from omconnect.testing.transport import TransportConformance
from omconnect.transport.spi import Transport

__all__ = ["TestTransportConformance"]


def _check_transport(obj: object) -> str | None:
    if not (isinstance(obj, type) and issubclass(obj, Transport)):
        return f"{obj!r} is not a subclass of omconnect.transport.Transport"
    return None


@pytest.fixture(scope="session")
def omconnect_transport_class(pytestconfig: pytest.Config) -> type[Transport]:
    """The transport class named by ``--omconnect-transport``."""
    name = pytestconfig.getoption("omconnect_transport")
    cls: type[Transport] = plugins.load(plugins.TRANSPORTS, name, check=_check_transport)
    return cls


@pytest.fixture(scope="session")
def omconnect_transport_profile(
    pytestconfig: pytest.Config,
    omconnect_transport_class: type[Transport],
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[TransportProfile]:
    """The transport's profile for this run (started once, stopped at the end)."""
    path = pytestconfig.getoption("omconnect_transport_config")
    settings = load_config_file(path) if path else {}
    profile = TransportProfile.resolve(omconnect_transport_class, settings,
                                       tmp_path_factory.mktemp("omconnect-profile"))
    try:
        yield profile
    finally:
        if profile.stop is not None:
            profile.stop()


class TestTransportConformance(TransportConformance):
    """Every transport case, against the transport named on the command line."""

    @pytest.fixture
    def transport_factory(
        self,
        omconnect_transport_class: type[Transport],
        omconnect_transport_profile: TransportProfile,
        tmp_path: Path,
    ) -> Callable[[], Transport]:
        """Builds the transport with the profile's options, ``{tmp}`` per case."""
        config = substitute_tmp(omconnect_transport_profile.config, tmp_path)
        return TransportFactory.of(omconnect_transport_class, config)

    @pytest.fixture
    def broker_control(self, omconnect_transport_profile: TransportProfile
                       ) -> BrokerControl | None:
        """The profile's broker restart, if any."""
        return omconnect_transport_profile.broker

    @pytest.fixture
    def expected_failures(self, omconnect_transport_profile: TransportProfile
                          ) -> dict[str, str]:
        """The profile's known broker defects (case name -> reason)."""
        return omconnect_transport_profile.expected_failures

    @pytest.fixture
    def skip_cases(self, omconnect_transport_profile: TransportProfile) -> dict[str, str]:
        """The profile's broker defects that break cases only in some runs."""
        return omconnect_transport_profile.skip_cases

    @pytest.fixture
    def unreachable_broker(
        self,
        omconnect_transport_class: type[Transport],
        omconnect_transport_profile: TransportProfile,
        tmp_path: Path,
    ) -> UnreachableBroker | None:
        """The profile's unreachable-broker config, if any."""
        profile = omconnect_transport_profile
        if profile.unreachable_config is None:
            return None
        config = substitute_tmp({**profile.config, **profile.unreachable_config}, tmp_path)
        return UnreachableBroker(factory=TransportFactory.of(omconnect_transport_class, config),
                                 timeout=profile.unreachable_timeout)
