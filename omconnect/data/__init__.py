"""The data model: schemas, structs, headers, logical types and schema projection.

What :mod:`omconnect.data.schema` exports (the schema types and the ready-made primitive
schemas) is exported here as that module lists it.
"""

from omconnect.data import schema as _schema
from omconnect.data.builder import SchemaBuilder
from omconnect.data.headers import Header, Headers
from omconnect.data.logical import (
    date_schema,
    decimal_schema,
    time_schema,
    timestamp_schema,
)
from omconnect.data.projection import project
from omconnect.data.schema import *  # noqa: F403  (exactly schema.__all__)
from omconnect.data.struct import SchemaAndValue, Struct

__all__ = [
    "Header",
    "Headers",
    "SchemaAndValue",
    "SchemaBuilder",
    "Struct",
    "date_schema",
    "decimal_schema",
    "project",
    "time_schema",
    "timestamp_schema",
]
__all__ += _schema.__all__  # the schema types and primitives, as schema.py lists them
