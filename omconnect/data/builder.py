"""SchemaBuilder: a fluent way to build schemas."""

from __future__ import annotations

from typing import Any

from omconnect.data import logical
from omconnect.data.schema import Schema, Type, struct_fields, validate_value
from omconnect.errors import DataError

__all__ = ["SchemaBuilder"]


class SchemaBuilder:
    """Builds a :class:`Schema` step by step; :meth:`build` returns the immutable schema.

    Example::

        schema = (SchemaBuilder.struct().name("com.example.Order")
                  .field("id", SchemaBuilder.int64().build())
                  .field("note", SchemaBuilder.string().optional().build())
                  .build())

    Each setter may be called once; calling it again with another value is a DataError.
    """

    def __init__(self, type_: Type) -> None:
        self._type = type_
        self._optional = False
        self._default: Any = None
        self._name: str | None = None
        self._version: int | None = None
        self._doc: str | None = None
        self._parameters: dict[str, str] = {}
        self._fields: list[tuple[str, Schema]] = []
        self._key_schema: Schema | None = None
        self._value_schema: Schema | None = None

    # -- constructors -------------------------------------------------------------
    @classmethod
    def type(cls, type_: Type | str) -> SchemaBuilder:
        """A builder for any type, given as a :class:`Type` or its name."""
        return cls(type_ if isinstance(type_, Type) else Type.parse(type_))

    @classmethod
    def int8(cls) -> SchemaBuilder:
        """A builder for an INT8 schema."""
        return cls(Type.INT8)

    @classmethod
    def int16(cls) -> SchemaBuilder:
        """A builder for an INT16 schema."""
        return cls(Type.INT16)

    @classmethod
    def int32(cls) -> SchemaBuilder:
        """A builder for an INT32 schema."""
        return cls(Type.INT32)

    @classmethod
    def int64(cls) -> SchemaBuilder:
        """A builder for an INT64 schema."""
        return cls(Type.INT64)

    @classmethod
    def float32(cls) -> SchemaBuilder:
        """A builder for a FLOAT32 schema."""
        return cls(Type.FLOAT32)

    @classmethod
    def float64(cls) -> SchemaBuilder:
        """A builder for a FLOAT64 schema."""
        return cls(Type.FLOAT64)

    @classmethod
    def boolean(cls) -> SchemaBuilder:
        """A builder for a BOOLEAN schema."""
        return cls(Type.BOOLEAN)

    @classmethod
    def string(cls) -> SchemaBuilder:
        """A builder for a STRING schema."""
        return cls(Type.STRING)

    @classmethod
    def bytes(cls) -> SchemaBuilder:
        """A builder for a BYTES schema."""
        return cls(Type.BYTES)

    @classmethod
    def struct(cls) -> SchemaBuilder:
        """A builder for a STRUCT schema; add fields with :meth:`field`."""
        return cls(Type.STRUCT)

    @classmethod
    def array(cls, value_schema: Schema) -> SchemaBuilder:
        """A builder for an ARRAY of ``value_schema`` elements."""
        builder = cls(Type.ARRAY)
        builder._value_schema = value_schema
        return builder

    @classmethod
    def map(cls, key_schema: Schema, value_schema: Schema) -> SchemaBuilder:
        """A builder for a MAP from ``key_schema`` keys to ``value_schema`` values."""
        builder = cls(Type.MAP)
        builder._key_schema = key_schema
        builder._value_schema = value_schema
        return builder

    @classmethod
    def decimal(cls, scale: int) -> SchemaBuilder:
        """A builder for a Decimal logical schema with ``scale`` digits after the point."""
        return cls(Type.BYTES).name(logical.DECIMAL).version(1).parameter(
            logical.SCALE, str(scale))

    @classmethod
    def date(cls) -> SchemaBuilder:
        """A builder for a Date logical schema."""
        return cls(Type.INT32).name(logical.DATE).version(1)

    @classmethod
    def time(cls) -> SchemaBuilder:
        """A builder for a Time logical schema."""
        return cls(Type.INT32).name(logical.TIME).version(1)

    @classmethod
    def timestamp(cls) -> SchemaBuilder:
        """A builder for a Timestamp logical schema."""
        return cls(Type.INT64).name(logical.TIMESTAMP).version(1)

    # -- setters ------------------------------------------------------------------
    def _set_once(self, attr: str, value: Any, what: str) -> SchemaBuilder:
        current = getattr(self, attr)
        if current is not None and current != value:
            raise DataError(f"schema {what} is already set to {current!r}; cannot set {value!r}")
        setattr(self, attr, value)
        return self

    def optional(self) -> SchemaBuilder:
        """Make ``None`` a valid value."""
        self._optional = True
        return self

    def required(self) -> SchemaBuilder:
        """Make ``None`` invalid (the default)."""
        self._optional = False
        return self

    def default_value(self, value: Any) -> SchemaBuilder:
        """Set the default value; it is validated against the schema at :meth:`build`."""
        return self._set_once("_default", value, "default")

    def name(self, name: str) -> SchemaBuilder:
        """Set the fully qualified schema name."""
        return self._set_once("_name", name, "name")

    def version(self, version: int) -> SchemaBuilder:
        """Set the schema version."""
        return self._set_once("_version", version, "version")

    def doc(self, doc: str) -> SchemaBuilder:
        """Set the documentation."""
        return self._set_once("_doc", doc, "doc")

    def parameter(self, name: str, value: str) -> SchemaBuilder:
        """Add one string parameter."""
        self._parameters[name] = value
        return self

    def parameters(self, parameters: dict[str, str]) -> SchemaBuilder:
        """Add several string parameters."""
        self._parameters.update(parameters)
        return self

    def field(self, name: str, schema: Schema | SchemaBuilder) -> SchemaBuilder:
        """Append a field to a STRUCT schema.

        Raises:
            DataError: Not a STRUCT builder, or a field of that name exists.

        """
        if self._type is not Type.STRUCT:
            raise DataError(f"cannot add field {name!r} to a {self._type.value} schema")
        if any(existing == name for existing, _ in self._fields):
            raise DataError(f"duplicate field {name!r}")
        if isinstance(schema, SchemaBuilder):
            schema = schema.build()
        self._fields.append((name, schema))
        return self

    def build(self) -> Schema:
        """The immutable :class:`Schema`.

        Raises:
            DataError: The default value does not match the schema.

        """
        schema = Schema(
            type=self._type,
            optional=self._optional,
            name=self._name,
            version=self._version,
            doc=self._doc,
            parameters=self._parameters,
            fields=struct_fields(self._fields),
            key_schema=self._key_schema,
            value_schema=self._value_schema,
        )
        if self._default is not None:
            validate_value(schema, self._default, path="default")
            schema = Schema(
                type=schema.type, optional=schema.optional, default=self._default,
                name=schema.name, version=schema.version, doc=schema.doc,
                parameters=schema.parameters, fields=schema.fields,
                key_schema=schema.key_schema, value_schema=schema.value_schema,
            )
        return schema
