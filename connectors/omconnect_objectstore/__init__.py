"""The object-store source: records from the objects under a URL (a local directory,
S3, GCS, Azure and whatever else fsspec opens), on the iterator-style source base.

* ``objectstore-source`` — :class:`~omconnect_objectstore.source.ObjectStoreSourceConnector`

Formats: JSON lines, CSV, Avro, Parquet, raw bytes; compressed objects by extension.
See ``docs/connectors/objectstore.md``. Needs ``pip install 'omconnect[objectstore]'``
(fsspec) plus the fsspec implementation of remote stores (``s3fs``, ``gcsfs``, ``adlfs``).
"""

from omconnect import __version__

__all__ = ["__version__"]
