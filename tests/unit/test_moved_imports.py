"""Names that moved to break import loops or to split a module by job are still
importable from where users found them.
"""

from __future__ import annotations

import importlib

import pytest

SAME_OBJECT = [
    # (old module, new module, name)
    ("omconnect.data.values", "omconnect.data.schema", "validate_value"),
    ("omconnect.data.logical", "omconnect.data.logical_names", "DECIMAL"),
    ("omconnect.data.logical", "omconnect.data.logical_names", "TIMESTAMP"),
    ("omconnect.data.logical", "omconnect.data.logical_names", "LOGICAL_NAMES"),
    ("omconnect.config.secrets", "omconnect.config.secret_names", "looks_secret"),
    ("omconnect.config.secrets", "omconnect.config.secret_names", "MASK"),
    ("omconnect.config.secrets", "omconnect.config.secret_names", "SECRET_NAME_PARTS"),
    ("omconnect.config.files", "omconnect.config.file_parsing", "parse_config"),
    ("omconnect.config.files", "omconnect.config.file_parsing", "flatten"),
    ("omconnect.config.files", "omconnect.config.file_parsing", "config_format"),
    ("omconnect.config.files", "omconnect.config.file_parsing", "FORMATS"),
    ("omconnect_datagen.source", "omconnect_datagen.task", "DatagenTask"),
    ("omconnect_file.sink", "omconnect_file.line_text", "line_of"),
    ("omconnect.runtime.record_conversion", "omconnect.converters.selection",
     "build_converters"),
    ("omconnect.runtime.record_conversion", "omconnect.converters.selection",
     "converter_config_errors"),
    ("omconnect.runtime.record_conversion", "omconnect.converters.selection", "Converters"),
]


@pytest.mark.parametrize(("old", "new", "name"), SAME_OBJECT)
def test_a_moved_name_is_the_same_object_at_its_old_path(old: str, new: str,
                                                         name: str) -> None:
    assert getattr(importlib.import_module(old), name) is \
        getattr(importlib.import_module(new), name)


@pytest.mark.parametrize("name", ["TransformChain", "TransformStage"])
def test_the_chain_from_the_transform_spi_module_is_a_deprecated_alias(name: str) -> None:
    from omconnect.transforms import base, chain

    with pytest.warns(DeprecationWarning, match="omconnect.transforms"):
        alias = getattr(base, name)
    assert alias is getattr(chain, name)


def test_a_struct_is_a_struct_value_of_the_validation_layer() -> None:
    from omconnect.data import SchemaBuilder, Struct
    from omconnect.data.schema import StructValue
    from omconnect.errors import DataError

    schema = SchemaBuilder.struct().field("id", SchemaBuilder.int32().build()).build()
    schema.validate_value(Struct(schema, {"id": 1}))
    with pytest.raises(DataError, match="struct schema needs a Struct, got dict"):
        schema.validate_value({"id": 1})
    assert isinstance(Struct(schema, {"id": 1}), StructValue)


@pytest.mark.parametrize(("old", "new"), [
    ("omconnect.transports.memory", "omconnect.transport.memory"),
    ("omconnect.transports.embedded", "omconnect.transport.embedded"),
    ("omconnect.transports.embedded.transport", "omconnect.transport.embedded.transport"),
    ("omconnect.transports.checks", "omconnect.transport.kit.checks"),
    ("omconnect.transports.grouping", "omconnect.transport.kit.grouping"),
    ("omconnect.transports.logconsumer", "omconnect.transport.kit.log_consumer"),
    ("omconnect.transports.partitioning", "omconnect.transport.kit.partitioning"),
])
def test_an_old_transport_module_path_is_the_moved_module(old: str, new: str) -> None:
    import sys

    sys.modules.pop(old, None)
    with pytest.warns(DeprecationWarning, match=new.replace(".", r"\.")):
        moved = importlib.import_module(old)
    assert moved is importlib.import_module(new)


def test_a_transport_named_by_its_old_python_path_still_loads() -> None:
    import sys

    from omconnect import plugins
    from omconnect.transport.embedded import EmbeddedTransport

    sys.modules.pop("omconnect.transports.embedded", None)
    with pytest.warns(DeprecationWarning):
        loaded = plugins.load(plugins.TRANSPORTS,
                              "omconnect.transports.embedded:EmbeddedTransport")
    assert loaded is EmbeddedTransport


@pytest.mark.parametrize(("old", "new"), [
    ("omconnect.source", "omconnect.source_base"),
    ("omconnect.source.task", "omconnect.source_base.task"),
    ("omconnect.source.offsets", "omconnect.source_base.offset_manager"),
    ("omconnect.source.transformers", "omconnect.source_base.formats"),
    ("omconnect.source.transformers.csv", "omconnect.source_base.formats.csv"),
])
def test_an_old_source_base_module_path_is_the_moved_module(old: str, new: str) -> None:
    import sys

    sys.modules.pop(old, None)
    with pytest.warns(DeprecationWarning, match=new.replace(".", r"\.")):
        moved = importlib.import_module(old)
    assert moved is importlib.import_module(new)


@pytest.mark.parametrize(("module", "old", "new"), [
    ("omconnect.source_base", "Transformer", "RecordFormat"),
    ("omconnect.source_base", "TransformedRecord", "ParsedRecord"),
    ("omconnect.source_base", "create_transformer", "create_format"),
    ("omconnect.source_base.formats", "transformer_class", "format_class"),
    ("omconnect.source_base.formats.csv", "CsvTransformer", "CsvFormat"),
    ("omconnect.source_base.formats.jsonl", "JsonLinesTransformer", "JsonLinesFormat"),
    ("omconnect.source_base.formats.avro", "AvroTransformer", "AvroFormat"),
    ("omconnect.source_base.formats.parquet", "ParquetTransformer", "ParquetFormat"),
    ("omconnect.source_base.formats.bytes", "BytesTransformer", "BytesFormat"),
])
def test_a_record_format_keeps_its_transformer_name_as_an_alias(module: str, old: str,
                                                                new: str) -> None:
    loaded = importlib.import_module(module)
    with pytest.warns(DeprecationWarning, match=f"{old} is now {new}"):
        alias = getattr(loaded, old)
    assert alias is getattr(loaded, new)
