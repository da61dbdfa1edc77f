"""Connect schemas and values to Avro and back, following Confluent's ``AvroData``
conventions so the Avro schemas look like the ones Kafka Connect users know.

Schemas (Connect -> Avro):

==========================  ===========================================================
Connect                     Avro
==========================  ===========================================================
INT8, INT16                 ``{"type": "int", "connect.type": "int8"}`` (``int16``)
INT32, INT64                ``int``, ``long``
FLOAT32, FLOAT64            ``float``, ``double``
BOOLEAN, STRING, BYTES      ``boolean``, ``string``, ``bytes``
ARRAY                       ``array``
MAP, required STRING keys   ``map``
MAP, other keys             ``array`` of records ``io.confluent.connect.avro.MapEntry``
                            with fields ``key`` and ``value``
STRUCT                      ``record`` named after the schema (``connect.name`` keeps the
                            exact name), or ``io.confluent.connect.avro.ConnectDefault``
optional                    union ``["null", T]`` (``[T, "null"]`` when the default is
                            not null, as Avro wants the default's branch first)
Decimal                     ``bytes`` with ``logicalType: decimal``, ``scale`` and
                            ``precision`` (parameter ``connect.decimal.precision``, 64)
Date, Time, Timestamp       ``int``/``date``, ``int``/``time-millis``,
                            ``long``/``timestamp-millis``
==========================  ===========================================================

With connect metadata on (the default), each Avro type also carries ``connect.name``,
``connect.version``, ``connect.doc`` and ``connect.parameters`` of its Connect schema, so a
Connect schema survives the trip to Avro and back exactly. A field's default is the Avro
field ``default``.

Reading an Avro schema written elsewhere: records become structs, ``enum`` a STRING with
Confluent's enum parameters, ``fixed`` BYTES with parameter ``connect.fixed.size``, a union
of ``null`` and one type an optional schema. Other unions, and recursive records, have no
Connect form and are refused. Logical types other than the four above read as their
underlying type (``timestamp-micros`` as INT64, ``uuid`` as STRING).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Mapping
from typing import Any

import attrs

from omconnect.converters.encoders import Encode, identity, struct_encoder, where, with_nulls
from omconnect.data import logical
from omconnect.data.builder import SchemaBuilder
from omconnect.data.schema import Schema, Type, validate_value
from omconnect.data.struct import Struct
from omconnect.errors import DataError

__all__ = [
    "compile_from_avro",
    "compile_to_avro",
    "from_avro_schema",
    "strip_unsupported_logical_types",
    "to_avro_schema",
]

NAMESPACE = "io.confluent.connect.avro"
DEFAULT_RECORD = "ConnectDefault"
MAP_ENTRY = "MapEntry"
CONNECT_NAME = "connect.name"
CONNECT_DOC = "connect.doc"
CONNECT_VERSION = "connect.version"
CONNECT_PARAMETERS = "connect.parameters"
CONNECT_TYPE = "connect.type"
DECIMAL_PRECISION = "connect.decimal.precision"
FIXED_SIZE = "connect.fixed.size"
ENUM = "io.confluent.connect.avro.Enum"
DEFAULT_PRECISION = 64

_PRIMITIVE_AVRO = {
    Type.INT8: "int", Type.INT16: "int", Type.INT32: "int", Type.INT64: "long",
    Type.FLOAT32: "float", Type.FLOAT64: "double", Type.BOOLEAN: "boolean",
    Type.STRING: "string", Type.BYTES: "bytes",
}
_AVRO_PRIMITIVE = {
    "int": Type.INT32, "long": Type.INT64, "float": Type.FLOAT32, "double": Type.FLOAT64,
    "boolean": Type.BOOLEAN, "string": Type.STRING, "bytes": Type.BYTES,
}
_LOGICAL_AVRO = {
    logical.DATE: ("int", "date"),
    logical.TIME: ("int", "time-millis"),
    logical.TIMESTAMP: ("long", "timestamp-millis"),
}
_AVRO_LOGICAL = {avro_logical: name for name, (_, avro_logical) in _LOGICAL_AVRO.items()}
_SUPPORTED_LOGICAL = frozenset({"decimal", *_AVRO_LOGICAL})
_AVRO_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

Decode = Callable[[Any], Any]


# -- schemas: Connect -> Avro ------------------------------------------------------------


def to_avro_schema(schema: Schema, *, connect_meta: bool = True) -> Any:
    """The Avro schema (JSON-able: dicts, lists, strings) for ``schema``.

    Args:
        schema: A Connect schema.
        connect_meta: Add the ``connect.*`` properties that let the Connect schema be
            rebuilt exactly from the Avro one.

    Raises:
        DataError: A field name is not a valid Avro name.

    """
    return _AvroWriter(connect_meta).schema(schema, path="")


def _shape(schema: Schema) -> Schema:
    """``schema`` without optionality and default: what an Avro named type describes."""
    if not schema.optional and schema.default is None:
        return schema
    return attrs.evolve(schema, optional=False, default=None)


class _AvroWriter:
    def __init__(self, connect_meta: bool) -> None:
        self._meta = connect_meta
        self._defined: dict[str, Schema] = {}  # Avro full name -> the shape it defines
        self._unnamed: dict[Schema, str] = {}  # shape of an unnamed struct -> its name
        self._used: dict[str, int] = {}

    def schema(self, schema: Schema, path: str) -> Any:
        base = self._base(schema, path)
        if not schema.optional:
            return base
        if schema.default is not None:
            return [base, "null"]
        return ["null", base]

    def _unique(self, name: str) -> str:
        count = self._used.get(name, 0) + 1
        self._used[name] = count
        return name if count == 1 else f"{name}{count}"

    def _name(self, base: str, shape: Schema) -> tuple[str, bool]:
        """The Avro name for a named type of ``shape``, and whether it is defined already
        (then the schema refers to it by name). A name defined for another shape gets a
        number appended: Avro forbids redefining a name.
        """
        candidate, number = base, 1
        while candidate in self._defined:
            if self._defined[candidate] == shape:
                return candidate, True
            number += 1
            candidate = f"{base}{number}"
        self._defined[candidate] = shape
        return candidate, False

    def _with_meta(self, avro: Any, schema: Schema, *, name: bool = True) -> Any:
        if not self._meta:
            return avro
        props: dict[str, Any] = {}
        if schema.doc is not None:
            props[CONNECT_DOC] = schema.doc
        if schema.version is not None:
            props[CONNECT_VERSION] = schema.version
        if schema.parameters:
            props[CONNECT_PARAMETERS] = schema.parameters
        if name and schema.name is not None:
            props[CONNECT_NAME] = schema.name
        if not props:
            return avro
        result = {"type": avro} if isinstance(avro, str) else avro
        result.update(props)
        return result

    def _base(self, schema: Schema, path: str) -> Any:
        name = schema.name
        params = schema.parameters
        if name == logical.DECIMAL:
            avro: Any = {
                "type": "bytes", "logicalType": "decimal",
                "precision": int(params.get(DECIMAL_PRECISION, DEFAULT_PRECISION)),
                "scale": logical.decimal_scale(schema),
            }
            return self._with_meta(avro, schema)
        if name in _LOGICAL_AVRO:
            base_type, avro_logical = _LOGICAL_AVRO[name]
            return self._with_meta({"type": base_type, "logicalType": avro_logical}, schema)
        type_ = schema.type
        if type_ is Type.STRING and ENUM in params:
            return self._enum(schema, params)
        if type_ is Type.BYTES and FIXED_SIZE in params:
            return self._fixed(schema, params)
        if type_ in _PRIMITIVE_AVRO:
            avro = _PRIMITIVE_AVRO[type_]
            if type_ in (Type.INT8, Type.INT16):
                avro = {"type": avro, CONNECT_TYPE: type_.value}
            return self._with_meta(avro, schema)
        if type_ is Type.ARRAY:
            assert schema.value_schema is not None
            items = self.schema(schema.value_schema, f"{path}[]")
            return self._with_meta({"type": "array", "items": items}, schema)
        if type_ is Type.MAP:
            return self._map(schema, path)
        return self._record(schema, path)

    def _map(self, schema: Schema, path: str) -> Any:
        assert schema.key_schema is not None and schema.value_schema is not None
        key_schema = schema.key_schema
        values = self.schema(schema.value_schema, f"{path}{{}}")
        if key_schema.type is Type.STRING and not key_schema.optional:
            return self._with_meta({"type": "map", "values": values}, schema)
        entry_name, _ = self._name(f"{NAMESPACE}.{self._unique(MAP_ENTRY)}", schema)
        entry = {
            "type": "record",
            "name": entry_name,
            "fields": [
                {"name": "key", "type": self.schema(key_schema, f"{path}{{key}}")},
                {"name": "value", "type": values},
            ],
        }
        return self._with_meta({"type": "array", "items": entry}, schema)

    def _record(self, schema: Schema, path: str) -> Any:
        shape = _shape(schema)
        if schema.name is None:
            if shape in self._unnamed:
                return self._unnamed[shape]
            full_name, _ = self._name(f"{NAMESPACE}.{self._unique(DEFAULT_RECORD)}", shape)
            self._unnamed[shape] = full_name
        else:
            full_name, defined = self._name(_avro_full_name(schema.name), shape)
            if defined:
                return full_name
        prefix = f"{path}." if path else ""
        fields = [self._field(field.name, field.schema, prefix + field.name)
                  for field in schema.fields]
        record: dict[str, Any] = {"type": "record", "name": full_name, "fields": fields}
        if schema.doc is not None:
            record["doc"] = schema.doc
        return self._with_meta(record, schema)

    def _field(self, name: str, schema: Schema, path: str) -> dict[str, Any]:
        if not _AVRO_NAME.fullmatch(name):
            raise DataError(
                f"field {path!r} cannot be written as Avro: a field name must be letters, "
                "digits and _, not starting with a digit; rename it (e.g. with the "
                "ReplaceField transform)"
            )
        field: dict[str, Any] = {"name": name, "type": self.schema(schema, path)}
        if schema.doc is not None:
            field["doc"] = schema.doc
        if schema.default is not None:
            datum = compile_to_avro(schema, path)(schema.default)
            field["default"] = _datum_to_json(datum)
        elif schema.optional:
            field["default"] = None
        return field

    def _enum(self, schema: Schema, params: dict[str, str]) -> Any:
        prefix = ENUM + "."
        symbols = [value for key, value in params.items() if key.startswith(prefix)]
        name, defined = self._name(_avro_full_name(params[ENUM]), _shape(schema))
        if defined:
            return name
        return self._with_meta({"type": "enum", "name": name, "symbols": symbols}, schema)

    def _fixed(self, schema: Schema, params: dict[str, str]) -> Any:
        base = _avro_full_name(schema.name) if schema.name else f"{NAMESPACE}.Fixed"
        name, defined = self._name(base, _shape(schema))
        if defined:
            return name
        return self._with_meta({"type": "fixed", "name": name, "size": int(params[FIXED_SIZE])},
                               schema)


def _avro_full_name(name: str) -> str:
    """``name`` made a valid Avro full name (invalid characters become ``_``)."""
    parts = [re.sub(r"[^A-Za-z0-9_]", "_", part) or "_" for part in name.split(".")]
    return ".".join(f"_{part}" if part[0].isdigit() else part for part in parts)


def _datum_to_json(datum: Any) -> Any:
    """An Avro datum in Avro's JSON encoding of defaults (bytes as ISO-8859-1 text)."""
    if isinstance(datum, (bytes, bytearray)):
        return bytes(datum).decode("latin-1")
    if isinstance(datum, dict):
        return {key: _datum_to_json(value) for key, value in datum.items()}
    if isinstance(datum, list):
        return [_datum_to_json(value) for value in datum]
    return datum


# -- schemas: Avro -> Connect -----------------------------------------------------------


def strip_unsupported_logical_types(avro: Any) -> Any:
    """A copy of ``avro`` without the logical types Connect has no form for
    (``timestamp-micros``, ``uuid``, ...), so a decoder returns their plain values.
    """
    def strip(node: Any) -> Any:
        if isinstance(node, list):
            return [strip(branch) for branch in node]
        if not isinstance(node, dict):
            return node
        node = dict(node)
        if node.get("logicalType") not in (None, *_SUPPORTED_LOGICAL):
            del node["logicalType"]
        for key in ("items", "values", "type"):
            if key in node and not isinstance(node[key], str):
                node[key] = strip(node[key])
        if "fields" in node:
            node["fields"] = [dict(field, type=strip(field["type"])) for field in node["fields"]]
        return node

    return strip(copy.deepcopy(avro))


def from_avro_schema(avro: Any) -> Schema:
    """The Connect schema of a parsed Avro schema (from :func:`fastavro.parse_schema`,
    whose named types carry full names).

    Raises:
        DataError: The Avro schema has no Connect form (a general union, a recursive
            record); the message names where.

    """
    return _ConnectReader().schema(avro, path="", optional=False)


class _ConnectReader:
    def __init__(self) -> None:
        self._named: dict[str, Schema | None] = {}  # None while a record is being built

    def schema(self, avro: Any, path: str, optional: bool) -> Schema:
        if isinstance(avro, list):
            return self._union(avro, path)
        if isinstance(avro, str):
            if avro in _AVRO_PRIMITIVE:
                return _optional(SchemaBuilder(_AVRO_PRIMITIVE[avro]), optional).build()
            if avro == "null":
                raise DataError(f"the Avro type null alone has no Connect form{where(path)}")
            named = self._named.get(avro)
            if named is None:
                raise DataError(f"recursive Avro record {avro!r}{where(path)} has no Connect "
                                "form")
            return named.with_optional(True) if optional else named
        builder = self._builder(avro, path)
        _optional(builder, optional)
        self._apply_meta(builder, avro)
        schema = builder.build()
        if avro.get("type") in ("record", "enum", "fixed"):
            self._named[avro["name"]] = _shape(schema)
        return schema

    def _union(self, branches: list[Any], path: str) -> Schema:
        others = [branch for branch in branches if branch != "null"]
        if len(others) == 1 and len(branches) == 2:
            return self.schema(others[0], path, optional=True)
        raise DataError(f"the Avro union {_short(branches)}{where(path)} has no Connect form; "
                        "only unions of null and one type are supported")

    def _builder(self, avro: dict[str, Any], path: str) -> SchemaBuilder:
        type_name = avro.get("type")
        logical_type = avro.get("logicalType")
        if logical_type == "decimal":
            scale = int(avro.get("scale", 0))
            builder = SchemaBuilder.decimal(scale)
            if CONNECT_PARAMETERS not in avro:
                builder.parameter(DECIMAL_PRECISION, str(avro.get("precision", 0)))
            return builder
        if logical_type in _AVRO_LOGICAL:
            name = _AVRO_LOGICAL[logical_type]
            return SchemaBuilder(Type.INT64 if name == logical.TIMESTAMP else Type.INT32
                                 ).name(name).version(1)
        if isinstance(type_name, (list, dict)):
            raise DataError(f"unexpected nested type definition{where(path)}")
        if type_name in _AVRO_PRIMITIVE:
            connect_type = avro.get(CONNECT_TYPE)
            if type_name == "int" and connect_type in ("int8", "int16"):
                return SchemaBuilder(Type.parse(connect_type))
            return SchemaBuilder(_AVRO_PRIMITIVE[type_name])
        if type_name == "array":
            return self._array(avro, path)
        if type_name == "map":
            values = self.schema(avro["values"], f"{path}{{}}", optional=False)
            return SchemaBuilder.map(SchemaBuilder.string().build(), values)
        if type_name == "record":
            return self._record(avro, path)
        if type_name == "enum":
            builder = SchemaBuilder.string().parameter(ENUM, avro["name"])
            for symbol in avro.get("symbols", []):
                builder.parameter(f"{ENUM}.{symbol}", symbol)
            return builder
        if type_name == "fixed":
            builder = SchemaBuilder.bytes().parameter(FIXED_SIZE, str(avro["size"]))
            return builder if CONNECT_NAME in avro else builder.name(avro["name"])
        raise DataError(f"unknown Avro type {type_name!r}{where(path)}")

    def _array(self, avro: dict[str, Any], path: str) -> SchemaBuilder:
        items = avro["items"]
        if isinstance(items, str) and items in self._named:
            entry = None
        else:
            entry = items if _is_map_entry(items) else None
        if entry is not None:
            fields = {field["name"]: field["type"] for field in entry["fields"]}
            self._named[entry["name"]] = None
            key = self.schema(fields["key"], f"{path}{{key}}", optional=False)
            value = self.schema(fields["value"], f"{path}{{}}", optional=False)
            return SchemaBuilder.map(key, value)
        return SchemaBuilder.array(self.schema(items, f"{path}[]", optional=False))

    def _record(self, avro: dict[str, Any], path: str) -> SchemaBuilder:
        full_name = avro["name"]
        self._named[full_name] = None  # being built: a reference to it is recursion
        builder = SchemaBuilder.struct()
        if CONNECT_NAME not in avro and not full_name.startswith(f"{NAMESPACE}.{DEFAULT_RECORD}"):
            builder.name(full_name)
        if CONNECT_DOC not in avro and isinstance(avro.get("doc"), str):
            builder.doc(avro["doc"])
        prefix = f"{path}." if path else ""
        for field in avro.get("fields", []):
            field_path = prefix + field["name"]
            field_schema = self.schema(field["type"], field_path, optional=False)
            if isinstance(field.get("doc"), str) and field_schema.doc is None:
                field_schema = attrs.evolve(field_schema, doc=field["doc"])
            if field.get("default") is not None:
                default = _default_from_json(field_schema, field["default"], field_path)
                field_schema = _with_default(field_schema, default)
            builder.field(field["name"], field_schema)
        return builder

    @staticmethod
    def _apply_meta(builder: SchemaBuilder, avro: dict[str, Any]) -> None:
        if isinstance(avro.get(CONNECT_NAME), str):
            builder.name(avro[CONNECT_NAME])
        if isinstance(avro.get(CONNECT_VERSION), int):
            builder.version(avro[CONNECT_VERSION])
        if isinstance(avro.get(CONNECT_DOC), str):
            builder.doc(avro[CONNECT_DOC])
        parameters = avro.get(CONNECT_PARAMETERS)
        if isinstance(parameters, dict):
            builder.parameters({str(k): str(v) for k, v in parameters.items()})


def _is_map_entry(items: Any) -> bool:
    if not isinstance(items, dict) or items.get("type") != "record":
        return False
    if not str(items.get("name", "")).startswith(f"{NAMESPACE}.{MAP_ENTRY}"):
        return False
    return [field["name"] for field in items.get("fields", [])] == ["key", "value"]


def _optional(builder: SchemaBuilder, optional: bool) -> SchemaBuilder:
    return builder.optional() if optional else builder


def _with_default(schema: Schema, default: Any) -> Schema:
    validate_value(schema, default, path="default")
    return attrs.evolve(schema, default=default)


def _default_from_json(schema: Schema, value: Any, path: str) -> Any:
    """The Connect value of an Avro field default (Avro's JSON encoding)."""
    if value is None:
        return None
    name = schema.name
    if name in logical.LOGICAL_NAMES:
        encoded = value.encode("latin-1") if isinstance(value, str) else value
        return logical.to_logical(schema, encoded)
    type_ = schema.type
    if type_ is Type.BYTES:
        return value.encode("latin-1")
    if type_ in (Type.FLOAT32, Type.FLOAT64):
        return float(value)
    if type_ is Type.ARRAY:
        assert schema.value_schema is not None
        return [_default_from_json(schema.value_schema, item, path) for item in value]
    if type_ is Type.MAP:
        assert schema.key_schema is not None and schema.value_schema is not None
        if isinstance(value, dict):
            return {k: _default_from_json(schema.value_schema, v, path) for k, v in value.items()}
        return {
            _default_from_json(schema.key_schema, entry["key"], path):
                _default_from_json(schema.value_schema, entry["value"], path)
            for entry in value
        }
    if type_ is Type.STRUCT:
        if not isinstance(value, Mapping):
            raise DataError(f"default of record field{where(path)} is not an object")
        return Struct(schema, {
            field.name: _default_from_json(field.schema, value.get(field.name), path)
            for field in schema.fields if value.get(field.name) is not None
        })
    return value


# -- values ------------------------------------------------------------------------------


def compile_to_avro(schema: Schema, path: str = "") -> Encode:
    """A function from a Connect value of ``schema`` (``None`` included) to the datum
    fastavro writes for the Avro schema :func:`to_avro_schema` gives.

    Logical values are encoded here (Decimal to bytes, dates to ints), with omconnect's
    rules (a naive ``datetime`` is UTC), not fastavro's.
    """
    return with_nulls(schema, _to_avro_value(schema, path), path)


def _to_avro_value(schema: Schema, path: str) -> Encode | None:
    if schema.name in logical.LOGICAL_NAMES:
        return lambda value: logical.from_logical(schema, value)
    type_ = schema.type
    if type_ is Type.BYTES:
        size = schema.parameters.get(FIXED_SIZE)
        if size is not None:
            return _fixed_encoder(int(size), path)
        return lambda value: value if type(value) is bytes else bytes(value)
    if type_ is Type.ARRAY:
        assert schema.value_schema is not None
        element = compile_to_avro(schema.value_schema, f"{path}[]")
        if element is identity:
            return None
        return lambda value: [element(item) for item in value]
    if type_ is Type.MAP:
        assert schema.key_schema is not None and schema.value_schema is not None
        value_encoder = compile_to_avro(schema.value_schema, f"{path}{{}}")
        if schema.key_schema.type is Type.STRING and not schema.key_schema.optional:
            return lambda value: {key: value_encoder(item) for key, item in value.items()}
        key_encoder = compile_to_avro(schema.key_schema, f"{path}{{key}}")
        return lambda value: [{"key": key_encoder(key), "value": value_encoder(item)}
                              for key, item in value.items()]
    if type_ is Type.STRUCT:
        return _struct_to_avro(schema, path)
    return None


def _fixed_encoder(size: int, path: str) -> Encode:
    def encode_fixed(value: Any) -> Any:
        if len(value) != size:
            raise DataError(f"fixed bytes{where(path)} must be {size} bytes, got {len(value)}")
        return bytes(value)

    return encode_fixed


def _struct_to_avro(schema: Schema, path: str) -> Encode:
    return struct_encoder(schema, path, compile_to_avro,
                          lambda field, at: _to_avro_value(field, at) is not None)


def compile_from_avro(schema: Schema) -> Decode:
    """A function from a datum fastavro read (with the schema whose Connect form is
    ``schema``) to its Connect value. fastavro already checked the types; this only
    reshapes records into structs and map entries into dicts.
    """
    return _from_avro(schema) or identity


def _from_avro(schema: Schema) -> Decode | None:
    """The decoder, or ``None`` when a datum is its own Connect value."""
    if schema.name in logical.LOGICAL_NAMES:
        return None
    type_ = schema.type
    if type_ is Type.ARRAY:
        assert schema.value_schema is not None
        element = _from_avro(schema.value_schema)
        if element is None:
            return None
        return lambda datum: None if datum is None else [
            None if item is None else element(item) for item in datum]
    if type_ is Type.MAP:
        assert schema.key_schema is not None and schema.value_schema is not None
        key = _from_avro(schema.key_schema) or identity
        value = _from_avro(schema.value_schema) or identity

        def decode_map(datum: Any) -> Any:
            if datum is None:
                return None
            if type(datum) is dict:
                return {k: None if v is None else value(v) for k, v in datum.items()}
            return {
                None if entry["key"] is None else key(entry["key"]):
                    None if entry["value"] is None else value(entry["value"])
                for entry in datum
            }

        return decode_map
    if type_ is Type.STRUCT:
        plan = tuple((field.name, _from_avro(field.schema)) for field in schema.fields)
        from_values = Struct.from_values

        def decode_struct(datum: Any) -> Any:
            if datum is None:
                return None
            return from_values(schema, [
                datum[name] if decode is None or datum[name] is None else decode(datum[name])
                for name, decode in plan
            ], validate=False)

        return decode_struct
    return None


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
