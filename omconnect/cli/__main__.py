"""``python -m omconnect.cli``: the ``omconnect`` command."""

from omconnect.cli import console

console()
