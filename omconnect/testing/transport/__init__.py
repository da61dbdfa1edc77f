"""The transport conformance cases, as reusable pytest test classes.

:class:`TransportConformance` holds every case; the mixins hold one area each, so an
author can also run a part. A subclass provides the ``transport_factory`` fixture (a
callable building a fresh transport); the transport's :class:`~omconnect.transport.
Capabilities` decide which cases run, and each skip names the capability::

    class TestMyTransport(TransportConformance):
        @pytest.fixture
        def transport_factory(self, tmp_path):
            return lambda: MyTransport({"path": str(tmp_path)})
"""

from omconnect.testing.transport.base import SuiteSettings, TransportCase, TransportHarness
from omconnect.testing.transport.cluster import ClusterCases
from omconnect.testing.transport.columnar import ColumnarCases
from omconnect.testing.transport.failures import FailureCases
from omconnect.testing.transport.groups import DeliveryCases, GroupCases
from omconnect.testing.transport.kv import KeyValueCases
from omconnect.testing.transport.messaging import MessagingCases
from omconnect.testing.transport.pipeline import PipelineCases

__all__ = [
    "ClusterCases",
    "ColumnarCases",
    "DeliveryCases",
    "FailureCases",
    "GroupCases",
    "KeyValueCases",
    "MessagingCases",
    "PipelineCases",
    "SuiteSettings",
    "TransportApiCases",
    "TransportCase",
    "TransportConformance",
    "TransportHarness",
]


class TransportApiCases(MessagingCases, DeliveryCases, GroupCases, KeyValueCases,
                        FailureCases, ColumnarCases):
    """Every case that drives the transport's API directly (TRANSPORT-1 to 53 and 70 to
    73), without
    the pipeline cases (which run workers).
    """


class TransportConformance(TransportApiCases, PipelineCases, ClusterCases):
    """Every transport case. Subclass it and provide a ``transport_factory`` fixture;
    optionally ``broker_control`` (an object with ``restart()``),
    ``unreachable_broker`` (an :class:`~omconnect.testing.profile.UnreachableBroker`),
    ``expected_failures`` and ``skip_cases``.
    """
