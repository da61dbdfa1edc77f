"""The data model: schemas, structs, headers, logical types and schema projection."""

from omconnect.data.builder import SchemaBuilder
from omconnect.data.headers import Header, Headers
from omconnect.data.logical import (
    date_schema,
    decimal_schema,
    time_schema,
    timestamp_schema,
)
from omconnect.data.projection import project
from omconnect.data.schema import (
    BOOLEAN_SCHEMA,
    BYTES_SCHEMA,
    FLOAT32_SCHEMA,
    FLOAT64_SCHEMA,
    INT8_SCHEMA,
    INT16_SCHEMA,
    INT32_SCHEMA,
    INT64_SCHEMA,
    OPTIONAL_BOOLEAN_SCHEMA,
    OPTIONAL_BYTES_SCHEMA,
    OPTIONAL_FLOAT32_SCHEMA,
    OPTIONAL_FLOAT64_SCHEMA,
    OPTIONAL_INT8_SCHEMA,
    OPTIONAL_INT16_SCHEMA,
    OPTIONAL_INT32_SCHEMA,
    OPTIONAL_INT64_SCHEMA,
    OPTIONAL_STRING_SCHEMA,
    STRING_SCHEMA,
    Field,
    Schema,
    Type,
)
from omconnect.data.struct import SchemaAndValue, Struct

__all__ = [
    "BOOLEAN_SCHEMA",
    "BYTES_SCHEMA",
    "FLOAT32_SCHEMA",
    "FLOAT64_SCHEMA",
    "INT8_SCHEMA",
    "INT16_SCHEMA",
    "INT32_SCHEMA",
    "INT64_SCHEMA",
    "OPTIONAL_BOOLEAN_SCHEMA",
    "OPTIONAL_BYTES_SCHEMA",
    "OPTIONAL_FLOAT32_SCHEMA",
    "OPTIONAL_FLOAT64_SCHEMA",
    "OPTIONAL_INT8_SCHEMA",
    "OPTIONAL_INT16_SCHEMA",
    "OPTIONAL_INT32_SCHEMA",
    "OPTIONAL_INT64_SCHEMA",
    "OPTIONAL_STRING_SCHEMA",
    "STRING_SCHEMA",
    "Field",
    "Header",
    "Headers",
    "Schema",
    "SchemaAndValue",
    "SchemaBuilder",
    "Struct",
    "Type",
    "date_schema",
    "decimal_schema",
    "project",
    "time_schema",
    "timestamp_schema",
]
