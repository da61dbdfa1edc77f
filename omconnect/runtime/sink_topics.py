"""Which topics a sink task subscribes to. Sinks never create topics.

As Kafka Connect's sinks, a sink reads topics that a source (or anything else) created;
it does not create them with its transport's defaults, which would race the creator's
layout (``topic.creation.*``) and could leave a topic with fewer partitions than asked.

* ``topics``: the named topics that exist now; the missing ones are looked up again
  until they exist (the sink waits for them, saying so once in the log), then the
  subscription grows to include them.
* ``topics.regex``: the existing topics whose name matches (the dead-letter topic
  excluded), looked up again every ``topics.regex.refresh.interval.ms``.

A transport without topic listing (:class:`~omconnect.errors.UnsupportedOperationError`,
e.g. Pulsar without an admin API) cannot tell what exists: the named topics are then
subscribed to as they are, and the transport's broker decides.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence

import attrs

from omconnect.errors import RetriableError, UnsupportedOperationError
from omconnect.transport.spi import Admin

__all__ = ["SinkTopics", "TopicLookup"]

_log = logging.getLogger(__name__)


@attrs.frozen
class TopicLookup:
    """What a lookup found.

    Attributes:
        subscribe: The topics to subscribe to (existing ones, sorted for a regex).
        missing: Named topics that do not exist yet (always empty for a regex).

    """

    subscribe: list[str]
    missing: list[str]


class SinkTopics:
    """Finds the topics a sink subscribes to (see the module docstring).

    Args:
        topics: The connector's ``topics`` (empty when it uses a regex).
        regex: The connector's ``topics.regex``, or ``None``.
        exclude: A topic never subscribed to through the regex (the dead-letter topic).
        admin: Opens an admin client of the transport.

    """

    def __init__(self, topics: Sequence[str], regex: str | None, exclude: str | None,
                 admin: Callable[[], Admin]) -> None:
        self._topics = list(topics)
        self._pattern = re.compile(regex) if regex is not None else None
        self._exclude = exclude
        self._open_admin = admin
        self._listing = True  # False once the transport said it cannot list topics

    def lookup(self) -> TopicLookup | None:
        """The topics to subscribe to now; ``None`` when the transport could not answer
        (a retriable error, logged): keep what there is and ask again later.

        Raises:
            TransportError: Listing topics failed for good.

        """
        if not self._listing and self._pattern is None:
            return TopicLookup(list(self._topics), [])
        try:
            admin = self._open_admin()
            try:
                existing = set(admin.list_topics())
            finally:
                admin.close()
        except UnsupportedOperationError:
            if self._pattern is not None:
                raise
            self._listing = False
            _log.info("the transport cannot list topics; subscribing to %s as named",
                      self._topics)
            return TopicLookup(list(self._topics), [])
        except RetriableError as exc:
            _log.warning("looking up the topics to read failed (retriable; trying again): %s",
                         exc)
            return None
        if self._pattern is not None:
            pattern = self._pattern
            found = sorted(t for t in existing if pattern.fullmatch(t) and t != self._exclude)
            return TopicLookup(found, [])
        return TopicLookup([t for t in self._topics if t in existing],
                           [t for t in self._topics if t not in existing])
