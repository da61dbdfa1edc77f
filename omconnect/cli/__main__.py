"""``python -m omconnect.cli``: the ``omconnect`` command."""

import sys

from omconnect.cli import main

sys.exit(main())
