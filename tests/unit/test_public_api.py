"""The public surface: every ``__all__`` lists exactly what exists, each name documented.

* Every name in any ``__all__`` exists (lazily loaded names included).
* A package's ``__all__`` lists every public object it offers from its own modules
  (classes, functions and constants; what it imports from elsewhere for its own use,
  ``typing.Any`` or an error class, is not offered). A package that offers nothing may
  leave ``__all__`` out.
* Every exported class and function has a docstring of its own, and so has every module.
"""

from __future__ import annotations
import __future__

import importlib
import inspect
import pkgutil
import types
from typing import Any

import pytest

import omconnect


def _modules() -> list[str]:
    names = ["omconnect"]
    for info in pkgutil.walk_packages(omconnect.__path__, "omconnect."):
        if info.name.split(".")[-1].startswith("_"):
            continue
        names.append(info.name)
    return sorted(names)


MODULES = _modules()
PACKAGES = [name for name in MODULES
            if hasattr(importlib.import_module(name), "__path__")]


def _defined_under(value: Any, package: str) -> bool:
    module = getattr(value, "__module__", None) if (
        inspect.isclass(value) or inspect.isfunction(value)) else type(value).__module__
    return isinstance(module, str) and (module == package or module.startswith(package + "."))


def _offered(package: types.ModuleType) -> set[str]:
    """The public objects a package offers from its own modules (not its submodules, nor
    what it imports from elsewhere for its own use).
    """
    return {
        name for name, value in vars(package).items()
        if not name.startswith("_") and not isinstance(value, types.ModuleType)
        and not isinstance(value, __future__._Feature)
        and _defined_under(value, package.__name__)
    }


def test_the_walk_found_the_spine() -> None:
    for name in ("omconnect.config", "omconnect.connector", "omconnect.data",
                 "omconnect.transport", "omconnect.errors", "omconnect.plugins"):
        assert name in MODULES


@pytest.mark.parametrize("name", MODULES)
def test_every_name_in_all_exists(name: str) -> None:
    module = importlib.import_module(name)
    exported = getattr(module, "__all__", [])
    assert len(exported) == len(set(exported)), f"{name}.__all__ lists a name twice"
    missing = [n for n in exported if not hasattr(module, n)]
    assert not missing, f"{name}.__all__ lists names that do not exist: {missing}"


@pytest.mark.parametrize("name", PACKAGES)
def test_a_packages_all_lists_everything_it_offers(name: str) -> None:
    package = importlib.import_module(name)
    offered = _offered(package)
    exported = set(getattr(package, "__all__", []))
    unlisted = sorted(offered - exported)
    assert not unlisted, f"{name} offers names missing from its __all__: {unlisted}"


def _documented(obj: Any) -> bool:
    doc = obj.__dict__.get("__doc__") if inspect.isclass(obj) else getattr(obj, "__doc__", None)
    return bool(doc and doc.strip())


@pytest.mark.parametrize("name", MODULES)
def test_every_exported_class_and_function_has_a_docstring(name: str) -> None:
    module = importlib.import_module(name)
    assert module.__doc__ and module.__doc__.strip(), f"module {name} has no docstring"
    undocumented = [
        attr for attr in getattr(module, "__all__", [])
        if (inspect.isclass(value := getattr(module, attr)) or inspect.isfunction(value))
        and not _documented(value)
    ]
    assert not undocumented, f"{name} exports names without a docstring: {undocumented}"


def test_the_top_level_offers_what_connector_authors_need() -> None:
    for name in ("SourceConnector", "SourceTask", "SinkConnector", "SinkTask", "SourceRecord",
                 "SinkRecord", "ConfigDef", "ConfigType", "Schema", "SchemaBuilder", "Struct",
                 "ConfigError", "RetriableError"):
        assert name in omconnect.__all__
    assert isinstance(omconnect.__version__, str)
