"""docs/transforms.md lists every built-in transform and predicate, its Kafka Connect
name and its options, so the table cannot silently fall behind the code."""

from pathlib import Path

import pytest

from omconnect import plugins

DOC = (Path(__file__).parents[2] / "docs" / "transforms.md").read_text()


def builtins(group):
    return sorted((name, ep) for name, ep in plugins.available(group).items()
                  if ep.value.startswith("omconnect.transforms."))


@pytest.mark.parametrize("group", [plugins.TRANSFORMS, plugins.PREDICATES])
def test_every_builtin_is_documented_with_its_options(group):
    entries = builtins(group)
    assert entries, "the built-in entry points are not installed (uv pip install -e .)"
    for name, entry_point in entries:
        assert f"`{name}`" in DOC
        for option in entry_point.load().config_def:
            assert f"`{option.name}`" in DOC, f"{name}: option {option.name} is not documented"


@pytest.mark.parametrize("group", [plugins.TRANSFORMS, plugins.PREDICATES])
def test_every_kafka_connect_name_resolves_to_a_documented_builtin(group):
    names = {name for name, _ in builtins(group)}
    prefix = "org.apache.kafka.connect.transforms." + (
        "predicates." if group == plugins.PREDICATES else "")
    aliases = {alias: target for alias, target in plugins._ALIASES[group].items()
               if target in names}
    assert {target for target in aliases.values()} == names  # each has Kafka Connect names
    for alias, target in aliases.items():
        if not alias.startswith("org."):
            assert aliases[prefix + alias] == target
            assert f"`{alias}`" in DOC
        assert plugins.load(group, alias) is plugins.load(group, target)
