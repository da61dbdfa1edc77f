"""Schema.with_optional keeps parameters (regression: it crashed on any schema that has
them, e.g. every Decimal schema, because attrs.evolve passed the frozen tuple back in).
"""

from omconnect.data import SchemaBuilder, decimal_schema


def test_with_optional_keeps_the_parameters_of_a_decimal():
    schema = decimal_schema(2)
    optional = schema.with_optional(True)
    assert optional.optional
    assert optional.parameters == {"scale": "2"}
    assert optional.with_optional(False) == schema


def test_with_optional_keeps_several_parameters():
    schema = SchemaBuilder.string().parameter("b", "2").parameter("a", "1").build()
    assert schema.with_optional(True).parameters == {"a": "1", "b": "2"}
