"""The background server's lock: at most one per store, and who it is (``turnback status``).

A fresh CLI with no server starts a headless one for its workspace (``server/background.py``,
docs/ARCHITECTURE.md "What a fresh process must do at least"). Two hooks at once may both
start one; the socket alone cannot keep the second out (the first may not be listening yet),
so each takes ``<store>/run/background.lock`` first and leaves if another holds it. The lock
is the kernel's (``flock``), so a crashed server holds nothing: the next start takes it. The
file holds the holder's pid for ``turnback status``; it is read only while the lock is held
by someone, bounded, as a number, and never trusted beyond saying it.

Everything in ``run/`` is input: the lock file is opened without following a link, and must
be a regular file of this user with no other name (a hard link planted there to a file of the
user's would be truncated to the pid). The store itself must be a folder of this user, not a
link: ``run/`` is made in it before ``Store.open``'s own checks.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ..errors import Unsafe
from ..fs import instore, locks, privacy
from ..fs.osflags import O_CLOEXEC, O_NOFOLLOW, O_NONBLOCK

RUN_DIR = "run"  # fs/sockets.RUN_DIR: the store's private folder of live processes
LOCK_NAME = "background.lock"
_MAX_PID_BYTES = 20


def lock_path(root: Path) -> Path:
    return root / RUN_DIR / LOCK_NAME


def take(root: Path) -> int | None:
    """The lock, held through the returned descriptor (with this process's pid written in
    it) until it is closed; None when another background server holds it."""
    st = os.lstat(root)
    if not stat.S_ISDIR(st.st_mode) or not _of_this_user(st):
        raise OSError(f"the store {root} is a link or not a folder of yours; "
                      "no background server is started for it")
    run = root / RUN_DIR
    # opened once, without following a link, and the lock made in it: a look at run/ by
    # path and an open by path let a link swapped in between get the lock file (made, or
    # one of that name truncated to the pid) where it pointed
    try:
        folder = instore.open_store_folder(root, [RUN_DIR], create=True)
    except Unsafe as exc:
        raise OSError(f"{exc.message}: no background server is started for {root}; "
                      f"remove {run}") from None
    try:
        st = folder.stat_self()
        if not stat.S_ISDIR(st.st_mode) or not _of_this_user(st):
            raise OSError(f"{run} is not a folder of yours; remove it")
        fd = folder.open(LOCK_NAME, os.O_RDWR | os.O_CREAT | O_CLOEXEC | O_NOFOLLOW,
                         privacy.FILE_MODE)
    finally:
        folder.close()
    try:
        if not _ours(fd):
            raise OSError(f"{lock_path(root)} is not a regular file of yours with one name "
                          "(a link, a FIFO, a hard link); remove it")
        if not locks.backend().try_lock(fd, True):
            os.close(fd)
            return None
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode())  # at 0: the file was just opened
    except BaseException:
        try:
            os.close(fd)
        except OSError:
            pass
        raise
    return fd


def holder(root: Path) -> int | None:
    """The pid of the background server holding ``root``'s lock, or None (none runs)."""
    try:
        fd = os.open(lock_path(root), os.O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
    except OSError:
        return None
    try:
        if not _ours(fd):
            return None
        backend = locks.backend()
        if backend.try_lock(fd, False):
            backend.unlock(fd, False)
            return None  # nobody holds it: a server that ended, or crashed
        raw = os.read(fd, _MAX_PID_BYTES).strip()
        return int(raw) if raw.isdigit() and 0 < len(raw) <= 10 else None
    except OSError:
        return None
    finally:
        os.close(fd)


def status(root: Path) -> dict[str, int] | None:
    """``turnback status``'s ``background``: ``{"pid": N}`` while one runs, else None."""
    pid = holder(root)
    return {"pid": pid} if pid is not None else None


def _ours(fd: int) -> bool:
    """A regular file of this user with no other name: safe to truncate and write."""
    st = os.fstat(fd)
    return stat.S_ISREG(st.st_mode) and st.st_nlink == 1 and _of_this_user(st)


def _of_this_user(st: os.stat_result) -> bool:
    return not hasattr(os, "geteuid") or st.st_uid == os.geteuid()
