"""The offset of one object: where it is (key) and how far the source got (data).

========  ==========================================================================
key       ``{"url": "<root URL>", "object": "<name relative to it>"}``
data      ``{"records": n, "done": bool, "size": bytes, "version": "<etag or inode>"}``
========  ==========================================================================

``records`` counts the records read from the object, malformed ones included, so a
restart passes over exactly that many (``skip``) and resumes at the next one; ``done``
is set on the last record, so a finished object is not opened again. ``size`` and
``version`` describe the object as listed when it was read: a later listing that
differs tells how it changed (see :class:`Change`). ``version`` is absent when the store
gives nothing better than the size.
"""

from __future__ import annotations

import enum
from typing import Self

from omconnect.records import JsonScalar
from omconnect.source_base import OffsetManagerEntry
from omconnect_objectstore.store import ObjectInfo

__all__ = ["Change", "ObjectEntry", "object_key"]


class Change(enum.Enum):
    """How a listed object compares with what its offset recorded."""

    UNCHANGED = "unchanged"
    """Same size and version: resume after ``records`` (or skip it when done)."""
    GROWN = "grown"
    """Larger, same version (a file appended to, e.g. still being written): resume after
    ``records``."""
    TRUNCATED = "truncated"
    """Smaller than when it was read: read it again from the start (with a warning)."""
    REPLACED = "replaced"
    """Another version (a new ETag, a file renamed over it): read it again from the
    start (with a warning)."""


def object_key(location: str, name: str) -> dict[str, JsonScalar]:
    """The key map of object ``name`` under the root URL ``location``."""
    return {"url": location, "object": name}


class ObjectEntry(OffsetManagerEntry):
    """The offset entry of one object (see the module docstring)."""

    __slots__ = ()

    @classmethod
    def new(cls, location: str, info: ObjectInfo) -> Self:
        """The entry of an object not read yet."""
        data: dict[str, JsonScalar] = {"records": 0, "done": False, "size": info.size}
        if info.version is not None:
            data["version"] = info.version
        return cls(object_key(location, info.name), data)

    @property
    def records(self) -> int:
        """How many records were read (malformed ones included)."""
        return self.get_int("records", 0) or 0

    @property
    def done(self) -> bool:
        """Whether the object was read to its end."""
        return bool(self.get_bool("done", False))

    @property
    def size(self) -> int | None:
        """The object's size when it was read, if recorded."""
        return self.get_int("size")

    @property
    def version(self) -> str | None:
        """The object's version when it was read, if the store gives one."""
        return self.get_str("version")

    def change(self, info: ObjectInfo) -> Change:
        """How the listed object ``info`` differs from what this entry recorded."""
        version = self.version
        if version is not None and info.version is not None and version != info.version:
            return Change.REPLACED
        size = self.size
        if size is None or info.size == size:
            return Change.UNCHANGED
        return Change.GROWN if info.size > size else Change.TRUNCATED

    def resume(self, info: ObjectInfo) -> None:
        """Note that the object grew to ``info.size``: it is not done any more."""
        self.set("done", False)
        self.set("size", info.size)
