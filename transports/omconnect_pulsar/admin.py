"""Topic administration: Pulsar's admin REST API when ``pulsar.admin.url`` is set, topic
creation by producer otherwise.

Pulsar's binary protocol (what pulsar-client speaks) cannot create a topic with a chosen
number of partitions, list a namespace's topics or delete a topic; only the admin REST API
(``/admin/v2``, port 8080 on a broker) can. So:

* **With** ``pulsar.admin.url``: ``create_topics`` creates partitioned topics (``PUT
  .../partitions`` with the count) or non-partitioned ones (``PUT .../<topic>``), leaving
  existing ones as they are; ``list_topics`` and ``delete_topics`` (``force=true``) work.
  ``pulsar.auth.token`` is sent as a bearer token.
* **Without** it (brokers without the admin API, such as pulsar-lite): ``create_topics``
  opens and closes a producer on each topic, which makes a broker with topic
  auto-creation create it, with the broker's default partitioning
  (``allowAutoTopicCreationType`` / ``defaultNumPartitions``); a topic that ends up with
  another partition count than asked is logged as a warning. ``list_topics`` and
  ``delete_topics`` raise UnsupportedOperationError (the runtime then trusts topics to be
  created on first use).
"""

from __future__ import annotations

import json
import logging
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Sequence
from typing import Any

from omconnect.errors import (
    RetriableTransportError,
    TransportError,
    TransportTimeoutError,
    UnsupportedOperationError,
)
from omconnect.transport.kit.checks import check_topic_spec
from omconnect.transport.messages import TopicSpec
from omconnect.transport.spi import Admin
from omconnect_pulsar.client import TopicNames
from omconnect_pulsar.errors import ErrorContext, translated_errors

__all__ = ["PulsarAdmin"]

_log = logging.getLogger(__name__)
_CONFLICT, _NOT_FOUND = 409, 404


class PulsarAdmin(Admin):
    """Creates, lists and deletes topics (see the module docstring).

    Args:
        client: The transport's ``pulsar.Client``.
        names: Maps topic names to Pulsar's.
        admin_url: The admin REST API's base URL, or ``None``.
        token: A bearer token for the REST API, or ``None``.
        where: For error messages.
        forget: Called with a topic whose partition count the transport must look up
            again (after it was created or deleted).

    """

    def __init__(
        self,
        client: Any,
        names: TopicNames,
        *,
        admin_url: str | None,
        token: str | None,
        where: ErrorContext,
        forget: Callable[[str], None],
    ) -> None:
        self._client = client
        self._names = names
        self._url = admin_url.rstrip("/") if admin_url else None
        self._token = token
        self._where = where
        self._forget = forget

    def create_topics(self, topics: Sequence[TopicSpec]) -> None:
        """Create topics; existing ones are left as they are."""
        for spec in topics:
            check_topic_spec(spec)
            if self._url is not None:
                self._rest_create(spec)
            else:
                self._create_by_producer(spec)
            self._forget(spec.name)

    def list_topics(self) -> dict[str, TopicSpec]:
        """Every topic of the namespace, by name (needs ``pulsar.admin.url``)."""
        self._need_rest("list topics")
        partitioned: dict[str, int] = {}
        for full in self._get(self._namespace_path() + "/partitioned") or []:
            name = self._names.parse(full)[0]
            partitioned[name] = int(self._get(self._topic_path(name) + "/partitions")
                                    .get("partitions", 1))
        topics = {name: TopicSpec(name, count) for name, count in partitioned.items()}
        for full in self._get(self._namespace_path()) or []:
            name, _ = self._names.parse(full)
            if name not in topics:
                topics[name] = TopicSpec(name, 1)
        return topics

    def delete_topics(self, names: Sequence[str]) -> None:
        """Delete topics and their messages; unknown names are ignored (needs
        ``pulsar.admin.url``).
        """
        self._need_rest("delete topics")
        for name in names:
            path = self._topic_path(name)
            if self._request("DELETE", path + "/partitions?force=true") == _NOT_FOUND:
                self._request("DELETE", path + "?force=true")
            self._forget(name)

    # -- without the REST API ------------------------------------------------------
    def _create_by_producer(self, spec: TopicSpec) -> None:
        full = self._names.full(spec.name)
        with translated_errors(f"creating topic {spec.name!r}", self._where, topic=spec.name):
            self._client.create_producer(full).close()
            actual = len(self._client.get_topic_partitions(full))
        if actual != spec.partitions:
            _log.warning("pulsar: topic %r has %d partition(s), not %d: without "
                         "pulsar.admin.url topics get the broker's default partitioning",
                         spec.name, actual, spec.partitions)

    def _need_rest(self, what: str) -> None:
        if self._url is None:
            raise UnsupportedOperationError(
                f"pulsar: cannot {what} without the admin REST API; set pulsar.admin.url "
                "(e.g. http://broker:8080)", key="pulsar.admin.url")

    # -- the REST API --------------------------------------------------------------
    def _namespace_path(self) -> str:
        prefix = self._names.full("")  # persistent://tenant/namespace/
        return "/admin/v2/persistent/" + prefix.split("://", 1)[1].rstrip("/")

    def _topic_path(self, topic: str) -> str:
        full = self._names.full(topic)
        domain, rest = full.split("://", 1)
        return f"/admin/v2/{domain}/" + "/".join(
            urllib.parse.quote(part, safe="") for part in rest.split("/"))

    def _rest_create(self, spec: TopicSpec) -> None:
        path = self._topic_path(spec.name)
        if spec.partitions > 1:
            self._request("PUT", path + "/partitions", json.dumps(spec.partitions).encode())
        else:
            self._request("PUT", path)

    def _get(self, path: str) -> Any:
        body = self._request("GET", path, want_body=True)
        return json.loads(body) if isinstance(body, bytes) and body else None

    def _request(self, method: str, path: str, data: bytes | None = None, *,
                 want_body: bool = False) -> Any:
        """Call the admin API; returns the body (``want_body``) or the status code.
        409 (exists) and 404 (not found) are returned, not raised.
        """
        assert self._url is not None
        request = urllib.request.Request(self._url + path, data=data, method=method)
        request.add_header("Content-Type", "application/json")
        if self._token:
            request.add_header("Authorization", f"Bearer {self._token}")
        action = f"admin {method} {path}"
        try:
            with urllib.request.urlopen(request, timeout=self._where.timeout_s) as reply:
                return reply.read() if want_body else reply.status
        except urllib.error.HTTPError as exc:
            if exc.code in (_CONFLICT, _NOT_FOUND) and not want_body:
                return exc.code
            detail = exc.read().decode("utf-8", "replace")[:300]
            if exc.code in (401, 403):
                raise TransportError(f"pulsar: {action}: the admin API refused access "
                                     f"({exc.code}): {detail}; check pulsar.auth.token"
                                     ) from exc
            if exc.code >= 500:
                raise RetriableTransportError(f"pulsar: {action}: {exc.code} {detail}"
                                              ) from exc
            raise TransportError(f"pulsar: {action}: {exc.code} {detail}") from exc
        except TimeoutError as exc:
            raise TransportTimeoutError(f"pulsar: {action}: no answer from {self._url} "
                                        f"within {self._where.timeout_s:g} s") from exc
        except (urllib.error.URLError, OSError) as exc:
            raise RetriableTransportError(f"pulsar: {action}: cannot reach the admin API "
                                          f"at {self._url}: {exc}; check pulsar.admin.url"
                                          ) from exc
