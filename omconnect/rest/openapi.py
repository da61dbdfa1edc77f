"""The OpenAPI document of the REST API, as committed in ``specs/rest-api.yaml``.

Regenerate it after changing the API::

    python -m omconnect.rest.openapi > specs/rest-api.yaml

``tests/rest/test_openapi.py`` fails when the committed file and the code differ.
"""

from __future__ import annotations

import sys
from typing import Any

import yaml

from omconnect.rest.app import build_app

__all__ = ["document", "document_yaml", "main"]


def document() -> dict[str, Any]:
    """The OpenAPI document generated from the code."""
    return build_app().openapi()


def document_yaml() -> str:
    """:func:`document` as YAML (keys in FastAPI's order)."""
    header = ("# The omconnect REST API. Generated from the code; do not edit.\n"
              "# Regenerate: python -m omconnect.rest.openapi > specs/rest-api.yaml\n")
    return header + yaml.safe_dump(document(), sort_keys=False, allow_unicode=True,
                                   width=100)


def main() -> None:
    """Print the document as YAML."""
    sys.stdout.write(document_yaml())


if __name__ == "__main__":
    main()
