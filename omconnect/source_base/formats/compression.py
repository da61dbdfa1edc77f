"""Decompression of objects by name: ``.gz``, ``.zst``, ``.bz2``, ``.xz``.

``open_decompressed(name, raw)`` wraps a binary stream in the matching streaming
decompressor (nothing is read up front). zstd needs the ``zstandard`` package (the
``objectstore`` extra); the others come with Python.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
from typing import IO, cast

from omconnect.errors import ConfigError
from omconnect.plugins import require

__all__ = ["COMPRESSIONS", "compression_for", "open_decompressed", "strip_compression"]

_SUFFIXES = {".gz": "gzip", ".gzip": "gzip", ".zst": "zstd", ".zstd": "zstd",
             ".bz2": "bz2", ".xz": "xz"}

COMPRESSIONS = ("auto", "none", "gzip", "zstd", "bz2", "xz")
"""Values of ``file.compression.type``: ``auto`` picks by the name's extension."""


def compression_for(name: str) -> str:
    """The compression an object name's extension implies (``"none"`` if none)."""
    lower = name.lower()
    for suffix, kind in _SUFFIXES.items():
        if lower.endswith(suffix):
            return kind
    return "none"


def strip_compression(name: str) -> str:
    """``name`` without a compression extension (``a.jsonl.gz`` -> ``a.jsonl``)."""
    lower = name.lower()
    for suffix in _SUFFIXES:
        if lower.endswith(suffix):
            return name[: -len(suffix)]
    return name


def open_decompressed(name: str, raw: IO[bytes], compression: str = "auto") -> IO[bytes]:
    """``raw`` decompressed as its name (or ``compression``) says; ``raw`` itself when
    it is not compressed. Closing the result does not close ``raw``.

    Args:
        name: The object's name; its extension decides under ``"auto"``.
        raw: The object's bytes.
        compression: One of :data:`COMPRESSIONS`.

    Raises:
        ConfigError: An unknown compression (names ``file.compression.type``).
        MissingExtraError: zstd without the ``zstandard`` package.

    """
    kind = compression_for(name) if compression == "auto" else compression
    if kind == "none":
        return raw
    if kind == "gzip":
        return cast(IO[bytes], gzip.GzipFile(fileobj=raw, mode="rb"))
    if kind == "bz2":
        return cast(IO[bytes], bz2.BZ2File(raw, mode="rb"))
    if kind == "xz":
        return cast(IO[bytes], lzma.LZMAFile(raw, mode="rb"))
    if kind == "zstd":
        zstandard = require("zstandard", plugin="zstd decompression", extra="objectstore")
        reader = zstandard.ZstdDecompressor().stream_reader(raw, closefd=False)
        return cast(IO[bytes], io.BufferedReader(reader, buffer_size=1 << 16))
    raise ConfigError(
        f"unknown compression {compression!r}; file.compression.type must be one of "
        f"{', '.join(COMPRESSIONS)}", key="file.compression.type")
