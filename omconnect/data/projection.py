"""Schema projection: read a value written with one schema as another, compatible one.

The rules (as Kafka Connect's SchemaProjector, which these mirror):

* Types must match, except numeric widening along int8 → int16 → int32 → int64 →
  float32 → float64.
* Names and parameters must match when both schemas set them. Versions may differ:
  reading version 1 data as version 2 is what evolution is.
* A struct field in the target but not in the source takes the target's default, or
  ``None`` if optional; a required field without a default is an error. Fields only in the
  source are dropped.
* An optional source cannot be projected onto a required target without a default.
"""

from __future__ import annotations

from typing import Any

from omconnect.data.schema import Schema, Type
from omconnect.data.struct import Struct
from omconnect.errors import SchemaProjectionError

__all__ = ["project"]

_NUMERIC_ORDER = (Type.INT8, Type.INT16, Type.INT32, Type.INT64, Type.FLOAT32, Type.FLOAT64)


def _can_widen(source: Type, target: Type) -> bool:
    if source is target:
        return True
    if source in _NUMERIC_ORDER and target in _NUMERIC_ORDER:
        return _NUMERIC_ORDER.index(source) <= _NUMERIC_ORDER.index(target)
    return False


def _check_compatible(source: Schema, target: Schema, path: str) -> None:
    where = f" at {path}" if path else ""
    if not _can_widen(source.type, target.type):
        raise SchemaProjectionError(
            f"cannot project {source.type.value} onto {target.type.value}{where}: only "
            "numeric widening (int8 → … → float64) is allowed"
        )
    if source.name and target.name and source.name != target.name:
        raise SchemaProjectionError(
            f"schema name {source.name!r} does not match {target.name!r}{where}")
    if source.parameters and target.parameters and source.parameters != target.parameters:
        raise SchemaProjectionError(
            f"schema parameters {source.parameters} do not match {target.parameters}{where}")
    if source.optional and not target.optional and target.default is None:
        raise SchemaProjectionError(
            f"cannot project an optional schema onto a required one without a default{where}; "
            "make the target optional or give it a default")


def project(source: Schema, value: Any, target: Schema, *, path: str = "") -> Any:
    """``value`` (of schema ``source``) as a value of ``target``.

    Args:
        source: The schema the value was written with.
        value: The value.
        target: The schema to read it as.
        path: Field path for error messages (used in recursion).

    Returns:
        The projected value: a new :class:`Struct` of ``target`` for structs, a widened
        number for numerics, otherwise the value itself.

    Raises:
        SchemaProjectionError: The schemas are incompatible; the message names the field.

    """
    _check_compatible(source, target, path)
    if value is None:
        if target.optional:
            return None
        if target.default is not None:
            return target.default
        raise SchemaProjectionError(f"missing value for required schema at {path or 'root'}")
    if target.type is Type.STRUCT:
        return _project_struct(source, value, target, path)
    if target.type is Type.ARRAY:
        assert source.value_schema is not None and target.value_schema is not None
        return [project(source.value_schema, v, target.value_schema, path=f"{path}[{i}]")
                for i, v in enumerate(value)]
    if target.type is Type.MAP:
        assert source.key_schema and source.value_schema
        assert target.key_schema and target.value_schema
        return {
            project(source.key_schema, k, target.key_schema, path=f"{path}{{key}}"):
            project(source.value_schema, v, target.value_schema, path=f"{path}[{k!r}]")
            for k, v in value.items()
        }
    if target.type in (Type.FLOAT32, Type.FLOAT64) and source.type.is_integer:
        return float(value)
    return value


def _project_struct(source: Schema, value: Struct, target: Schema, path: str) -> Struct:
    result = Struct(target)
    for field in target.fields:
        field_path = f"{path}.{field.name}" if path else field.name
        if source.has_field(field.name):
            source_field = source.field(field.name)
            result.put(field.name, project(source_field.schema, value.get(field.name),
                                           field.schema, path=field_path))
        elif field.schema.default is not None:
            result.put(field.name, field.schema.default)
        elif field.schema.optional:
            result.put(field.name, None)
        else:
            raise SchemaProjectionError(
                f"required field {field_path!r} is missing from the source schema and has no "
                "default; give it a default or make it optional")
    return result
