"""Single-message transforms and predicates, configured as in Kafka Connect.

The SPI (:class:`Transformation`, :class:`Predicate`), the chain the runtime drives
(:class:`TransformChain`) and the helpers transforms are made of. The built-in transforms
live in their own modules and are named in configurations by entry point
(``insert-field-value``), by Kafka Connect class name
(``org.apache.kafka.connect.transforms.InsertField$Value``) or by its short form
(``InsertField$Value``); see ``docs/transforms.md``.
"""

from omconnect.transforms.base import Predicate, Transformation
from omconnect.transforms.chain import ErrorHandler, TransformChain, TransformStage
from omconnect.transforms.support import (
    KEY,
    VALUE,
    KeyOrValueTransformation,
    SchemaCache,
    require_mapping,
    require_struct,
    struct_schema_like,
    with_headers,
    with_key,
    with_topic,
    with_value,
)

__all__ = [
    "KEY",
    "VALUE",
    "ErrorHandler",
    "KeyOrValueTransformation",
    "Predicate",
    "SchemaCache",
    "TransformChain",
    "TransformStage",
    "Transformation",
    "require_mapping",
    "require_struct",
    "struct_schema_like",
    "with_headers",
    "with_key",
    "with_topic",
    "with_value",
]
