"""Inter-process locks on a lock file: ``flock`` on POSIX, ``msvcrt.locking`` on Windows.

Appends take an exclusive lock per file (``<file>.lock``), waited for up to a
timeout that ends in a clear error. Object writers and ``gc`` need a
reader/writer lock — many writers of new objects may run at once, while ``gc``
must run alone — so that one has shared/exclusive modes.

A lock belongs to one open file (a flock to its open file description, a Windows
byte-range lock to its handle): two holders in one process (two threads, or two
``file_lock`` objects) exclude each other like two processes.

POSIX: ``fcntl.flock`` has both modes. Windows has no ``fcntl`` (importing it there
made ``import turnback`` fail): ``msvcrt.locking`` locks byte ranges, exclusively
only, so the shared mode is built from ranges (``_Ranges``): a shared holder locks one
of ``SLOTS`` bytes, an exclusive one locks them all; both pass a gate byte first so a
waiting ``gc`` is not starved by a stream of writers. The backend is picked by
``sys.platform`` when a lock is first taken, never at import time.

Not the ``filelock`` package: importing it loads asyncio (20–90 ms measured on
every CLI call, a third of a no-op checkpoint's budget), it polls every 50 ms
while waiting, and it has no shared mode for the reader/writer lock.
"""

from __future__ import annotations

import errno
import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType, TracebackType
from typing import Protocol

from ..errors import Conflict, LinkedInStore
from . import instore
from .folders import Folder
from .osflags import O_CLOEXEC as _CLOEXEC
from .osflags import O_NONBLOCK
from .privacy import FILE_MODE
from .reading import NotRegular, kind_of


class _Backend(Protocol):
    def try_lock(self, fd: int, exclusive: bool) -> bool: ...
    def lock(self, fd: int, exclusive: bool) -> None: ...
    def unlock(self, fd: int, exclusive: bool) -> None: ...


class _Flock:
    """POSIX: ``flock`` with ``LOCK_NB``, shared or exclusive."""

    def __init__(self) -> None:
        import fcntl

        self.fcntl = fcntl

    def try_lock(self, fd: int, exclusive: bool) -> bool:
        f = self.fcntl
        try:
            f.flock(fd, (f.LOCK_EX if exclusive else f.LOCK_SH) | f.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    def lock(self, fd: int, exclusive: bool) -> None:
        """Wait in the kernel (no polling) for as long as it takes."""
        self.fcntl.flock(fd, self.fcntl.LOCK_EX if exclusive else self.fcntl.LOCK_SH)

    def unlock(self, fd: int, exclusive: bool) -> None:
        self.fcntl.flock(fd, self.fcntl.LOCK_UN)


SLOTS = 64  # shared holders at once on Windows (object writers: a few processes at most)


class _Ranges:
    """Windows: ``msvcrt.locking`` byte ranges. Byte 0 is the gate, bytes 1..SLOTS the
    slots. Exclusive: the gate, then every slot (held until unlock). Shared: the gate, one
    free slot, the gate released — so a holder of the gate waiting for slots to drain
    keeps new shared holders out until it is done."""

    def __init__(self, msvcrt: ModuleType) -> None:
        self.m = msvcrt
        self._slot: dict[int, int] = {}  # fd -> the slot its shared lock holds

    def _lock(self, fd: int, offset: int, n: int) -> bool:
        os.lseek(fd, offset, os.SEEK_SET)
        try:
            self.m.locking(fd, self.m.LK_NBLCK, n)
        except OSError:  # EACCES / EDEADLOCK: some other handle holds a byte of it
            return False
        return True

    def _unlock(self, fd: int, offset: int, n: int) -> None:
        os.lseek(fd, offset, os.SEEK_SET)
        self.m.locking(fd, self.m.LK_UNLCK, n)

    def try_lock(self, fd: int, exclusive: bool) -> bool:
        if fd in self._slot or not self._lock(fd, 0, 1):
            return False
        if exclusive:
            if self._lock(fd, 1, SLOTS):
                return True
            self._unlock(fd, 0, 1)
            return False
        try:
            import random  # here: only this lock (not flock's) uses it

            start = random.randrange(SLOTS)  # spread holders over the slots
            for i in range(SLOTS):
                slot = 1 + (start + i) % SLOTS
                if self._lock(fd, slot, 1):
                    self._slot[fd] = slot
                    return True
            return False
        finally:
            self._unlock(fd, 0, 1)

    def lock(self, fd: int, exclusive: bool) -> None:
        _poll(self, fd, exclusive, None, "")

    def unlock(self, fd: int, exclusive: bool) -> None:
        if exclusive:
            self._unlock(fd, 1, SLOTS)
            self._unlock(fd, 0, 1)
        else:
            self._unlock(fd, self._slot.pop(fd), 1)


_backend: _Backend | None = None


def backend() -> _Backend:
    """The lock primitive of this platform (chosen once, on first use)."""
    global _backend
    if _backend is None:
        if sys.platform == "win32":
            import msvcrt

            _backend = _Ranges(msvcrt)
        else:
            _backend = _Flock()
    return _backend


class LockNotAFile(NotRegular, OSError):
    """A socket (or a device) where a lock file is opened: ``open`` fails (``ENXIO`` on
    Linux, ``EOPNOTSUPP`` on macOS for a socket, ``ENODEV`` for a device without its
    driver) and the bare ``OSError`` was answered as an internal error (-32603; trust33's
    open item). Named here as ``LockIsFolder`` names a folder, on the error path only (one
    ``lstat`` to say what stands there): nothing is added to a lock taken. A FIFO opens
    (``O_RDWR``, ``O_NONBLOCK``: never waits for a writer) and is locked as a file is."""


# what ``open`` answers for a socket or a device at the name (a FIFO opens)
_NOT_A_FILE = frozenset({errno.ENXIO, errno.EOPNOTSUPP, errno.ENODEV})


class LockIsFolder(LockNotAFile, IsADirectoryError):
    """A folder where a lock file is opened (``<id>.jsonl.lock``, ``checkpoints.jsonl.lock``,
    ``locks/gc``): nothing can be locked there, and the bare ``IsADirectoryError`` said
    nothing of what to do (redteam41). An ``OSError`` too, so a best-effort step that takes
    a lock (a cache's save, a merge of logs: ``except OSError``) is skipped as before,
    while a request is answered with ``StoreDamaged``'s code naming the path."""


def _open_lock_file(path: str, folder: Folder | None = None) -> int:
    """The lock file, created (with its folder) if missing; in a store this process
    opened, through its folder opened without following a link (``fs/instore.py``);
    ``folder``: the folder holding it, open (the caller's): its name opened there."""
    try:
        return instore.open_file(path, os.O_RDWR | os.O_CREAT | _CLOEXEC | O_NONBLOCK,
                                 FILE_MODE, make_dirs=folder is None, in_folder=folder)
    except LinkedInStore:
        if folder is not None:  # the folder replaced, not a link at the name (redteam41)
            _folder_still(folder)
        raise
    except OSError as exc:
        if exc.errno == errno.EISDIR:
            raise LockIsFolder(
                f"{path} is a folder, not a lock file: Turnback cannot take its lock there "
                "and wrote nothing. Move that folder out of the way (the lock file is made "
                "again when needed)") from None
        if exc.errno not in _NOT_A_FILE:
            raise
        raise LockNotAFile(
            f"{path} is {_what_is_at(path, folder)}, not a lock file: Turnback cannot take "
            "its lock there and wrote nothing. Move it out of the way (the lock file is "
            "made again when needed)") from None


def _what_is_at(path: str, folder: Folder | None) -> str:
    """What stands at ``path`` (a socket, a device), for the refusal's words."""
    try:
        st = (folder.lstat(os.path.basename(path)) if folder is not None
              else os.lstat(path))
    except OSError:
        return "not a file"
    return kind_of(st.st_mode)


def _folder_still(folder: Folder) -> None:
    """``Conflict`` where ``folder`` itself was replaced (folders by path: ``PathFolder``
    refuses an open in a folder whose path leads elsewhere with the same ELOOP as a link
    at the name), so the lock file is not blamed and no one is told to remove it."""
    try:
        folder.stat_self()
    except OSError:
        raise Conflict(
            f"{folder.path} was replaced (made again, restored or moved) while this process "
            "was using it; nothing was written. Run the command again (in an editor: reload "
            "its window)") from None


def _poll(lock: _Backend, fd: int, exclusive: bool, timeout: float | None,
          path: str) -> None:
    """Take the lock, polling with a growing pause (0.5 ms up to 20 ms); ``Conflict`` once
    ``timeout`` seconds have passed (None: wait as long as it takes)."""
    deadline = None if timeout is None else time.monotonic() + timeout
    pause = 0.0005
    while not lock.try_lock(fd, exclusive):
        left = 1.0 if deadline is None else deadline - time.monotonic()
        if left <= 0:
            raise Conflict(
                f"another process has held the lock {path} for more than "
                f"{timeout:g} s; try again when it is done") from None
        time.sleep(min(pause, left))
        pause = min(pause * 2, 0.02)


class FileLock:
    """An exclusive lock on ``path``, held by a ``with`` block."""

    def __init__(self, path: str, timeout: float, folder: Folder | None = None) -> None:
        self.path = path
        self.timeout = timeout
        self.folder = folder  # the folder holding ``path``, open (the caller's), or None
        self._fd = -1

    def acquire(self) -> None:
        fd = _open_lock_file(self.path, self.folder)
        try:
            _poll(backend(), fd, True, self.timeout, self.path)
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd

    def release(self) -> None:
        fd, self._fd = self._fd, -1
        if fd >= 0:
            try:
                backend().unlock(fd, True)
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


def file_lock(path: Path, timeout: float = 30.0, *, folder: Folder | None = None) -> FileLock:
    """An exclusive lock beside ``path`` (``<path>.lock``); ``folder``: the folder holding
    ``path``, open (the caller's): the lock made there, beside the file it guards."""
    return FileLock(str(path) + ".lock", timeout, folder)


def file_lock_free(path: Path, folder: Folder | None = None) -> bool:
    """Whether ``file_lock(path)`` would be taken at once now (taken and let go): for a
    caller that must not wait (the server's event loop) to decline before it writes
    anything. Another process may take it right after; that window is microseconds,
    not the whole time a stopped holder keeps it. ``folder``: as ``file_lock``'s."""
    with try_rw_lock(Path(str(path) + ".lock"), exclusive=True, folder=folder) as held:
        return held


@contextmanager
def try_rw_lock(path: Path, *, exclusive: bool,
                folder: Folder | None = None) -> Iterator[bool]:
    """``rw_lock`` taken only if it is free now: yields whether it is held. For work that
    may be left to a later process (merging the object logs) and must never make a
    caller wait behind a writer or a gc. ``folder``: the folder holding the lock file,
    open (the caller's): its name opened there, not by path."""
    fd = _open_lock_file(str(path), folder)
    try:
        held = backend().try_lock(fd, exclusive)
        try:
            yield held
        finally:
            if held:
                backend().unlock(fd, exclusive)
    finally:
        os.close(fd)


@contextmanager
def rw_lock(path: Path, *, exclusive: bool, folder: Folder | None = None) -> Iterator[None]:
    """Hold ``path`` as a shared (writers of new objects) or exclusive (gc) lock, waiting
    as long as it takes. ``folder``: as ``try_rw_lock``'s."""
    fd = _open_lock_file(str(path), folder)
    try:
        backend().lock(fd, exclusive)
        try:
            yield
        finally:
            backend().unlock(fd, exclusive)
    finally:
        os.close(fd)
