"""Converters: record keys, values and headers between Connect form and bytes.

=============  ===========================  ===============================================
entry point    class                        Kafka Connect class name (an alias)
=============  ===========================  ===============================================
``json``       :class:`JsonConverter`       ``org.apache.kafka.connect.json.JsonConverter``
``string``     :class:`StringConverter`     ``org.apache.kafka.connect.storage.``
                                            ``StringConverter``
``bytearray``  :class:`ByteArrayConverter`  ``org.apache.kafka.connect.converters.``
                                            ``ByteArrayConverter``
``avro``       :class:`AvroConverter`       none (not Confluent's wire format)
``simple``     :class:`SimpleHeaderConverter`  ``org.apache.kafka.connect.storage.``
                                               ``SimpleHeaderConverter``
=============  ===========================  ===============================================

All of them live in the ``omconnect.converters`` entry-point group. ``json``, ``string``
and ``bytearray`` are also :class:`HeaderConverter` (as in Kafka Connect), so any of them
can be named as a header converter; ``simple`` is the default one.

The classes are imported lazily: ``import omconnect.converters`` stays cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from omconnect.converters.base import Converter, HeaderConverter

if TYPE_CHECKING:
    from omconnect.converters.avro import AvroConverter
    from omconnect.converters.bytearray import ByteArrayConverter
    from omconnect.converters.headers import SimpleHeaderConverter
    from omconnect.converters.json import JsonConverter
    from omconnect.converters.string import StringConverter

__all__ = [
    "AvroConverter",
    "ByteArrayConverter",
    "Converter",
    "HeaderConverter",
    "JsonConverter",
    "SimpleHeaderConverter",
    "StringConverter",
]

_LAZY = {
    "AvroConverter": "omconnect.converters.avro",
    "ByteArrayConverter": "omconnect.converters.bytearray",
    "JsonConverter": "omconnect.converters.json",
    "SimpleHeaderConverter": "omconnect.converters.headers",
    "StringConverter": "omconnect.converters.string",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
