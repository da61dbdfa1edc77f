"""Fixtures for the transform tests: records, schemas and configured transforms."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

import pytest
from transform_testing import TS

from omconnect.data import Schema, SchemaBuilder, Struct
from omconnect.records import SinkRecord, SourceRecord
from omconnect.transforms import Transformation, TransformChain


@pytest.fixture
def order_schema() -> Schema:
    """A named struct schema with required, optional and defaulted fields."""
    return (SchemaBuilder.struct().name("com.example.Order").version(2)
            .field("id", SchemaBuilder.int64().build())
            .field("customer", SchemaBuilder.string().build())
            .field("amount", SchemaBuilder.float64().optional().build())
            .field("note", SchemaBuilder.string().optional().build())
            .build())


@pytest.fixture
def order(order_schema: Schema) -> Struct:
    return Struct(order_schema, {"id": 42, "customer": "ada", "amount": 9.5, "note": None})


@pytest.fixture
def sink_record() -> Callable[..., SinkRecord]:
    def make(value: Any = None, value_schema: Schema | None = None, **fields: Any) -> SinkRecord:
        fields.setdefault("topic", "orders")
        fields.setdefault("partition", 3)
        fields.setdefault("offset", 17)
        fields.setdefault("timestamp", TS)
        return SinkRecord(value=value, value_schema=value_schema, **fields)
    return make


@pytest.fixture
def source_record() -> Callable[..., SourceRecord]:
    def make(value: Any = None, value_schema: Schema | None = None, **fields: Any) -> SourceRecord:
        fields.setdefault("topic", "orders")
        fields.setdefault("timestamp", TS)
        fields.setdefault("source_partition", {"file": "/in.txt"})
        fields.setdefault("source_offset", {"position": 12})
        return SourceRecord(value=value, value_schema=value_schema, **fields)
    return make


@pytest.fixture
def configured() -> Callable[..., Transformation]:
    """A transform class instantiated and configured with ``options``."""
    def make(cls: type[Transformation], options: Mapping[str, Any] | None = None,
             ) -> Transformation:
        transform = cls()
        transform.configure(dict(options or {}))
        return transform
    return make


@pytest.fixture
def chain_of() -> Iterator[Callable[..., TransformChain]]:
    """A chain built from a connector config, closed after the test."""
    built: list[TransformChain] = []

    def make(config: Mapping[str, Any]) -> TransformChain:
        chain = TransformChain.from_config(config)
        built.append(chain)
        return chain

    yield make
    for chain in built:
        chain.close()
