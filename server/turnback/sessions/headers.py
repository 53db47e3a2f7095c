"""Session files' header lines read without counting: what a listing can show before.

A store that was never listed (no summary index: written by another version, just
pulled, or ``index/`` deleted) must count every event before it knows a session's
stats: 33-65 s for 10,000,000 events. The title, agent and start time are on each
file's first line, one small read; a later title or end is on a ``meta`` line, which
a session's last write usually is, so the file's last ``TAIL`` bytes are read too.

With a cold page cache each of those reads is a random disk read: 10,000 of them one
after the other took 1.3-2.0 s. So up to ``AHEAD`` files are opened and their reads
asked for (``POSIX_FADV_WILLNEED``) before the first is read: the disk gets many
requests at once and serves them in its own order (bench/RESULTS.md, "Issue 16: the
never-listed store with a cold page cache").

Input like every file: a first line longer than ``MAX_HEADER``, one that is not a
session header, or a file that is not a regular one (a link, a FIFO) gives no header,
and the session shows once it is counted. At most ``MAX_HEADER + TAIL + 1`` bytes are
read from any file.
"""

from __future__ import annotations

import errno
import os
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import orjson

from ..errors import InvalidInput, StoreDamaged
from ..events import SessionHeader
from ..fs.folders import Folder
from ..fs.jsonl import loads
from ..fs.reading import open_regular

FIRST_READ = 4096  # a header line is a few hundred bytes; most files need one read
MAX_HEADER = 1 << 16  # longer is a damaged or planted line: not read further
TAIL = 4096  # the last bytes read for meta lines: a meta line is about 150 bytes
AHEAD = 64  # files open with their reads asked for: well under a process's 1,024 descriptors
_WILLNEED: int | None = getattr(os, "POSIX_FADV_WILLNEED", None)  # not on macOS, Windows
_TOO_MANY = (errno.EMFILE, errno.ENFILE)


@dataclass(frozen=True, slots=True)
class HeaderRead:
    """One session file as its header read found it: inode and size when read (a grown
    file may have a new meta line), and its header with the meta lines of its last
    ``TAIL`` bytes applied (None: nothing to show before counting)."""

    ino: int
    size: int
    header: SessionHeader | None


def read_header(path: Path | str, folder: Folder | None = None) -> SessionHeader | None:
    """The session header on the first line of ``path`` (a name in ``folder``, if given),
    with the title or end of a meta line in its last ``TAIL`` bytes; None if there is
    none to read."""
    try:
        opened = _open_asked(path, folder)
    except OSError:  # too many files open
        return None
    got = _read(*opened) if opened is not None else None
    return got.header if got is not None else None


def read_headers(names: Iterable[str], folder: Folder) -> list[HeaderRead | None]:
    """``read_header`` of each name in ``folder``, in the order given (None: nothing
    readable there). Up to ``AHEAD`` files are open with their reads asked for ahead of
    the one being read: a cold disk sees that many reads at once."""
    out: list[HeaderRead | None] = []
    pending = iter(names)
    ahead: deque[tuple[int, os.stat_result] | None] = deque()
    held: str | None = None  # a name whose open found too many descriptors open
    try:
        while True:
            while len(ahead) < AHEAD and (name := held or next(pending, None)) is not None:
                held = None
                try:
                    ahead.append(_open_asked(name, folder))
                except OSError:  # too many descriptors: read the ones open first
                    if ahead:
                        held = name
                        break
                    ahead.append(None)  # none of ours open: this one cannot be read now
            if not ahead:
                return out
            opened = ahead.popleft()
            out.append(_read(*opened) if opened is not None else None)
    finally:
        for left in ahead:  # only after an error
            if left is not None:
                os.close(left[0])


def _open_asked(path: Path | str, folder: Folder | None) -> tuple[int, os.stat_result] | None:
    """``path`` open (no link followed; a FIFO or device refused) with its first and last
    bytes asked for from the disk, and its ``fstat``; None if it cannot be read. Raises
    ``OSError`` only when the process has too many files open."""
    try:
        fd = open_regular(path, folder=folder)
    except OSError as exc:
        if exc.errno in _TOO_MANY:
            raise
        return None
    except StoreDamaged:
        return None
    try:
        st = os.fstat(fd)
        if _WILLNEED is not None:
            # exactly the bytes read below: 10,000 cold files read their 4 KiB ends, not the
            # kernel's 128 KiB read-ahead each (POSIX_FADV_RANDOM, which did that before,
            # changes no byte read now: bench/RESULTS.md)
            os.posix_fadvise(fd, 0, FIRST_READ, _WILLNEED)
            if st.st_size > FIRST_READ:
                os.posix_fadvise(fd, max(0, st.st_size - TAIL - 1), TAIL + 1, _WILLNEED)
    except OSError:
        os.close(fd)
        return None
    return fd, st


def _read(fd: int, st: os.stat_result) -> HeaderRead:
    """The header read of the open file ``fd`` (closed here), ``st`` its ``fstat``."""
    try:
        data, size = b"", FIRST_READ
        while True:
            data = os.pread(fd, size, 0)
            end = data.find(b"\n")
            if end >= 0 or len(data) < size or size >= MAX_HEADER:
                break
            size = min(size * 4, MAX_HEADER)
        header = _header(data[:end]) if end >= 0 else None  # else no whole first line
        if header is not None:
            # from the byte before the window (the header's newline at least): its first
            # piece is the end of a line begun earlier, or empty
            start = max(end, st.st_size - TAIL - 1)
            whole = len(data) < size  # the read reached the end of the file
            tail = data[start:] if whole else os.pread(fd, max(0, st.st_size - start), start)
            _apply_meta(header, tail)
    except OSError:
        header = None
    finally:
        os.close(fd)
    return HeaderRead(st.st_ino, st.st_size, header)


def _header(line: bytes) -> SessionHeader | None:
    try:
        value = loads(line)
    except (orjson.JSONDecodeError, ValueError):
        return None
    if not isinstance(value, dict) or value.get("type") != "session":
        return None
    try:
        return SessionHeader.from_json(value)
    except (InvalidInput, TypeError, ValueError, AttributeError):
        return None


def _apply_meta(header: SessionHeader, tail: bytes) -> None:
    """Apply the meta lines among ``tail``'s whole lines (not its first piece, which may
    be the end of a longer line, nor a last one without its newline), in order, as a full
    count does."""
    if b'"meta"' not in tail:  # most sessions' last lines are events: nothing split
        return
    for raw in tail.split(b"\n")[1:-1]:
        if b'"meta"' not in raw:  # an event: not parsed
            continue
        try:
            value = loads(raw)
        except (orjson.JSONDecodeError, ValueError):
            continue
        if isinstance(value, dict) and value.get("type") == "meta":
            header.apply_meta(value)
