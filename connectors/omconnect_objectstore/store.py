"""The object store as the source sees it: a listing of objects under a URL, and their
bytes, through fsspec.

``objectstore.url`` names the root: ``file:///data/in`` or a plain path for a local
directory, ``s3://bucket/prefix``, ``gs://bucket/prefix``, ``abfs://container/prefix``...
(each remote protocol needs its fsspec implementation: ``s3fs``, ``gcsfs``, ``adlfs``).
An object's *name* is its path relative to the root, with ``/`` separators
(``2024/05/orders.csv``): names are what the offsets, the distribution over tasks and
the filters see, so moving the root to another URL keeps the names.

An object's *version* tells a rewritten object from an unchanged one: the store's ETag
(S3, GCS, Azure), else the inode number (local files, so a file replaced by a rename is
a new version), else nothing (the size alone is compared).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable, Mapping
from typing import IO, Any

import attrs

from omconnect.errors import ConfigError
from omconnect.plugins import require

__all__ = ["ObjectInfo", "ObjectStore", "glob_filter"]

_log = logging.getLogger(__name__)

_VERSION_FIELDS = ("ETag", "etag", "generation", "ino")
"""Fields of fsspec's info dicts that identify a version of an object, by preference."""


@attrs.frozen(slots=True)
class ObjectInfo:
    """One object of a listing.

    Attributes:
        name: Its path relative to the root (``/`` separated).
        size: Its size in bytes.
        version: What identifies this version of it (ETag, inode), or ``None``.

    """

    name: str
    size: int
    version: str | None = None


def _version(info: Mapping[str, Any]) -> str | None:
    for field in _VERSION_FIELDS:
        value = info.get(field)
        if value is not None and value != "":
            return str(value)
    return None


def glob_filter(pattern: str | None) -> Callable[[str], bool] | None:
    """A test of object names for ``objectstore.name.glob``, or ``None`` for no filter.

    ``*`` and ``?`` do not cross ``/``; ``**`` does (``**/`` also matches no directory);
    ``[abc]`` and ``[!abc]`` are character classes. A pattern without ``/`` is matched
    against the last part of the name (``*.csv`` takes ``a/b.csv``), one with ``/``
    against the whole name.

    Raises:
        ConfigError: The pattern cannot be compiled.

    """
    if not pattern:
        return None
    regex = _glob_regex(pattern)
    try:
        compiled = re.compile(regex)
    except re.error as exc:
        raise ConfigError(f"objectstore.name.glob {pattern!r} is not a valid glob: {exc}",
                          key="objectstore.name.glob") from None
    match = compiled.fullmatch
    if "/" in pattern:
        return lambda name: match(name) is not None
    return lambda name: match(name.rpartition("/")[2]) is not None


def _glob_regex(pattern: str) -> str:
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        char = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif char == "*":
            out.append("[^/]*")
            i += 1
        elif char == "?":
            out.append("[^/]")
            i += 1
        elif char == "[":
            end = pattern.find("]", i + 2 if pattern[i + 1:i + 2] in ("!", "]") else i + 1)
            if end < 0:
                out.append(re.escape(char))
                i += 1
                continue
            body = pattern[i + 1:end]
            if body.startswith("!"):
                body = "^" + body[1:]
            out.append("[" + body.replace("\\", "\\\\") + "]")
            i = end + 1
        else:
            out.append(re.escape(char))
            i += 1
    return "".join(out)


class ObjectStore:
    """Lists and opens the objects under a URL with fsspec (the ``objectstore`` extra).

    Args:
        url: The root (``objectstore.url``).
        storage_options: Passed to the fsspec filesystem (credentials, endpoint, ...).
        recursive: List objects in sub-directories (prefixes) too.
        name_filter: Keeps only the names it accepts (``objectstore.name.glob``).

    Raises:
        ConfigError: The URL's protocol is unknown, or its fsspec implementation is not
            installed (names ``objectstore.url`` and the package to install).
        MissingExtraError: fsspec itself is not installed.

    """

    def __init__(self, url: str, storage_options: Mapping[str, Any] | None = None, *,
                 recursive: bool = True,
                 name_filter: Callable[[str], bool] | None = None) -> None:
        fsspec = require("fsspec", plugin="objectstore-source", extra="objectstore")
        try:
            fs, path = fsspec.core.url_to_fs(url, **dict(storage_options or {}))
        except ImportError as exc:
            raise ConfigError(f"objectstore.url {url!r} needs a package that is not "
                              f"installed: {exc}", key="objectstore.url") from exc
        except (ValueError, TypeError) as exc:
            raise ConfigError(f"objectstore.url {url!r} cannot be opened: {exc}; use a URL "
                              "such as file:///data/in or s3://bucket/prefix (options in "
                              "objectstore.storage.options.*)", key="objectstore.url") from exc
        self.fs: Any = fs
        self.root: str = path.rstrip("/") if path != "/" else path
        self.location: str = fs.unstrip_protocol(self.root)
        """The root as a canonical URL (``file:///data/in``): the offsets' ``url``."""
        self.recursive = recursive
        self._filter = name_filter
        self._prefix = self.root.rstrip("/") + "/"

    def list(self) -> list[ObjectInfo]:
        """The objects under the root that pass the filter, sorted by name.

        Raises:
            FileNotFoundError: The root does not exist.
            OSError: The store could not be listed.

        """
        fs = self.fs
        fs.invalidate_cache(self.root)
        infos: Iterable[Mapping[str, Any]]
        if self.recursive:
            found: Mapping[str, Mapping[str, Any]] = fs.find(self.root, detail=True)
            infos = found.values()
        else:
            infos = [i for i in fs.ls(self.root, detail=True) if i.get("type") == "file"]
        prefix = self._prefix
        accept = self._filter
        objects: list[ObjectInfo] = []
        for info in infos:
            path = str(info["name"])
            if not path.startswith(prefix):
                path = fs._strip_protocol(path)
                if not path.startswith(prefix):
                    continue
            name = path[len(prefix):]
            if not name or (accept is not None and not accept(name)):
                continue
            objects.append(ObjectInfo(name, int(info.get("size") or 0), _version(info)))
        if not objects and not fs.exists(self.root):
            raise FileNotFoundError(f"{self.location} does not exist")
        objects.sort(key=lambda o: o.name)
        return objects

    def open(self, name: str) -> IO[bytes]:
        """Object ``name``'s bytes: a seekable binary file (the caller closes it).

        Raises:
            FileNotFoundError: It no longer exists.

        """
        stream: IO[bytes] = self.fs.open(self._prefix + name, "rb")
        return stream

    def url(self, name: str) -> str:
        """Object ``name``'s full URL (for messages)."""
        return self.location.rstrip("/") + "/" + name
