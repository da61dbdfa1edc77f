"""Plugin discovery: entry points, aliases, Python paths, did-you-mean, lazy extras."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from omconnect import plugins
from omconnect.errors import MissingExtraError, PluginError

FAKE_PACKAGE = "omc_fake_plugins"  # the distribution of the fake_plugins fixture


def test_an_entry_point_name_loads_its_class(fake_plugins: Path) -> None:
    cls = plugins.load(plugins.CONNECTORS, "tick")
    assert cls.__name__ == "TickSourceConnector"
    assert cls.__module__ == f"{FAKE_PACKAGE}.source"


def test_available_lists_entry_points_without_importing_them(fake_plugins: Path) -> None:
    available = plugins.available(plugins.CONNECTORS)
    assert {"tick", "broken", "needy"} <= set(available)
    assert f"{FAKE_PACKAGE}.broken" not in sys.modules  # listing imported nothing


def test_an_unknown_name_lists_the_known_ones_with_a_did_you_mean(fake_plugins: Path) -> None:
    with pytest.raises(PluginError) as caught:
        plugins.load(plugins.CONNECTORS, "tikc")
    message = str(caught.value)
    assert message.startswith("unknown connector 'tikc'; did you mean 'tick'? Known: ")
    listed = message.split("Known: ")[1].split(". A Python path")[0].split(", ")
    assert listed == sorted(plugins.available(plugins.CONNECTORS))
    assert message.endswith("A Python path (package.module:Class) works too.")


def test_an_unknown_name_with_nothing_close_says_so(fake_plugins: Path) -> None:
    with pytest.raises(PluginError, match=r"^unknown connector 'zzzzzz'\. Known: "):
        plugins.load(plugins.CONNECTORS, "zzzzzz")


def test_unknown_names_in_each_group_name_the_kind_of_plugin() -> None:
    kinds = {plugins.TRANSPORTS: "transport", plugins.CONVERTERS: "converter",
             plugins.TRANSFORMS: "transform", plugins.PREDICATES: "predicate"}
    for group, kind in kinds.items():
        with pytest.raises(PluginError, match=f"^unknown {kind} 'no-such-plugin'"):
            plugins.load(group, "no-such-plugin")


def test_did_you_mean_offers_an_alias_only_when_its_plugin_is_installed(
    fake_plugins: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(plugins._ALIASES, plugins.CONNECTORS,
                        {"TickerSourceConnector": "tick", "TickerSinkConnector": "not-installed"})
    with pytest.raises(PluginError, match="did you mean 'TickerSourceConnector'"):
        plugins.load(plugins.CONNECTORS, "TickerSourceConector")
    with pytest.raises(PluginError) as caught:
        plugins.load(plugins.CONNECTORS, "TickerSinkConector")
    assert "TickerSinkConnector" not in str(caught.value)


def test_a_name_two_distributions_register_differently_is_refused_naming_both(
    fake_plugins: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    rival = fake_plugins / "rival"
    (rival / "omc_rival-2.0.dist-info").mkdir(parents=True)
    (rival / "omc_rival-2.0.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: omc_rival\nVersion: 2.0\n")
    (rival / "omc_rival-2.0.dist-info" / "entry_points.txt").write_text(
        "[omconnect.connectors]\ntick = omc_rival.source:RivalConnector\n")
    monkeypatch.syspath_prepend(str(rival))
    plugins._entry_points.cache_clear()
    with pytest.raises(PluginError) as caught:
        plugins.load(plugins.CONNECTORS, "tick")
    message = str(caught.value)
    assert message.startswith("connector 'tick' is registered by several installed "
                              "distributions: ")
    assert "omc_rival.source:RivalConnector (from omc_rival)" in message
    assert f"{FAKE_PACKAGE}.source:TickSourceConnector (from {FAKE_PACKAGE})" in message
    assert "Uninstall all but one" in message


def test_the_same_entry_point_from_two_places_is_not_a_clash(fake_plugins: Path) -> None:
    # tick and tick-alias name the same class: both load.
    assert plugins.load(plugins.CONNECTORS, "tick") is plugins.load(plugins.CONNECTORS,
                                                                    "tick-alias")


@pytest.mark.parametrize(
    "path",
    [f"{FAKE_PACKAGE}.source:TickSourceConnector", f"{FAKE_PACKAGE}.source.TickSourceConnector"],
)
def test_a_python_path_loads_without_an_entry_point(fake_plugins: Path, path: str) -> None:
    assert plugins.load(plugins.CONNECTORS, path).__name__ == "TickSourceConnector"


def test_a_python_path_may_name_a_nested_attribute(fake_plugins: Path) -> None:
    nested = plugins.load(plugins.CONNECTORS, f"{FAKE_PACKAGE}.source:TickSourceConnector.Nested")
    assert nested.__qualname__ == "TickSourceConnector.Nested"


@pytest.mark.parametrize(
    "path",
    ["omc_no_such_package.module:Class", f"{FAKE_PACKAGE}.source:NoSuchClass",
     f"{FAKE_PACKAGE}.no_such_module.Class"],
)
def test_a_python_path_that_does_not_resolve_is_an_unknown_plugin(fake_plugins: Path,
                                                                  path: str) -> None:
    with pytest.raises(PluginError, match=f"unknown connector '{path}'"):
        plugins.load(plugins.CONNECTORS, path)


def test_a_plugin_whose_own_import_fails_shows_the_real_error(fake_plugins: Path) -> None:
    # A missing dependency inside a plugin is a bug to see, not an "unknown plugin".
    with pytest.raises(ModuleNotFoundError, match="omc_dependency_that_is_not_installed"):
        plugins.load(plugins.CONNECTORS, f"{FAKE_PACKAGE}.broken:Thing")
    with pytest.raises(ModuleNotFoundError, match="omc_dependency_that_is_not_installed"):
        plugins.load(plugins.CONNECTORS, "broken")


@pytest.mark.parametrize("name", ["needy", f"{FAKE_PACKAGE}.needy:Thing"])
def test_a_plugin_missing_its_extra_names_the_extra(fake_plugins: Path, name: str) -> None:
    with pytest.raises(MissingExtraError) as caught:
        plugins.load(plugins.CONNECTORS, name)
    assert caught.value.extra == "needy"
    assert "pip install 'omconnect[needy]'" in str(caught.value)


def test_register_alias_makes_a_name_resolve(fake_plugins: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(plugins._ALIASES, plugins.CONNECTORS,
                        dict(plugins._ALIASES[plugins.CONNECTORS]))
    plugins.register_alias(plugins.CONNECTORS, "com.example.TickConnector", "tick")
    assert plugins.load(plugins.CONNECTORS, "com.example.TickConnector").__name__ == (
        "TickSourceConnector")


def test_register_alias_refuses_an_unknown_group() -> None:
    with pytest.raises(PluginError, match=r"unknown plugin group 'omconnect.sinks'"):
        plugins.register_alias("omconnect.sinks", "a", "b")


@pytest.mark.parametrize(
    ("alias", "name"),
    [("FileStreamSource", "file-source"), ("FileStreamSourceConnector", "file-source"),
     ("org.apache.kafka.connect.file.FileStreamSourceConnector", "file-source"),
     ("FileStreamSink", "file-sink")],
)
def test_kafka_connect_names_of_the_file_connectors_load_the_built_ins(alias: str,
                                                                      name: str) -> None:
    installed = plugins.available(plugins.CONNECTORS)
    if name not in installed:
        pytest.skip(f"the {name} entry point is not installed in this environment")
    assert plugins.load(plugins.CONNECTORS, alias) is installed[name].load()


def test_the_built_in_alias_table_maps_kafka_connects_file_connectors() -> None:
    aliases = plugins._BUILTIN_ALIASES[plugins.CONNECTORS]
    for name in ("FileStreamSink", "FileStreamSinkConnector",
                 "org.apache.kafka.connect.file.FileStreamSinkConnector"):
        assert aliases[name] == "file-sink"
    for name in ("FileStreamSource", "FileStreamSourceConnector",
                 "org.apache.kafka.connect.file.FileStreamSourceConnector"):
        assert aliases[name] == "file-source"


def test_check_rejects_an_invalid_plugin_naming_it(fake_plugins: Path) -> None:
    def must_be_callable_with_version(obj: object) -> str | None:
        return None if hasattr(obj, "version") else "it has no version()"

    with pytest.raises(PluginError, match="connector plugin 'not-a-connector' is invalid: "
                                          "it has no version"):
        plugins.load(plugins.CONNECTORS, "not-a-connector", check=must_be_callable_with_version)
    assert plugins.load(plugins.CONNECTORS, "tick", check=must_be_callable_with_version)


def test_plugin_version_is_the_version_attribute_or_the_distributions(
    fake_plugins: Path,
) -> None:
    class Versioned:
        __version__ = "2.0.1"

    assert plugins.plugin_version(Versioned) == "2.0.1"
    assert plugins.plugin_version(plugins.load(plugins.CONNECTORS, "tick")) == "1.0"


# -- require(): lazy imports of extras ---------------------------------------------------


def test_require_returns_an_installed_module() -> None:
    import json

    assert plugins.require("json", plugin="json converter", extra="none") is json


def test_require_names_the_extra_when_the_module_is_absent() -> None:
    with pytest.raises(MissingExtraError) as caught:
        plugins.require("omc_absent_client", plugin="kafka transport", extra="kafka")
    error = caught.value
    assert isinstance(error, ImportError)
    assert (error.plugin, error.extra, error.module) == ("kafka transport", "kafka",
                                                         "omc_absent_client")
    assert str(error) == ("kafka transport needs the 'omc_absent_client' package, which is "
                          "not installed; install it with: pip install 'omconnect[kafka]'")
    assert isinstance(error.__cause__, ModuleNotFoundError)


def test_require_of_a_submodule_whose_package_is_absent_names_the_extra() -> None:
    with pytest.raises(MissingExtraError, match=r"omconnect\[pulsar\]"):
        plugins.require("omc_absent_client.schema", plugin="pulsar transport", extra="pulsar")


def _package(root: Path, name: str, body: str) -> None:
    (root / name).mkdir()
    (root / name / "__init__.py").write_text(textwrap.dedent(body))


def test_require_lets_an_import_error_from_inside_the_module_through(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The client is installed but broken: that must not be reported as a missing extra.
    _package(tmp_path, "omc_installed_client", "import omc_its_missing_dependency\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ModuleNotFoundError) as caught:
        plugins.require("omc_installed_client", plugin="x transport", extra="x")
    assert not isinstance(caught.value, MissingExtraError)
    assert caught.value.name == "omc_its_missing_dependency"


def test_require_does_not_mistake_a_similarly_named_module_for_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    # 'omc_cli' is installed and imports a missing 'omc_clix': not omc_cli's own absence.
    _package(tmp_path, "omc_cli", "import omc_clix\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ModuleNotFoundError) as caught:
        plugins.require("omc_cli", plugin="x transport", extra="x")
    assert not isinstance(caught.value, MissingExtraError)
    for name in ("omc_cli", "omc_clix"):
        sys.modules.pop(name, None)


def test_require_translates_only_import_errors() -> None:
    with pytest.raises(MissingExtraError):
        plugins.require("omc_absent_client", plugin="p", extra="e")
    # Anything else a module raises at import is not about extras.
    with pytest.raises(ValueError, match="Empty module name"):
        plugins.require("", plugin="p", extra="e")


def test_every_installed_plugin_lists_a_version_editable_installs_included() -> None:
    # An editable install lists no modules of its distribution, so the version comes
    # from the distribution whose entry point registered the plugin.
    import omconnect
    from omconnect.runtime.plugin_listing import list_plugins

    listed = [p for p in list_plugins() if p.problem is None]
    assert listed, "the built-in plugins are installed"
    unknown = [f"{p.kind} {p.name}" for p in listed if p.version in (None, "unknown")]
    assert not unknown, f"no version for {unknown}"
    builtin = {p.name: p.version for p in listed if p.kind in ("transport", "converter")
               and p.class_name.startswith(("omconnect.", "omconnect_kafka."))}
    assert builtin["embedded"] == builtin["json"] == omconnect.__version__


def test_a_plugin_without_a_version_of_its_own_takes_its_registering_distributions() -> None:
    class Registered:
        version = "2.3.4"

    plain = type("Plain", (), {"__module__": "nowhere_installed.plugin"})
    assert plugins.plugin_version(plain, Registered()) == "2.3.4"
    assert plugins.plugin_version(plain) == "unknown"
    versioned = type("Versioned", (), {"__module__": "nowhere_installed.plugin",
                                       "__version__": "9.9"})
    assert plugins.plugin_version(versioned, Registered()) == "9.9"
