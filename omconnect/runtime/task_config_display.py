"""Showing task configs as written: values copied from a connector config key that
holds ``${...}`` references are shown as those references (Kafka Connect's reverse
transform), so a resolved secret never leaves the worker through ``/tasks``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from omconnect.config.providers import ResolvedConfig
from omconnect.config.types import Password

__all__ = ["as_written"]


def as_written(task_config: Mapping[str, Any], resolved: ResolvedConfig | None
               ) -> dict[str, Any]:
    """``task_config`` with each value copied from a key of the connector's config that
    holds references shown as that key's references.
    """
    if not resolved or not resolved.references:
        return dict(task_config)
    out = {}
    for key, value in task_config.items():
        if key in resolved.references and _plain(value) == _plain(resolved.get(key)):
            out[key] = resolved.references[key]
        else:
            out[key] = value
    return out


def _plain(value: Any) -> Any:
    if isinstance(value, Password):
        return value.value()
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value if value is None or isinstance(value, str) else str(value)
