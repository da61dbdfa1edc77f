"""Kafka Connect's file connectors: a file's lines into a topic, a topic's values into a file.

* ``file-source`` — :class:`~omconnect_file.source.FileStreamSourceConnector`
* ``file-sink`` — :class:`~omconnect_file.sink.FileStreamSinkConnector`

Both take Kafka Connect's settings, so ``connect-file-source.properties`` and
``connect-file-sink.properties`` run unchanged.
"""

from omconnect import __version__

__all__ = ["__version__"]
