"""connector.class resolution: entry points, Kafka Connect's names, Python paths, class names."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from omconnect import ConfigDef, SinkConnector, SinkTask, plugins
from omconnect.config.files import load_config_file
from omconnect.connector import resolve_connector_class
from omconnect.errors import MissingExtraError, PluginError

EXAMPLES = Path(__file__).parents[2] / "examples" / "kafka-connect"
FAKE = "omc_fake_plugins"  # the distribution of the fake_plugins fixture


@pytest.mark.parametrize(
    "name",
    ["tick",  # entry point
     "com.example.TickConnector",  # an alias (registered by the test)
     f"{FAKE}.source:TickSourceConnector", f"{FAKE}.source.TickSourceConnector",  # paths
     "TickSourceConnector", "TickSource",  # class name, with and without the suffix
     "com.example.connect.TickSourceConnector",  # a Java class name: its last part
     "  tick  "],
)
def test_every_spelling_resolves_to_the_connector(fake_plugins: Path, name: str,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(plugins._ALIASES, plugins.CONNECTORS,
                        {**plugins._ALIASES[plugins.CONNECTORS],
                         "com.example.TickConnector": "tick"})
    cls = resolve_connector_class(name)
    assert cls.__qualname__ == "TickSourceConnector"
    assert cls.__module__ == f"{FAKE}.source"


def test_a_class_resolves_to_itself(fake_plugins: Path) -> None:
    cls = resolve_connector_class("tick")
    assert resolve_connector_class(cls) is cls


@pytest.mark.parametrize(
    ("example", "entry_point"),
    [("connect-file-source.properties", "file-source"),
     ("connect-file-sink.properties", "file-sink")],
)
def test_the_kafka_connect_example_configs_resolve_unchanged(example: str,
                                                            entry_point: str) -> None:
    installed = plugins.available(plugins.CONNECTORS)
    if entry_point not in installed:
        pytest.skip(f"the {entry_point} entry point is not installed in this environment")
    config = load_config_file(EXAMPLES / example)
    assert resolve_connector_class(config["connector.class"]) is installed[entry_point].load()


def test_an_unknown_name_lists_the_connectors_with_a_did_you_mean(fake_plugins: Path) -> None:
    with pytest.raises(PluginError, match=r"unknown connector 'tik'; did you mean 'tick'\? "
                                          r"Known: .*tick"):
        resolve_connector_class("tik")


def test_an_ambiguous_class_name_names_the_candidates(fake_plugins: Path) -> None:
    with pytest.raises(PluginError, match="'TwinSource' is ambiguous: it matches the "
                                          "connectors twin-a, twin-b"):
        resolve_connector_class("TwinSource")


def test_a_class_that_is_not_a_connector_is_refused(fake_plugins: Path) -> None:
    with pytest.raises(PluginError, match=r"'not-a-connector' resolves to .*NotAConnector.*, "
                                          "which is not a subclass of omconnect.Connector"):
        resolve_connector_class("not-a-connector")
    with pytest.raises(PluginError, match=r"not a subclass of omconnect.Connector"):
        resolve_connector_class(dict)


def test_an_abstract_connector_is_refused_naming_the_missing_methods(fake_plugins: Path) -> None:
    with pytest.raises(PluginError, match=r"'half' \(omc_fake_plugins.source.HalfConnector\) "
                                          "is abstract: it does not implement start, stop, "
                                          "task_class, task_configs"):
        resolve_connector_class("half")


def test_a_missing_extra_is_not_hidden_behind_unknown(fake_plugins: Path) -> None:
    with pytest.raises(MissingExtraError, match=r"omconnect\[needy\]"):
        resolve_connector_class("needy")


def test_a_connector_defined_in_the_callers_code_resolves_by_path() -> None:
    cls = resolve_connector_class(f"{__name__}:InlineSink")
    assert cls is InlineSink


class InlineSink(SinkConnector):
    def version(self) -> str:
        return "1"

    def config_def(self) -> ConfigDef:
        return ConfigDef()

    def start(self, config: Mapping[str, Any]) -> None:
        pass

    def task_class(self) -> type[SinkTask]:
        raise NotImplementedError

    def task_configs(self, max_tasks: int) -> list[dict[str, Any]]:
        return []

    def stop(self) -> None:
        pass


@pytest.mark.parametrize(
    ("alias", "entry_point", "target"),
    [("FileStreamSource", "file-source", "omconnect_file.source:FileStreamSourceConnector"),
     ("FileStreamSink", "file-sink", "omconnect_file.sink:FileStreamSinkConnector")],
)
def test_the_installed_built_in_file_connectors_resolve_by_kafka_name(
    alias: str, entry_point: str, target: str,
) -> None:
    installed = plugins.available(plugins.CONNECTORS)
    if entry_point not in installed:
        pytest.skip(f"the {entry_point} entry point is not installed in this environment")
    assert installed[entry_point].value == target
    cls = resolve_connector_class(alias)
    module, _, name = target.partition(":")
    assert (cls.__module__, cls.__name__) == (module, name)
