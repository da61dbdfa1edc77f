"""Kafka Connect's JSON form of a schema, as written in the ``"schema"`` part of a
JsonConverter envelope.

The form, key order included, is what Kafka Connect's ``JsonConverter.asJsonSchema`` writes::

    {"type": "struct",
     "fields": [{"type": "int32", "optional": false, "field": "id"}, ...],
     "optional": false, "name": "com.example.Order", "version": 1, "doc": "...",
     "parameters": {"k": "v"}, "default": ...}

Type names are ``int8 int16 int32 int64 float double boolean string bytes array map
struct``; an array has ``items``, a map ``keys`` and ``values``, a struct ``fields`` (each a
schema plus ``"field": name``). ``optional`` is always written; a missing ``optional`` reads
as required. Default values are written in the value encoding of their own schema.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from omconnect.data.builder import SchemaBuilder
from omconnect.data.schema import Schema, Type
from omconnect.errors import DataError

__all__ = ["TYPE_NAMES", "schema_from_json", "schema_to_json"]

TYPE_NAMES: dict[Type, str] = {
    Type.INT8: "int8",
    Type.INT16: "int16",
    Type.INT32: "int32",
    Type.INT64: "int64",
    Type.FLOAT32: "float",
    Type.FLOAT64: "double",
    Type.BOOLEAN: "boolean",
    Type.STRING: "string",
    Type.BYTES: "bytes",
    Type.ARRAY: "array",
    Type.MAP: "map",
    Type.STRUCT: "struct",
}
_TYPES_BY_NAME = {name: type_ for type_, name in TYPE_NAMES.items()}

EncodeDefault = Callable[[Schema, Any], Any]
"""Encodes a schema's default value as JSON (the converter's value encoding)."""

DecodeDefault = Callable[[Schema, Any], Any]
"""Decodes a JSON default value for a schema (the converter's value decoding)."""


def schema_to_json(schema: Schema, encode_default: EncodeDefault) -> dict[str, Any]:
    """``schema`` in Kafka Connect's JSON form, as a dict in Kafka Connect's key order.

    Args:
        schema: The schema.
        encode_default: Encodes the default value of a schema that has one.

    """
    out: dict[str, Any] = {"type": TYPE_NAMES[schema.type]}
    if schema.type is Type.ARRAY:
        assert schema.value_schema is not None
        out["items"] = schema_to_json(schema.value_schema, encode_default)
    elif schema.type is Type.MAP:
        assert schema.key_schema is not None and schema.value_schema is not None
        out["keys"] = schema_to_json(schema.key_schema, encode_default)
        out["values"] = schema_to_json(schema.value_schema, encode_default)
    elif schema.type is Type.STRUCT:
        fields = []
        for field in schema.fields:
            field_json = schema_to_json(field.schema, encode_default)
            field_json["field"] = field.name
            fields.append(field_json)
        out["fields"] = fields
    out["optional"] = schema.optional
    if schema.name is not None:
        out["name"] = schema.name
    if schema.version is not None:
        out["version"] = schema.version
    if schema.doc is not None:
        out["doc"] = schema.doc
    parameters = schema.parameters
    if parameters:
        out["parameters"] = parameters
    if schema.default is not None:
        out["default"] = encode_default(schema, schema.default)
    return out


def schema_from_json(
    obj: Any, decode_default: DecodeDefault, *, path: str = "schema"
) -> Schema | None:
    """The schema described by Kafka Connect's JSON form ``obj`` (``None`` for JSON null).

    Args:
        obj: The parsed ``"schema"`` value of an envelope.
        decode_default: Decodes a ``"default"`` value for the schema being built.
        path: Where ``obj`` sits, for error messages.

    Raises:
        DataError: ``obj`` is not a valid schema; the message names where and why.

    """
    if obj is None:
        return None
    if not isinstance(obj, dict):
        raise DataError(f"{path} must be a JSON object, got {_kind(obj)}")
    type_name = obj.get("type")
    if not isinstance(type_name, str):
        raise DataError(f"{path} must contain a 'type' field (a string)")
    type_ = _TYPES_BY_NAME.get(type_name)
    if type_ is None:
        valid = ", ".join(TYPE_NAMES.values())
        raise DataError(f"unknown schema type {type_name!r} at {path}; expected one of: {valid}")
    builder = _builder(type_, obj, decode_default, path)
    if obj.get("optional") is True:
        builder.optional()
    name = obj.get("name")
    if isinstance(name, str):
        builder.name(name)
    version = obj.get("version")
    if isinstance(version, int) and not isinstance(version, bool):
        builder.version(version)
    doc = obj.get("doc")
    if isinstance(doc, str):
        builder.doc(doc)
    parameters = obj.get("parameters")
    if isinstance(parameters, dict):
        for key, value in parameters.items():
            if not isinstance(value, str):
                raise DataError(
                    f"schema parameters must have string values; {path}.parameters.{key} "
                    f"is {_kind(value)}"
                )
        builder.parameters(parameters)
    if obj.get("default") is not None:
        without_default = builder.build()
        builder.default_value(decode_default(without_default, obj["default"]))
    return builder.build()


def _builder(
    type_: Type, obj: dict[str, Any], decode_default: DecodeDefault, path: str
) -> SchemaBuilder:
    if type_ is Type.ARRAY:
        items = schema_from_json(obj.get("items"), decode_default, path=f"{path}.items")
        if items is None:
            raise DataError(f"array schema at {path} does not specify its element type (items)")
        return SchemaBuilder.array(items)
    if type_ is Type.MAP:
        if "keys" not in obj or "values" not in obj:
            missing = "keys" if "keys" not in obj else "values"
            raise DataError(f"map schema at {path} does not specify its {missing} type")
        keys = schema_from_json(obj["keys"], decode_default, path=f"{path}.keys")
        values = schema_from_json(obj["values"], decode_default, path=f"{path}.values")
        if keys is None or values is None:
            raise DataError(f"map schema at {path} has a null keys or values schema")
        return SchemaBuilder.map(keys, values)
    if type_ is Type.STRUCT:
        fields = obj.get("fields")
        if not isinstance(fields, list):
            raise DataError(f"struct schema at {path} needs a 'fields' array")
        builder = SchemaBuilder.struct()
        for index, field in enumerate(fields):
            where = f"{path}.fields[{index}]"
            name = field.get("field") if isinstance(field, dict) else None
            if not isinstance(name, str):
                raise DataError(f"struct field at {where} has no 'field' name (a string)")
            field_schema = schema_from_json(field, decode_default, path=where)
            assert field_schema is not None
            builder.field(name, field_schema)
        return builder
    return SchemaBuilder(type_)


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__
