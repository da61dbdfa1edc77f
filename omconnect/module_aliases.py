"""Old import paths of modules that moved, kept working: :func:`alias_modules`.

An alias is resolved when it is first imported: ``import old.path.module`` imports the
module's new path and binds the same module object under the old name (no copy; classes
keep their new ``__module__``), with a :class:`DeprecationWarning` naming the new path.
Submodules of a moved package follow (``old.pkg.sub`` → ``new.pkg.sub``).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import warnings
from collections.abc import Callable, Mapping, Sequence
from types import ModuleType
from typing import Any

__all__ = ["INSTALL_HINTS", "MOVED_MODULES", "alias_modules", "renamed"]


MOVED_MODULES: dict[str, str] = {
    # The in-core transports and the driver kit joined the SPI in omconnect.transport.
    "omconnect.transports.memory": "omconnect.transport.memory",
    "omconnect.transports.embedded": "omconnect.transport.embedded",
    "omconnect.transports.checks": "omconnect.transport.kit.checks",
    "omconnect.transports.grouping": "omconnect.transport.kit.grouping",
    "omconnect.transports.logconsumer": "omconnect.transport.kit.log_consumer",
    "omconnect.transports.partitioning": "omconnect.transport.kit.partitioning",
    "omconnect.transports": "omconnect.transport",
    # The iterator-style source base, its record formats and its offset manager.
    "omconnect.source.transformers": "omconnect.source_base.formats",
    "omconnect.source.offsets": "omconnect.source_base.offset_manager",
    "omconnect.source": "omconnect.source_base",
    # The CI broker launchers left the SDK for omconnect's own tests (tests/brokers).
    "omconnect_kafka.testing": "omconnect_testbrokers.kafka",
    "omconnect_rabbitmq.testing": "omconnect_testbrokers.rabbitmq",
    "omconnect_pulsar.testing": "omconnect_testbrokers.pulsar",
    "omconnect.testing.broker_handles": "omconnect_testbrokers.handles",
}
"""Old module name → new module name; installed when :mod:`omconnect` is imported."""

INSTALL_HINTS: dict[str, str] = {
    "omconnect_testbrokers": "pip install -e tests/brokers (from an omconnect checkout)",
}
"""How to install the distribution of a new module that may be missing, by its top-level
package: importing the old name then fails with a :class:`ModuleNotFoundError` that
names the old module and says this.
"""


class _AliasFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds the old names of moved modules and loads them as their new modules."""

    def __init__(self, moves: Mapping[str, str]) -> None:
        # Longest old name first, so a moved submodule wins over its moved package.
        self.moves = sorted(moves.items(), key=lambda item: -len(item[0]))

    def target(self, fullname: str) -> str | None:
        """The new name of the module once called ``fullname``, if it moved."""
        for old, new in self.moves:
            if fullname == old or fullname.startswith(old + "."):
                return new + fullname[len(old):]
        return None

    def find_spec(self, fullname: str, path: Sequence[str] | None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        """A spec for ``fullname`` when it is the old name of a moved module."""
        if self.target(fullname) is None:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        """The moved module itself (its own name and spec are left as they are)."""
        new = self.target(spec.name)
        assert new is not None
        try:
            module = importlib.import_module(new)
        except ModuleNotFoundError as exc:
            top = new.partition(".")[0]
            hint = INSTALL_HINTS.get(top)
            if hint is None or (exc.name or "").partition(".")[0] != top:
                raise
            raise ModuleNotFoundError(f"{spec.name} moved to {new}, which is not installed: "
                                      f"{hint}", name=spec.name) from exc
        warnings.warn(f"{spec.name} moved to {new}; import it from there",
                      DeprecationWarning, stacklevel=2)
        return module

    def exec_module(self, module: ModuleType) -> None:
        """Nothing to run: the module ran when its new name was imported."""


def alias_modules(moves: Mapping[str, str]) -> None:
    """Make each old module name in ``moves`` import its new module (old → new); once
    per process, however often ``omconnect`` is imported again.
    """
    finder = _AliasFinder(moves)
    if not any(isinstance(f, _AliasFinder) and f.moves == finder.moves for f in sys.meta_path):
        sys.meta_path.insert(0, finder)


def renamed(module: str, names: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` serving renamed names of ``module`` (old → new).

    Each old name warns (:class:`DeprecationWarning`) and gives the object of the new
    one::

        __getattr__ = renamed(__name__, {"CsvTransformer": "CsvFormat"})
    """

    def __getattr__(name: str) -> Any:
        new = names.get(name)
        if new is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        warnings.warn(f"{module}.{name} is now {new}", DeprecationWarning, stacklevel=2)
        return getattr(sys.modules[module], new)

    return __getattr__
