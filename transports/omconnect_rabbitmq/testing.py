"""Moved: this is now :mod:`omconnect_testbrokers.rabbitmq`.

It belongs to omconnect's own tests (the ``omconnect-testbrokers`` distribution in
``tests/brokers``), not to the SDK. This alias keeps the old imports working where that
distribution is installed, with a deprecation warning.
"""

from __future__ import annotations

import importlib
import warnings
from typing import Any

_NEW = "omconnect_testbrokers.rabbitmq"

try:
    _moved = importlib.import_module(_NEW)
except ModuleNotFoundError as exc:
    if (exc.name or "").partition(".")[0] != "omconnect_testbrokers":
        raise
    raise ModuleNotFoundError(
        f"{__name__} moved to {_NEW}, which is not installed: pip install -e "
        "tests/brokers (from an omconnect checkout)", name=__name__) from exc

__all__: list[str] = list(_moved.__all__)

warnings.warn(f"{__name__} moved to {_NEW}; import it from there", DeprecationWarning,
              stacklevel=2)


def __getattr__(name: str) -> Any:
    return getattr(_moved, name)
