"""The product's modules stand on floors: each imports only what stands on its own floor or
below (:data:`FLOORS`, drawn the same way in ``docs/architecture.md``), and no import
loop, on one floor or across them.

Every way a module reaches another counts: ``import`` statements at any depth (a deferred
import inside a function that closes a loop only hides it, and one that runs up a floor
is still a dependency), ``importlib.import_module("literal")`` and ``__import__`` calls,
an f-string argument naming a package (``f"omconnect.runtime.{home}"``: every module of
that package named by a string in the file), ``"module:attribute"`` strings (the import
paths that tables of formats and drivers hold), and dotted module names held in a table
of a module that imports by a computed name. Entry-point group names
(``"omconnect.converters"``) are names, not imports. Only ``if TYPE_CHECKING:`` blocks
are left out: they never run.
"""

from __future__ import annotations

import ast
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TREES = [ROOT / "omconnect", *sorted((ROOT / "transports").glob("omconnect_*")),
         *sorted((ROOT / "connectors").glob("*omconnect*"))]

FLOORS: list[list[str]] = [
    # The ground: errors, config, the data model, records, plugin discovery.
    ["omconnect.errors", "omconnect._builders"],
    ["omconnect.config", "omconnect.data"],
    ["omconnect.records", "omconnect.plugins"],
    # Arrow batches beside the per-record objects.
    ["omconnect.columnar"],
    # The two SPIs (what a connector implements, what a transport implements, with the
    # argument checks every transport shares and opening a configured one), converters
    # and transforms.
    ["omconnect.connector", "omconnect.transport.spi", "omconnect.transport.messages",
     "omconnect.transport.message_batches", "omconnect.transport.capabilities",
     "omconnect.transport.kit.checks", "omconnect.transport.opening",
     "omconnect.converters", "omconnect.transforms"],
    # The faces plugins import from.
    ["omconnect", "omconnect.transport"],
    # Built on the SPIs: the driver kit, the iterator-style source base.
    ["omconnect.transport.kit", "omconnect.source_base"],
    # Transports and connectors.
    ["omconnect.transport.embedded", "omconnect.transport.memory", "omconnect_kafka",
     "omconnect_rabbitmq", "omconnect_pulsar", "omconnect_redis", "omconnect_nats",
     "omconnect_console", "omconnect_datagen", "omconnect_file", "omconnect_objectstore"],
    # The Spark adapter: transports and converters, nothing of the runtime.
    ["omconnect_spark"],
    ["pyspark_omconnect"],
    # The runtime (worker, herder, task runners), then what stands on it.
    ["omconnect.runtime"],
    ["omconnect.rest", "omconnect.testing"],
    ["omconnect.cli"],
]
"""The floors, ground first. A module stands on the floor of the longest name listed here
that is itself or a package containing it."""


def _modules() -> dict[str, Path]:
    found = {}
    for tree in TREES:
        for path in tree.rglob("*.py"):
            parts = list(path.relative_to(tree.parent).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


MODULES = _modules()


def _entry_point_groups() -> set[str]:
    groups: set[str] = set()
    for pyproject in [ROOT / "pyproject.toml", *ROOT.glob("*/*/pyproject.toml")]:
        project = tomllib.loads(pyproject.read_text()).get("project", {})
        groups.update(project.get("entry-points", {}))
    return groups


ENTRY_POINT_GROUPS = _entry_point_groups()


def _owner(name: str) -> str | None:
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _is_import_call(node: ast.Call) -> bool:
    name = ast.unparse(node.func)
    return name in ("importlib.import_module", "import_module", "__import__")


def _docstrings(tree: ast.Module) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (isinstance(body, list) and body and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant)):
            found.add(id(body[0].value))
    return found


def _string_targets(tree: ast.Module, skipped: set[int]) -> Iterator[str]:
    """The module names ``tree`` imports by string (see the module docstring)."""
    docstrings = _docstrings(tree)
    strings = [node for node in ast.walk(tree)
               if id(node) not in skipped and id(node) not in docstrings
               and isinstance(node, ast.Constant) and isinstance(node.value, str)]
    calls = [node for node in ast.walk(tree)
             if id(node) not in skipped and isinstance(node, ast.Call) and _is_import_call(node)]
    computed = False
    for call in calls:
        argument = call.args[0] if call.args else None
        if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
            yield argument.value
        elif isinstance(argument, ast.JoinedStr) and argument.values and isinstance(
                prefix := argument.values[0], ast.Constant) and str(prefix.value).endswith("."):
            yield from (f"{prefix.value}{s.value}" for s in strings
                        if f"{prefix.value}{s.value}" in MODULES)
        else:
            computed = True
    tables = {id(element) for node in ast.walk(tree)
              if isinstance(node, ast.Dict | ast.List | ast.Tuple | ast.Set)
              for element in (node.values if isinstance(node, ast.Dict) else node.elts)}
    for node in strings:
        value = node.value
        module, colon, attribute = value.partition(":")
        if "." not in module or module in ENTRY_POINT_GROUPS:
            continue
        if (colon and attribute.isidentifier() and module in MODULES) or (
                computed and id(node) in tables and value in MODULES):
            yield module


def _imports(module: str, path: Path) -> Iterator[tuple[str, int]]:
    """The first-party modules ``module`` imports, with the line of each import."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    tree = ast.parse(path.read_text())
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped.update(id(n) for n in ast.walk(node))
    found: list[tuple[str, int]] = []
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([node.module] if node.module else [])])
            names = [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base
                     for a in node.names]
        else:
            continue
        found.extend((name, node.lineno) for name in names)
    found.extend((name, 0) for name in _string_targets(tree, skipped))
    for name, line in found:
        owner = _owner(name)
        if owner is not None and owner != module:
            yield owner, line


GRAPH = {module: {target for target, _ in _imports(module, path)}
         for module, path in MODULES.items()}


def _unit(module: str) -> str:
    """The longest name in :data:`FLOORS` that is ``module`` or a package holding it."""
    named = module
    while named:
        if any(named in floor for floor in FLOORS):
            return named
        named = named.rpartition(".")[0]
    raise AssertionError(f"{module} stands on no floor: add it (or its package) to FLOORS")


def _floor(module: str) -> int:
    unit = _unit(module)
    return next(number for number, floor in enumerate(FLOORS) if unit in floor)


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_modules_have_no_import_loop() -> None:
    assert len(GRAPH) > 200  # the whole tree was read
    assert _cycles(GRAPH) == []


def test_the_packages_on_a_floor_have_no_import_loop_either() -> None:
    units: dict[str, set[str]] = {}
    for module, targets in GRAPH.items():
        units.setdefault(_unit(module), set()).update(
            _unit(target) for target in targets if _unit(target) != _unit(module))
    assert _cycles(units) == []


def test_every_module_stands_on_a_floor() -> None:
    for module in MODULES:
        _floor(module)
    named = [name for floor in FLOORS for name in floor]
    assert len(named) == len(set(named)), "a name stands on two floors"


def test_no_import_runs_up_a_floor() -> None:
    upward = sorted(
        f"{module}:{line} imports {target}"
        for module, path in MODULES.items()
        for target, line in _imports(module, path)
        if _floor(target) > _floor(module))
    assert upward == []


def test_the_floors_are_drawn_in_the_architecture_page() -> None:
    page = (ROOT / "docs" / "architecture.md").read_text()
    start = page.index("<!-- floors -->")
    drawn = page[start:page.index("<!-- /floors -->", start)]
    rows = [line.strip().removeprefix("- ").split(", ")
            for line in drawn.splitlines() if line.strip().startswith("- ")]
    assert [[name.strip("`") for name in row] for row in rows] == FLOORS[::-1]


def test_the_loop_finder_finds_a_loop() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


@pytest.mark.parametrize(("source", "expected"), [
    ("def f():\n    import omconnect.errors\n", {"omconnect.errors"}),
    ("import importlib\nimportlib.import_module('omconnect.errors')\n", {"omconnect.errors"}),
    ("import importlib\nH = {'x': 'config'}\n"
     "def f(n):\n    return importlib.import_module(f'omconnect.{H[n]}')\n",
     {"omconnect.config"}),
    ("FORMATS = {'x': 'omconnect.records:SourceRecord'}\n", {"omconnect.records"}),
    ("import importlib\nT = {'x': 'omconnect.records'}\n"
     "def f(n):\n    return importlib.import_module(T[n])\n", {"omconnect.records"}),
    ("GROUP = 'omconnect.converters'\n", set()),
    ("'''See omconnect.records:SourceRecord.'''\n", set()),
    ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import omconnect.errors\n",
     set()),
])
def test_the_graph_sees_every_way_of_importing(source: str, expected: set[str],
                                               tmp_path: Path) -> None:
    path = tmp_path / "probe.py"
    path.write_text(source)
    assert {target for target, _ in _imports("probe", path)} == expected
