"""Converters are found by entry-point name and by Kafka Connect's class names."""

from __future__ import annotations

import pytest

from omconnect import plugins
from omconnect.converters import (
    AvroConverter,
    ByteArrayConverter,
    Converter,
    HeaderConverter,
    JsonConverter,
    SimpleHeaderConverter,
    StringConverter,
)
from omconnect.errors import PluginError


@pytest.mark.parametrize(("name", "cls"), [
    ("json", JsonConverter),
    ("string", StringConverter),
    ("bytearray", ByteArrayConverter),
    ("avro", AvroConverter),
    ("simple", SimpleHeaderConverter),
    ("org.apache.kafka.connect.json.JsonConverter", JsonConverter),
    ("org.apache.kafka.connect.storage.StringConverter", StringConverter),
    ("org.apache.kafka.connect.converters.ByteArrayConverter", ByteArrayConverter),
    ("org.apache.kafka.connect.storage.SimpleHeaderConverter", SimpleHeaderConverter),
    ("omconnect.converters.json:JsonConverter", JsonConverter),
])
def test_converters_load_by_name_alias_and_path(name, cls):
    assert plugins.load(plugins.CONVERTERS, name) is cls


def test_which_converters_also_convert_headers():
    headers = {name for name in ("json", "string", "bytearray", "avro", "simple")
               if issubclass(plugins.load(plugins.CONVERTERS, name), HeaderConverter)}
    assert headers == {"json", "string", "bytearray", "simple"}
    assert not issubclass(SimpleHeaderConverter, Converter)


def test_an_unknown_converter_suggests_the_closest():
    with pytest.raises(PluginError, match=r"did you mean 'json'"):
        plugins.load(plugins.CONVERTERS, "jsn")
