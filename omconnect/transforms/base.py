"""The transform SPI: single-message transformations and the predicates that guard them.

A :class:`Transformation` turns one record into another record, or into ``None`` to drop
it (Kafka Connect's Single Message Transforms). A :class:`Predicate` says whether a
transformation applies to a record. The runtime never calls these one by one: it builds a
:class:`~omconnect.transforms.chain.TransformChain` from the connector's ``transforms=`` and
``predicates=`` settings and calls :meth:`~omconnect.transforms.chain.TransformChain.apply_batch`.

Contract, for authors of third-party transforms and predicates:

1. The runtime creates one instance per task, with no arguments, then calls
   :meth:`~Transformation.configure` once with the transform's own options (the
   ``transforms.<alias>.`` prefix removed), then :meth:`~Transformation.apply` for each
   record, then :meth:`~Transformation.close` once. All calls come from the task's thread;
   an instance need not be thread-safe.
2. Options are declared in the class attribute ``config_def``; the chain validates them
   before :meth:`~Transformation.configure` is called, so a bad option is a
   :class:`~omconnect.errors.ConfigError` naming ``transforms.<alias>.<option>``.
   :meth:`~Transformation.configure` raises ``ConfigError(..., key="<option>")`` for any
   check the ConfigDef cannot express; the chain adds the prefix.
3. :meth:`~Transformation.apply` never mutates its input (records, structs, dicts and
   headers may be shared with the caller); it returns a new record derived with
   ``record.evolve(...)`` (or the faster ``with_value``/``with_key``/``with_topic``/
   ``with_headers`` of :mod:`omconnect.transforms.support`), the same record when nothing
   changes, or ``None`` to drop it.
   A record that cannot be transformed raises :class:`~omconnect.errors.DataError`; the
   runtime routes it according to ``errors.tolerance``.
4. A transform that derives a schema from the input schema caches it per input schema
   (see :class:`~omconnect.transforms.support.SchemaCache`): the hot path must not build
   schemas per record.

Third-party transforms register in the ``omconnect.transforms`` entry-point group
(predicates in ``omconnect.predicates``), or are named by Python path
(``package.module:Class``) in ``transforms.<alias>.type``.
"""

from __future__ import annotations

import abc
from collections.abc import Mapping
from typing import Any, ClassVar, TypeVar

from omconnect.config.definition import ConfigDef
from omconnect.records import ConnectRecord

__all__ = ["Predicate", "Transformation"]

R = TypeVar("R", bound=ConnectRecord)


class Transformation(abc.ABC):
    """A single-message transformation: one record in, one record (or ``None``) out.

    Subclasses declare their options in ``config_def``, read them in :meth:`configure`
    and implement :meth:`apply`. See the module docstring for the full contract.
    """

    config_def: ClassVar[ConfigDef] = ConfigDef()
    """The options this transform takes (without the ``transforms.<alias>.`` prefix)."""

    def configure(self, config: Mapping[str, Any]) -> None:
        """Configure from the transform's options, declared keys already validated.

        Called once, before the first :meth:`apply`. The default does nothing.

        Args:
            config: The options, prefix removed, as written by the user (strings from a
                properties file, or typed values from YAML/JSON); parse them with
                ``self.config_def.parse(config)``.

        Raises:
            ConfigError: An option is invalid; set ``key`` to the option's name.

        """

    @abc.abstractmethod
    def apply(self, record: R) -> R | None:
        """The transformed record, the same record, or ``None`` to drop it.

        Raises:
            DataError: The record cannot be transformed (e.g. a field is missing).

        """

    def apply_columns(self, batch: Any, serialize_header: Any) -> Any:
        """The columnar path's form of :meth:`apply`, on a whole Arrow batch.

        ``batch`` has the columns ``topic``, ``key``, ``value``, ``headers`` (wire form),
        ``timestamp`` (and, on the sink side, ``partition`` and ``offset``); keys and
        values are bytes or strings as the converters make or read them.
        ``serialize_header(topic, key, schema, value)`` gives a header value's wire bytes.

        Returns:
            ``(batch, keep)``: the transformed batch, row for row (same rows, same order),
            and a boolean array saying which rows are kept (``None``: all); or ``None``
            when this transform cannot work on these columns (the runtime then takes the
            per-record path for the batch, calling :meth:`apply`). The default is
            ``None``. The result must equal what :meth:`apply` gives record by record.

        """
        return None

    def close(self) -> None:
        """Release what :meth:`configure` acquired; called once. The default does nothing."""


class Predicate(abc.ABC):
    """A condition on a record that decides whether a transformation applies to it.

    Same life cycle as :class:`Transformation`: created with no arguments, configured once
    with its ``predicates.<alias>.`` options, tested from the task's thread, closed once.
    One predicate instance may guard several transformations.
    """

    config_def: ClassVar[ConfigDef] = ConfigDef()
    """The options this predicate takes (without the ``predicates.<alias>.`` prefix)."""

    def configure(self, config: Mapping[str, Any]) -> None:
        """Configure from the predicate's options, declared keys already validated.

        Raises:
            ConfigError: An option is invalid; set ``key`` to the option's name.

        """

    @abc.abstractmethod
    def test(self, record: ConnectRecord) -> bool:
        """Whether ``record`` satisfies the condition."""

    def test_columns(self, batch: Any) -> Any:
        """:meth:`test` for every row of an Arrow batch (columns as for
        :meth:`Transformation.apply_columns`): a boolean array, or ``None`` when this
        predicate cannot work on columns (the default).
        """
        return None

    def close(self) -> None:
        """Release what :meth:`configure` acquired; called once. The default does nothing."""
