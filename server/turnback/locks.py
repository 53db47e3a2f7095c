"""Inter-process locks.

Appends use ``filelock`` (exclusive, per file). Object writers and ``gc`` need a
reader/writer lock — many writers of new objects may run at once, while ``gc``
must run alone — so that one is ``fcntl.flock`` with shared/exclusive modes.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from filelock import FileLock


def file_lock(path: Path, timeout: float = 30.0) -> FileLock:
    """An exclusive lock beside ``path`` (``<path>.lock``)."""
    return FileLock(str(path) + ".lock", timeout=timeout)


@contextmanager
def rw_lock(path: Path, *, exclusive: bool) -> Iterator[None]:
    """Hold ``path`` as a shared (writers of new objects) or exclusive (gc) lock."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        yield
    finally:
        try:
            fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)
