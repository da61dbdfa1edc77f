"""Sinks for development and measurement.

* ``console`` — :class:`~omconnect_console.console.ConsoleSinkConnector` prints each record
  (topic, partition, offset, key, value) to standard output.
* ``null`` — :class:`~omconnect_console.null.NullSinkConnector` counts records and
  discards them: the cheapest possible sink, to measure the rest of a pipeline.
"""

from omconnect import __version__

__all__ = ["__version__"]
