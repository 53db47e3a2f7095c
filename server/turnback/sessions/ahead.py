"""A few bytes of each of many files, read with the disk asked for many at once.

With a cold page cache each small read of a session file is a random disk read; made one
after the other, 10,000 header lines took 1.3-2.0 s. Here up to ``AHEAD`` files are open
with the ranges to be read asked for (``POSIX_FADV_WILLNEED``) before the first of them is
read: the disk gets that many requests at once and serves them in its own order
(bench/RESULTS.md, "Issue 16: the never-listed store with a cold page cache"). Every file
is input: opened without following a link, a FIFO or device refused (``open_regular``).
"""

from __future__ import annotations

import errno
import os
from collections import deque
from collections.abc import Callable, Iterable
from typing import TypeVar

from ..errors import StoreDamaged
from ..fs.folders import Folder
from ..fs.reading import open_regular

T = TypeVar("T")
# (offset, length) pairs a reader will read of a file of the given size
Ranges = Callable[[int], list[tuple[int, int]]]
AHEAD = 64  # the knee: 8 took twice as long, 256 no less (RESULTS.md); far under 1,024 fds
_WILLNEED: int | None = getattr(os, "POSIX_FADV_WILLNEED", None)  # not on macOS, Windows
_TOO_MANY = (errno.EMFILE, errno.ENFILE)


def read_ahead(names: Iterable[str], folder: Folder, ranges: Ranges,
               read: Callable[[int, os.stat_result], T]) -> list[T | None]:
    """``read(fd, fstat)`` of each name in ``folder``, in the order given; None
    where there is no regular file to read (or ``read`` raised ``OSError``). Each file is
    open at most while ``AHEAD`` others are; a process out of descriptors reads the files
    it holds first and opens the next after, or, holding none, leaves that one out."""
    out: list[T | None] = []
    pending = iter(names)
    ahead: deque[tuple[int, os.stat_result] | None] = deque()
    held: str | None = None  # a name whose open found too many descriptors open
    try:
        while True:
            while len(ahead) < AHEAD and (name := held or next(pending, None)) is not None:
                held = None
                try:
                    ahead.append(_open_asked(name, folder, ranges))
                except OSError:  # too many descriptors: read the ones open first
                    if ahead:
                        held = name
                        break
                    ahead.append(None)  # none of ours open: this one cannot be read now
            if not ahead:
                return out
            opened = ahead.popleft()
            out.append(None if opened is None else _read_closing(read, *opened))
    finally:
        for left in ahead:  # only after an error
            if left is not None:
                os.close(left[0])


def _read_closing(read: Callable[[int, os.stat_result], T], fd: int, st: os.stat_result
                  ) -> T | None:
    try:
        return read(fd, st)
    except OSError:
        return None
    finally:
        os.close(fd)


def _open_asked(name: str, folder: Folder, ranges: Ranges
                ) -> tuple[int, os.stat_result] | None:
    """``name`` open with ``ranges`` of it asked for from the disk, and its ``fstat``; None
    if it cannot be read. Raises ``OSError`` only when the process has too many files
    open."""
    try:
        fd = open_regular(name, folder=folder)
    except OSError as exc:
        if exc.errno in _TOO_MANY:
            raise
        return None
    except StoreDamaged:
        return None
    try:
        st = os.fstat(fd)
        if _WILLNEED is not None:
            # exactly the bytes read after: no read-ahead of 128 KiB a file either
            # (POSIX_FADV_RANDOM, which kept it off before, changes no byte read now)
            for offset, length in ranges(st.st_size):
                os.posix_fadvise(fd, offset, length, _WILLNEED)
    except OSError:
        os.close(fd)
        return None
    return fd, st
