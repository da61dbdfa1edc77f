import pytest

from omconnect.data import SchemaBuilder, Struct
from omconnect.errors import DataError


@pytest.fixture
def schema():
    return (SchemaBuilder.struct()
            .field("id", SchemaBuilder.int32().build())
            .field("name", SchemaBuilder.string().optional().default_value("anon").build())
            .build())


def test_from_values_equals_the_struct_built_by_name(schema):
    assert Struct.from_values(schema, [1, "x"]) == Struct(schema, {"id": 1, "name": "x"})


def test_from_values_validates_unless_told_not_to(schema):
    with pytest.raises(DataError, match="at id"):
        Struct.from_values(schema, ["one", "x"])
    trusted = Struct.from_values(schema, [1, "x"], validate=False)
    assert trusted.get("id") == 1


def test_from_values_needs_one_value_per_field(schema):
    with pytest.raises(DataError, match="1 values given for the 2 fields"):
        Struct.from_values(schema, [1])


def test_from_values_needs_a_struct_schema():
    with pytest.raises(DataError, match="needs a STRUCT schema"):
        Struct.from_values(SchemaBuilder.int8().build(), [])


def test_values_in_field_order_with_defaults_filled_in(schema):
    struct = Struct(schema, {"id": 7})
    assert struct.values() == [7, "anon"]
    copy = Struct.from_values(schema, struct.values(), validate=False)
    copy.put("id", 8)
    assert struct.get("id") == 7  # the copy does not share the list


def test_values_is_a_copy(schema):
    struct = Struct(schema, {"id": 7, "name": "x"})
    values = struct.values()
    values[0] = 99
    assert struct.get("id") == 7
