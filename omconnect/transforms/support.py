"""Shared machinery for transforms: key/value variants, schema caches, fast record updates.

Third-party transforms may use these too; they are what the built-ins are made of.

* :class:`KeyOrValueTransformation`: the base of transforms with Kafka Connect's ``$Key``
  and ``$Value`` variants; a variant only sets :attr:`~KeyOrValueTransformation.operates_on`.
* :class:`SchemaCache`: derived schemas (or whole derivation plans) per input schema, with
  an identity fast path and an LRU by schema value behind it.
* :func:`struct_schema_like`: a STRUCT schema with new fields and the basics (name,
  version, doc, parameters, optionality) of another, as Kafka Connect's
  ``SchemaUtil.copySchemaBasics``.
* :func:`require_struct`, :func:`require_mapping`: the operating value's shape, or a
  :class:`~omconnect.errors.DataError` saying what was expected.
"""

from __future__ import annotations

import abc
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar, Generic, Literal, TypeVar

import attrs

from omconnect.data.headers import Headers
from omconnect.data.schema import Field, Schema, Type, struct_fields
from omconnect.data.struct import Struct
from omconnect.errors import DataError
from omconnect.records import ConnectRecord
from omconnect.transforms.base import Transformation

__all__ = [
    "KEY",
    "VALUE",
    "KeyOrValueTransformation",
    "SchemaCache",
    "require_mapping",
    "require_struct",
    "struct_schema_like",
    "with_headers",
    "with_key",
    "with_topic",
    "with_value",
]

KEY: Literal["key"] = "key"
VALUE: Literal["value"] = "value"

R = TypeVar("R", bound=ConnectRecord)
T = TypeVar("T")


class SchemaCache(Generic[T]):
    """What a transform derives from an input schema, cached per input schema.

    Records of one stream nearly always carry the very same schema object, so the first
    lookup is by identity (no hashing of a deep schema); schemas that are equal but not
    identical (a converter that builds one per message) fall back to an LRU keyed by the
    schema's value, as Kafka Connect's transforms keep theirs (16 entries). Not
    thread-safe: one cache per transform instance, used by one task thread.

    Args:
        derive: Builds the cached item (a schema, or a plan holding one) from a schema.
        size: How many distinct schemas to keep.

    """

    __slots__ = ("_by_identity", "_by_value", "_derive", "_size")

    def __init__(self, derive: Callable[[Schema], T], size: int = 16) -> None:
        self._derive = derive
        self._size = size
        # id -> (schema, item); the schema is kept so its id cannot be reused meanwhile.
        self._by_identity: dict[int, tuple[Schema, T]] = {}
        self._by_value: OrderedDict[Schema, T] = OrderedDict()

    def get(self, schema: Schema) -> T:
        """The item derived from ``schema``, derived now if it is not cached.

        Raises:
            Whatever ``derive`` raises (nothing is cached then).

        """
        hit = self._by_identity.get(id(schema))
        if hit is not None and hit[0] is schema:
            return hit[1]
        return self._get_by_value(schema)

    def _get_by_value(self, schema: Schema) -> T:
        by_value = self._by_value
        if schema in by_value:
            item = by_value[schema]
            by_value.move_to_end(schema)
        else:
            item = self._derive(schema)
            by_value[schema] = item
            if len(by_value) > self._size:
                by_value.popitem(last=False)
        if len(self._by_identity) >= 4 * self._size:
            self._by_identity.clear()
        self._by_identity[id(schema)] = (schema, item)
        return item

    def __len__(self) -> int:
        return len(self._by_value)


def struct_schema_like(
    source: Schema, fields: Sequence[tuple[str, Schema]], *, optional: bool | None = None
) -> Schema:
    """A STRUCT schema with ``fields`` and the name, version, doc, parameters and
    optionality of ``source`` (its default is dropped: it no longer fits).

    Raises:
        DataError: Two fields have the same name (the message names it).

    """
    seen: set[str] = set()
    for name, _ in fields:
        if name in seen:
            raise DataError(
                f"the derived schema would have two fields named {name!r}; "
                "rename one of them (e.g. with a ReplaceField transform first)"
            )
        seen.add(name)
    return Schema(
        type=Type.STRUCT,
        optional=source.optional if optional is None else optional,
        name=source.name,
        version=source.version,
        doc=source.doc,
        parameters=source.parameters,
        fields=struct_fields(fields),
    )


def field_of(schema: Schema, name: str, *, what: str) -> Field:
    """The field ``name`` of a STRUCT ``schema``, or a DataError naming ``what`` needs it."""
    if not schema.has_field(name):
        known = ", ".join(f.name for f in schema.fields) or "none"
        raise DataError(
            f"{what}: field {name!r} is not in schema {schema.name or 'struct'} "
            f"(fields: {known})"
        )
    return schema.field(name)


def require_struct(value: Any, *, what: str) -> Struct:
    """``value`` as a Struct, or a DataError saying ``what`` needs one."""
    if isinstance(value, Struct):
        return value
    found = "null (a tombstone?)" if value is None else type(value).__name__
    raise DataError(f"{what} needs a Struct when the schema is set, found {found}")


def require_mapping(value: Any, *, what: str) -> Mapping[str, Any]:
    """``value`` as a Mapping, or a DataError saying ``what`` needs one."""
    if isinstance(value, Mapping):
        return value
    found = "null (a tombstone?)" if value is None else type(value).__name__
    raise DataError(
        f"{what} needs a map (dict) for schemaless data, found {found}; "
        "set a schema or use a converter that yields maps"
    )


# -- fast record updates ----------------------------------------------------------------
# attrs.evolve introspects the class on every call (about 3 µs a record); transforms
# derive a record per transform per record, so each record class gets a generated updater
# that passes every attrs field through its constructor explicitly (about half the cost).
# Generated from attrs.fields, it follows any field added to the record classes.

_UPDATERS: dict[tuple[type, tuple[str, ...]], Callable[..., Any]] = {}


def _updater(cls: type, changed: tuple[str, ...]) -> Callable[..., Any]:
    """The (generated, cached) function ``update(record, *new values of changed)``."""
    key = (cls, changed)
    updater = _UPDATERS.get(key)
    if updater is None:
        args = []
        for attribute in attrs.fields(cls):
            if not attribute.init:
                continue
            name = attribute.alias or attribute.name
            source = name if attribute.name in changed else f"r.{attribute.name}"
            args.append(f"{name}={source}")
        params = ", ".join(changed)
        code = f"def update(r, {params}):\n    return cls({', '.join(args)})\n"
        namespace: dict[str, Any] = {"cls": cls}
        exec(compile(code, f"<record updater {cls.__name__}>", "exec"), namespace)
        updater = namespace["update"]
        _UPDATERS[key] = updater
    return updater


def with_topic(record: R, topic: str) -> R:
    """A copy of ``record`` with a new topic (same record type)."""
    cls = type(record)
    updater = _UPDATERS.get((cls, ("topic",)))
    if updater is None:
        updater = _updater(cls, ("topic",))
    result: R = updater(record, topic)
    return result


def with_headers(record: R, headers: Headers) -> R:
    """A copy of ``record`` with new headers (same record type)."""
    cls = type(record)
    updater = _UPDATERS.get((cls, ("headers",)))
    if updater is None:
        updater = _updater(cls, ("headers",))
    result: R = updater(record, headers)
    return result


def with_value(record: R, schema: Schema | None, value: Any) -> R:
    """A copy of ``record`` with a new value and value schema (same record type)."""
    cls = type(record)
    updater = _UPDATERS.get((cls, ("value_schema", "value")))
    if updater is None:
        updater = _updater(cls, ("value_schema", "value"))
    result: R = updater(record, schema, value)
    return result


def with_key(record: R, schema: Schema | None, key: Any) -> R:
    """A copy of ``record`` with a new key and key schema (same record type)."""
    cls = type(record)
    updater = _UPDATERS.get((cls, ("key_schema", "key")))
    if updater is None:
        updater = _updater(cls, ("key_schema", "key"))
    result: R = updater(record, schema, key)
    return result


class KeyOrValueTransformation(Transformation):
    """A transformation with Kafka Connect's ``$Key`` and ``$Value`` variants.

    The variants are subclasses that set :attr:`operates_on` to :data:`KEY` or
    :data:`VALUE`; the transform reads its input through :meth:`operating_schema` and
    :meth:`operating_value` and builds its output with :meth:`new_record`.
    """

    operates_on: ClassVar[Literal["key", "value"]]
    """Which part of the record the variant transforms."""

    _changes: ClassVar[tuple[str, str]] = ("value_schema", "value")

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "operates_on" in cls.__dict__:
            cls._changes = ("key_schema", "key") if cls.operates_on == KEY else (
                "value_schema", "value")

    def operating_schema(self, record: ConnectRecord) -> Schema | None:
        """The schema of the part this variant transforms."""
        return record.key_schema if self.operates_on == KEY else record.value_schema

    def operating_value(self, record: ConnectRecord) -> Any:
        """The part this variant transforms (the key or the value)."""
        return record.key if self.operates_on == KEY else record.value

    def new_record(self, record: R, schema: Schema | None, value: Any) -> R:
        """``record`` with the transformed part replaced by ``value`` of ``schema``."""
        updater = _UPDATERS.get((type(record), self._changes))
        if updater is None:
            updater = _updater(type(record), self._changes)
        result: R = updater(record, schema, value)
        return result

    @abc.abstractmethod
    def apply(self, record: R) -> R | None:
        """The record with its key or value transformed (see :class:`Transformation`)."""
