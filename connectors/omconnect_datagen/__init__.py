"""The data generator source (``datagen``): orders, users, pageviews or fixed-size payloads,
at a chosen rate, reproducible by seed. See :mod:`omconnect_datagen.source`.
"""

from omconnect import __version__

__all__ = ["__version__"]
