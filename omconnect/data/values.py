"""Validation of values against schemas: :func:`validate_value`, which lives in
:mod:`omconnect.data.schema` beside the schemas it checks (importable from here too).
"""

from __future__ import annotations

from omconnect.data.schema import validate_value

__all__ = ["validate_value"]
