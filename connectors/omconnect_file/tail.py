r"""Following a growing file line by line, by byte position, across truncation and rotation.

:class:`FileTail` reads a file in binary and splits lines itself, so every line it returns
comes with the exact byte position just after it: the offset a source commits, and the
place a restarted reader seeks to. A line ends at ``\n`` (a ``\r`` before it is dropped
too); a last line without its newline is held back until the newline arrives, since the
writer may be half way through it.

What happens when the file changes under the reader (checked each time it reaches the
end of the file and has nothing else to return):

* **Truncated** — the file is now shorter than what was read (``copytruncate``
  rotation, ``> file``): a warning, then reading starts again at byte 0. A file truncated
  and rewritten past the old size between two checks cannot be told from one that grew.
* **Rotated** — the path now names another file (another inode: ``mv`` then
  a new file, logrotate's default). The old file, still open, has been read to its end;
  its last line, if it has no newline, is returned as a line (no one will complete it).
  Then the new file is read from byte 0, with a warning. While the path names no file
  (moved away, the new one not created yet), the old file keeps being followed. Lines a
  writer appends to the old file after the reader switched are not read: writers must
  reopen the path on rotation (logrotate's ``create`` contract).

Positions belong to a file identity (:func:`file_identity`): a reader restarted with the
identity of a file that is no longer at the path (rotated while nothing was reading)
starts the new file from 0 instead of seeking into an unrelated file.
"""

from __future__ import annotations

import logging
import os
import select
from typing import BinaryIO

__all__ = ["FileTail", "Line", "LineSplitter", "StreamLines", "file_identity"]

_log = logging.getLogger(__name__)

_CHUNK = 1 << 16

Line = tuple[bytes, int]
"""A line without its terminator, and the byte position just after its newline."""


def file_identity(stat: os.stat_result) -> int:
    """A number that tells files in one directory apart: the inode number (a plain
    integer, so it survives a JSON round trip in an offset).
    """
    return stat.st_ino


class LineSplitter:
    """Splits bytes fed in arbitrary chunks into lines, tracking byte positions.

    Args:
        position: The byte position of the first byte that will be fed.

    """

    __slots__ = ("_rest", "position")

    def __init__(self, position: int = 0) -> None:
        self.position = position
        """The byte position just after the last line taken."""
        self._rest = b""

    @property
    def pending(self) -> bytes:
        """Bytes fed but not yet taken as lines (a partial line, or lines beyond a limit)."""
        return self._rest

    def feed(self, chunk: bytes) -> None:
        """Append ``chunk`` to what is waiting to be split."""
        self._rest = self._rest + chunk if self._rest else chunk

    def take(self, max_lines: int, into: list[Line]) -> None:
        """Move up to ``max_lines`` complete lines into ``into``."""
        rest = self._rest
        if max_lines <= 0 or b"\n" not in rest:
            return
        parts = rest.split(b"\n", max_lines)
        self._rest = parts.pop()
        position = self.position
        append = into.append
        for part in parts:
            position += len(part) + 1
            append((part[:-1] if part.endswith(b"\r") else part, position))
        self.position = position

    def take_block(self, max_lines: int, into: list[bytes]) -> int:
        r"""Move up to ``max_lines`` complete lines into ``into`` as one block of bytes,
        each line with its ``\n`` (and a ``\r`` before it, unlike :meth:`take`), with no
        object per line. Returns how many lines it moved.
        """
        rest = self._rest
        newlines = rest.count(b"\n") if max_lines > 0 else 0
        if not newlines:
            return 0
        if newlines <= max_lines:
            end, taken = rest.rfind(b"\n") + 1, newlines
        else:  # the max_lines-th newline, found in C
            import numpy as np

            ends = np.flatnonzero(np.frombuffer(rest, dtype=np.uint8) == 10)
            end, taken = int(ends[max_lines - 1]) + 1, max_lines
        into.append(rest[:end])
        self._rest = rest[end:]
        self.position += end
        return taken

    def take_partial(self, into: list[Line]) -> None:
        """Move what is pending, without a newline, into ``into`` as a last line."""
        if self._rest:
            self.position += len(self._rest)
            rest = self._rest
            into.append((rest[:-1] if rest.endswith(b"\r") else rest, self.position))
            self._rest = b""

    def reset(self, position: int = 0) -> None:
        """Forget what is pending and continue from ``position``."""
        self._rest = b""
        self.position = position


class FileTail:
    """Reads complete lines from a file that may keep growing.

    Not thread-safe: one reader thread (the source task's).

    Args:
        path: The file to follow.
        position: The byte position to start from (a line start).
        identity: The :func:`file_identity` of the file ``position`` belongs to, if
            known; when the file now at ``path`` is another one, reading starts at 0.

    Raises:
        FileNotFoundError: There is no file at ``path`` (yet).
        OSError: The file cannot be opened.

    """

    def __init__(self, path: str, position: int = 0, identity: int | None = None) -> None:
        self.path = path
        self._file: BinaryIO = open(path, "rb")  # noqa: SIM115 - closed in close()
        stat = os.fstat(self._file.fileno())
        self.identity = file_identity(stat)
        """The identity of the file the positions of the last returned lines refer to."""
        if identity is not None and identity != self.identity:
            _log.warning("%s is not the file the committed position %d belongs to (it was "
                         "rotated while nothing read it); reading it from the start",
                         path, position)
            position = 0
        elif position > stat.st_size:
            _log.warning("%s is shorter (%d bytes) than the committed position %d (it was "
                         "truncated); reading it from the start", path, stat.st_size,
                         position)
            position = 0
        self._file.seek(position)
        self._lines = LineSplitter(position)
        self._switch_to: BinaryIO | None = None  # the new file, once the old is finished

    @property
    def position(self) -> int:
        """The byte position just after the last line returned (what a source commits)."""
        return self._lines.position

    def read_lines(self, max_lines: int) -> list[Line]:
        """Up to ``max_lines`` complete lines, each with the position after it.

        Fewer (maybe none) when the file has no more complete lines now. All lines of one
        call come from the same file, the one :attr:`identity` names after the call.
        """
        if self._switch_to is not None:
            self._switch()
        lines: list[Line] = []
        splitter = self._lines
        splitter.take(max_lines, lines)
        read = self._file.read
        while len(lines) < max_lines:
            chunk = read(_CHUNK)
            if chunk:
                splitter.feed(chunk)
                splitter.take(max_lines - len(lines), lines)
            elif lines or not self._handle_end(lines):
                break
        return lines

    def read_block(self, max_lines: int) -> bytes:
        r""":meth:`read_lines` as one block of bytes: the same lines, each ending in
        ``\n`` (a ``\r`` before it kept), with no object per line; ``b""`` when there are
        none. :attr:`position` is then the byte position after the block's last line.
        """
        if self._switch_to is not None:
            self._switch()
        parts: list[bytes] = []
        splitter = self._lines
        count = splitter.take_block(max_lines, parts)
        read = self._file.read
        while count < max_lines:
            chunk = read(_CHUNK)
            if chunk:
                splitter.feed(chunk)
                count += splitter.take_block(max_lines - count, parts)
                continue
            if parts:
                break
            last: list[Line] = []
            read_on = self._handle_end(last)
            if last:  # the rotated file's last line, which had no newline
                parts.append(last[0][0] + b"\n")
            if last or not read_on:
                break
        return b"".join(parts)

    def _handle_end(self, lines: list[Line]) -> bool:
        """At the end of the file, with nothing read: handle truncation and rotation.
        Whether to read on.
        """
        read_end = self._file.tell()
        if os.fstat(self._file.fileno()).st_size < read_end:
            _log.warning("%s was truncated (had read %d bytes); reading it from the start",
                         self.path, read_end)
            self._file.seek(0)
            self._lines.reset(0)
            return True
        try:
            new = open(self.path, "rb")  # noqa: SIM115 - closed in close() or below
        except FileNotFoundError:
            return False  # moved away, the new file not there yet: keep following the old
        except OSError as exc:
            _log.warning("cannot open %s to check for rotation: %s", self.path, exc)
            return False
        if file_identity(os.fstat(new.fileno())) == self.identity:
            new.close()
            return False
        self._file.seek(0, os.SEEK_END)  # nothing was left to read: we are at its end
        _log.warning("%s was rotated (the path now names another file); the old file was "
                     "read to its end, reading the new one from the start", self.path)
        self._switch_to = new
        self._lines.take_partial(lines)
        if lines:
            return False  # return the old file's last line; switch on the next call
        self._switch()
        return True

    def _switch(self) -> None:
        new, self._switch_to = self._switch_to, None
        assert new is not None
        self._file.close()
        self._file = new
        self.identity = file_identity(os.fstat(new.fileno()))
        self._lines.reset(0)

    def close(self) -> None:
        """Close the file(s). Idempotent."""
        self._file.close()
        if self._switch_to is not None:
            self._switch_to.close()
            self._switch_to = None


class StreamLines:
    """Reads complete lines from a pipe or terminal (standard input), waiting at most a
    given time, so that a stop from another thread is honoured promptly.

    Args:
        fd: The file descriptor to read.

    """

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._lines = LineSplitter()
        self.eof = False
        """Whether the stream has ended (every line has been returned then)."""

    def read_block(self, max_lines: int, wait: float) -> bytes:
        r""":meth:`read_lines` as one block of bytes, each line ending in ``\n``."""
        return b"".join(line + b"\n" for line, _ in self.read_lines(max_lines, wait))

    def read_lines(self, max_lines: int, wait: float) -> list[Line]:
        """Up to ``max_lines`` complete lines, waiting at most ``wait`` seconds for data.
        At the end of the stream, a last line without newline is returned too.
        """
        lines: list[Line] = []
        self._lines.take(max_lines, lines)
        while len(lines) < max_lines and not self.eof:
            ready, _, _ = select.select([self._fd], [], [], 0.0 if lines else wait)
            if not ready:
                break
            chunk = os.read(self._fd, _CHUNK)
            if not chunk:
                self.eof = True
                self._lines.take(max_lines - len(lines), lines)
                if len(lines) < max_lines:
                    self._lines.take_partial(lines)
                break
            self._lines.feed(chunk)
            self._lines.take(max_lines - len(lines), lines)
        return lines
