"""RecordFormat: the records in an object's bytes.

A record format reads a binary stream (never all at once: objects may be far larger than
memory) and yields one :class:`ParsedRecord` per record. Each carries its position
(``number``) so that errors can name it, the record key and value with their schemas, or
the :class:`~omconnect.errors.DataError` that made the record unreadable.

A malformed record does not raise: it is yielded with ``error`` set, and the caller
decides per ``errors.tolerance`` (fail naming the object and ``number``, or skip it).
Every yielded item counts as one record for ``skip``, errors included, so a resume with
``skip=n`` continues exactly after the n-th item of an earlier read of the same bytes.
For text formats (JSON lines, CSV) a bad record is skipped and reading goes on; for
binary formats (Avro, Parquet) an unreadable file yields one error item and ends.
"""

from __future__ import annotations

import abc
import enum
from collections.abc import Iterator
from typing import IO, Any, ClassVar, NamedTuple

from omconnect.data.schema import STRING_SCHEMA, Schema, Type
from omconnect.data.struct import SchemaAndValue
from omconnect.errors import ConfigError, DataError

__all__ = ["KeySource", "ParsedBatch", "ParsedRecord", "RecordFormat"]


class ParsedRecord(NamedTuple):
    """One record read from an object.

    Attributes:
        number: Where it is: the 1-based line for text formats (JSON lines, CSV: the line
            the record starts on), else the 1-based record (or chunk) number.
        key: The record key with its schema, or ``None``.
        value: The record value with its schema (``None`` when ``error`` is set).
        error: Why the record could not be read, or ``None``.

    """

    number: int
    key: SchemaAndValue | None
    value: SchemaAndValue | None
    error: DataError | None = None


class ParsedBatch(NamedTuple):
    """Consecutive records of one object as Arrow columns (formats that read columns:
    :attr:`RecordFormat.reads_columns`).

    Attributes:
        number: The first row's number (as :attr:`ParsedRecord.number`; for CSV, counted
            as one line per row, see :mod:`~omconnect.source_base.formats.csv_columns`).
        rows: A ``pyarrow.RecordBatch`` with a ``value`` column (and a ``key`` column
            unless the records have no key): what
            :class:`~omconnect.columnar.SourceBatch` takes.
        key_schema: The keys' schema (``None`` without keys).
        value_schema: The values' schema.

    """

    number: int
    rows: Any
    key_schema: Schema | None
    value_schema: Schema

    @property
    def num_rows(self) -> int:
        """How many records."""
        return int(self.rows.num_rows)


_new_record = tuple.__new__


def record(number: int, key: SchemaAndValue | None, value: SchemaAndValue) -> ParsedRecord:
    """A good :class:`ParsedRecord` (the fast constructor for formats)."""
    return _new_record(ParsedRecord, (number, key, value, None))


def failed(number: int, error: DataError) -> ParsedRecord:
    """A :class:`ParsedRecord` for a record that could not be read."""
    return _new_record(ParsedRecord, (number, None, None, error))


class KeySource(enum.Enum):
    """Where a record format takes each record's key from."""

    OBJECT = "object"
    """The object's name, as a STRING: every record of an object gets the same key, so
    they stay together (and in order) on one transport partition."""
    FIELD = "field"
    """A field of the value (``record.key.field``), with that field's schema."""
    NONE = "none"
    """No key."""


class RecordFormat(abc.ABC):
    """Turns an object's bytes into records (see the module docstring).

    Instances hold configuration only: one may read many objects, one after another or
    interleaved.

    Args:
        key_source: Where each record's key comes from.
        key_field: The value field used as key when ``key_source`` is ``FIELD``.

    Raises:
        ConfigError: ``key_field`` missing for ``FIELD``.

    """

    name: ClassVar[str]
    """The ``input.format`` value that selects this record format."""

    supports_key_field: ClassVar[bool] = True

    reads_columns: ClassVar[bool] = False
    """Whether :meth:`batches` gives Arrow columns (else it gives :meth:`records`)."""

    def __init__(self, *, key_source: KeySource = KeySource.OBJECT,
                 key_field: str | None = None) -> None:
        if key_source is KeySource.FIELD:
            if not self.supports_key_field:
                raise ConfigError(
                    f"input.format={self.name} has no fields to take a key from; set "
                    "record.key to object or none", key="record.key")
            if not key_field:
                raise ConfigError("record.key=field needs record.key.field, the value "
                                  "field to use as key", key="record.key.field")
        self.key_source = key_source
        self.key_field = key_field

    def records(
        self, stream: IO[bytes], *, object_name: str = "", skip: int = 0
    ) -> Iterator[ParsedRecord]:
        """The records of one object, after the first ``skip`` of them.

        Args:
            stream: The object's bytes (decompressed: see
                :func:`~omconnect.source_base.formats.open_decompressed`). Read lazily;
                the caller closes it.
            object_name: The object's name: the key under ``KeySource.OBJECT`` and the
                ``object`` in error messages.
            skip: How many records to pass over (already delivered), errors included.

        Raises:
            ValueError: ``skip`` is negative.

        """
        if skip < 0:
            raise ValueError(f"skip must be 0 or more, got {skip}")
        return self._read(stream, object_name, skip)

    @abc.abstractmethod
    def _read(self, stream: IO[bytes], object_name: str, skip: int) -> Iterator[ParsedRecord]:
        """The records after ``skip`` (a generator)."""

    def batches(
        self, stream: IO[bytes], *, object_name: str = "", skip: int = 0
    ) -> Iterator[ParsedBatch | ParsedRecord]:
        """The records of one object as :meth:`records` gives them, but runs of good
        records as :class:`ParsedBatch` columns where the format reads columns
        (:attr:`reads_columns`) and the object's types allow; malformed records stay
        :class:`ParsedRecord` items with ``error`` set, in their place. This default
        gives :meth:`records`.

        Raises:
            ValueError: ``skip`` is negative.

        """
        if skip < 0:
            raise ValueError(f"skip must be 0 or more, got {skip}")
        return self._read_batches(stream, object_name, skip)

    def _read_batches(self, stream: IO[bytes], object_name: str,
                      skip: int) -> Iterator[ParsedBatch | ParsedRecord]:
        """:meth:`batches` after its checks (a generator); override to read columns."""
        return self._read(stream, object_name, skip)

    # -- helpers for implementations -----------------------------------------------------
    def object_key(self, object_name: str) -> SchemaAndValue | None:
        """The key every record of the object gets (``None`` unless ``OBJECT``)."""
        if self.key_source is KeySource.OBJECT:
            return SchemaAndValue(STRING_SCHEMA, object_name)
        return None

    def struct_key_index(self, schema: Schema, object_name: str) -> tuple[int, Schema] | None:
        """For ``FIELD`` keys over struct values: the key field's index and schema.

        Raises:
            DataError: The value schema has no such field.

        """
        if self.key_source is not KeySource.FIELD:
            return None
        assert self.key_field is not None
        if schema.type is not Type.STRUCT or not schema.has_field(self.key_field):
            fields = ", ".join(f.name for f in schema.fields) or "none"
            raise DataError(
                f"record.key.field {self.key_field!r} is not a field of the records "
                f"(fields: {fields})", object=object_name)
        field = schema.field(self.key_field)
        return field.index, field.schema

    def error(self, message: str, object_name: str, number: int, *,
              line: bool = False) -> DataError:
        """A DataError naming the object and the line or record number."""
        where = "line" if line else "record"
        return DataError(message, object=object_name or None, **{where: number})
