"""How the key and value columns of a read are decoded: ``key.converter`` /
``value.converter`` with their options, and ``key.schema`` / ``value.schema`` (Spark DDL
or StructType JSON) for a converter that yields fields.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Literal

import attrs

from omconnect import plugins
from omconnect.converters.task_converters import converter_config_errors
from omconnect.errors import ConfigError

__all__ = ["Decoding", "decoding_of"]


@attrs.frozen(kw_only=True)
class Decoding:
    """How a key or value column is decoded.

    Attributes:
        role: ``key.converter`` or ``value.converter``.
        converter: The converter's name, or ``None`` for raw bytes.
        options: The converter's options (``<role>.*``, prefix removed).
        output: ``binary`` (raw bytes), ``string`` (text) or ``struct`` (fields of
            ``schema``).
        schema: For ``struct``: the Spark type of the column, as DDL.

    """

    role: str
    converter: str | None = None
    options: Mapping[str, Any] = attrs.field(factory=dict)
    output: Literal["binary", "string", "struct"] = "binary"
    schema: str | None = None

    @property
    def spark_type(self) -> str:
        """The column's Spark type, as DDL."""
        if self.output == "struct":
            assert self.schema is not None
            return self.schema
        return self.output.upper()


def decoding_of(role: str, known: Mapping[str, Any], options: Mapping[str, Any]) -> Decoding:
    """The decoding of ``role`` (``key.converter`` / ``value.converter``)."""
    side = role.split(".")[0]
    schema_option = f"{side}.schema"
    name = known.get(role)
    schema_text = known.get(schema_option)
    if not name:
        if schema_text:
            raise ConfigError(f"{schema_option} needs {role} (the converter that decodes "
                              f"the {side}), e.g. {role}=json", key=schema_option)
        return Decoding(role=role)
    name = str(name).strip()
    converter_options = {k[len(role) + 1:]: v for k, v in known.items()
                         if k.startswith(role + ".")}
    problems = converter_config_errors({role: name, **{f"{role}.{k}": v for k, v in
                                                       converter_options.items()}})
    problems = {k: v for k, v in problems.items() if v}
    if problems:
        key, messages = next(iter(problems.items()))
        raise ConfigError("; ".join(messages), key=key)
    output = _converter_output(name)
    if output == "struct":
        if not schema_text:
            raise ConfigError(f"{schema_option} is needed with {role}={name}: give the "
                              f"{side}'s fields as Spark DDL, e.g. "
                              f"'id BIGINT, name STRING'", key=schema_option)
        return Decoding(role=role, converter=name, options=converter_options,
                        output="struct", schema=_struct_ddl(str(schema_text), schema_option))
    if schema_text:
        raise ConfigError(f"{schema_option} does not apply to {role}={name}, which yields "
                          f"{output}; remove it", key=schema_option)
    return Decoding(role=role, converter=name, options=converter_options, output=output)


def _converter_output(name: str) -> Literal["binary", "string", "struct"]:
    """What a converter's values become as a column."""
    from omconnect.converters.bytearray import ByteArrayConverter
    from omconnect.converters.string import StringConverter

    loaded = plugins.load(plugins.CONVERTERS, name)
    if isinstance(loaded, type) and issubclass(loaded, StringConverter):
        return "string"
    if isinstance(loaded, type) and issubclass(loaded, ByteArrayConverter):
        return "binary"
    return "struct"


def _struct_ddl(text: str, option: str) -> str:
    """``text`` (a DDL column list or StructType JSON) as a ``STRUCT<...>`` DDL type."""
    stripped = text.strip()
    if stripped.startswith("{"):
        from pyspark.sql.types import StructType

        try:
            struct = StructType.fromJson(json.loads(stripped))
        except (ValueError, KeyError, TypeError) as exc:
            raise ConfigError(f"{option} is not a valid StructType JSON ({exc}); give a DDL "
                              "column list such as 'id BIGINT, name STRING' instead",
                              key=option) from None
        return struct.simpleString()
    if stripped.lower().startswith("struct<"):
        return stripped
    return f"STRUCT<{stripped}>"
