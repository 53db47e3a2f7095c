"""Inter-process locks, all ``fcntl.flock`` on a lock file.

Appends take an exclusive lock per file (``<file>.lock``), waited for up to a
timeout that ends in a clear error. Object writers and ``gc`` need a
reader/writer lock — many writers of new objects may run at once, while ``gc``
must run alone — so that one has shared/exclusive modes.

A flock belongs to one open file description: two holders in one process (two
threads, or two ``file_lock`` objects) exclude each other like two processes.

Not the ``filelock`` package: importing it loads asyncio (20–90 ms measured on
every CLI call, a third of a no-op checkpoint's budget), it polls every 50 ms
while waiting, and it has no shared mode for the reader/writer lock.
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType

from ..errors import Conflict
from .privacy import FILE_MODE, make_dir


def _open_lock_file(path: str) -> int:
    """The lock file, created (with its folder) if missing."""
    try:
        return os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, FILE_MODE)
    except FileNotFoundError:
        make_dir(Path(os.path.dirname(path) or "."))
        return os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, FILE_MODE)


class FileLock:
    """An exclusive lock on ``path``, held by a ``with`` block."""

    def __init__(self, path: str, timeout: float) -> None:
        self.path = path
        self.timeout = timeout
        self._fd = -1

    def acquire(self) -> None:
        fd = _open_lock_file(self.path)
        try:
            deadline = time.monotonic() + self.timeout
            pause = 0.0005
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        raise Conflict(
                            f"another process has held the lock {self.path} for more than "
                            f"{self.timeout:g} s; try again when it is done") from None
                    time.sleep(min(pause, left))
                    pause = min(pause * 2, 0.02)
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd

    def release(self) -> None:
        fd, self._fd = self._fd, -1
        if fd >= 0:
            try:
                fcntl.flock(fd, fcntl.LOCK_UN)
            finally:
                os.close(fd)

    @property
    def is_locked(self) -> bool:
        return self._fd >= 0

    def __enter__(self) -> FileLock:
        self.acquire()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.release()


def file_lock(path: Path, timeout: float = 30.0) -> FileLock:
    """An exclusive lock beside ``path`` (``<path>.lock``)."""
    return FileLock(str(path) + ".lock", timeout)


@contextmanager
def rw_lock(path: Path, *, exclusive: bool) -> Iterator[None]:
    """Hold ``path`` as a shared (writers of new objects) or exclusive (gc) lock."""
    fd = _open_lock_file(str(path))
    try:
        fcntl.flock(fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        yield
    finally:
        try:
            fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)
