import attrs
import pytest

from omconnect.data import Schema, SchemaBuilder, Type
from omconnect.errors import DataError
from omconnect.transforms.support import SchemaCache, struct_schema_like, with_key, with_value


def test_record_updates_keep_every_other_field(sink_record, source_record):
    schema = Schema(type=Type.STRING)
    for record in (sink_record("v", key="k", headers=[("h", 1)]),
                   source_record("v", key="k", partition=2)):
        assert with_value(record, schema, "new") == attrs.evolve(
            record, value_schema=schema, value="new")
        assert with_key(record, schema, "new") == attrs.evolve(
            record, key_schema=schema, key="new")


def test_sink_record_update_keeps_the_original_position(sink_record):
    record = sink_record("v").evolve(topic="renamed")
    updated = with_value(record, None, "x")
    assert (updated.original_topic, updated.original_offset) == ("orders", 17)


def test_schema_cache_derives_once_per_schema_by_identity_and_value():
    calls = []
    cache = SchemaCache(lambda s: calls.append(s) or len(calls), size=2)
    a = Schema(type=Type.STRING, name="a")
    assert cache.get(a) == 1 and cache.get(a) == 1
    assert cache.get(Schema(type=Type.STRING, name="a")) == 1  # equal, not identical
    assert len(calls) == 1


def test_schema_cache_is_bounded_lru():
    calls = []
    cache = SchemaCache(lambda s: calls.append(s.name) or s.name, size=2)
    a, b, c = (Schema(type=Type.STRING, name=n) for n in "abc")
    cache.get(a)
    cache.get(b)
    cache.get(Schema(type=Type.STRING, name="a"))  # refreshes a (by value)
    cache.get(c)  # evicts b, the least recently used
    assert len(cache) == 2
    cache.get(Schema(type=Type.STRING, name="a"))
    cache.get(Schema(type=Type.STRING, name="b"))
    assert calls == ["a", "b", "c", "b"]


def test_schema_cache_does_not_keep_failures():
    attempts = []

    def derive(schema):
        attempts.append(schema)
        raise DataError("no")

    cache = SchemaCache(derive)
    for _ in range(2):
        with pytest.raises(DataError):
            cache.get(Schema(type=Type.STRING))
    assert len(attempts) == 2


def test_struct_schema_like_copies_the_basics():
    source = (SchemaBuilder.struct().name("n").version(3).doc("d").parameter("p", "v")
              .optional().build())
    derived = struct_schema_like(source, [("x", Schema(type=Type.INT8))])
    assert (derived.name, derived.version, derived.doc, derived.parameters, derived.optional) \
        == ("n", 3, "d", {"p": "v"}, True)
    assert [f.name for f in derived.fields] == ["x"]
