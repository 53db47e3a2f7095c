"""A folder held open, to tell whether its path still leads to it.

A store can be replaced under a process that keeps it open (restored from a backup, made
again with ``turnback init``, another moved in its place): that process's caches (the stat
cache, the pack indexes it read) name objects the new store lacks, and a checkpoint
trusting them records files nothing can restore. While a folder is held open its inode
cannot be reused, so the path leading to another (device, inode) means another folder.
"""

from __future__ import annotations

import errno
import os
import threading
import weakref
from pathlib import Path

from .folders import FdFolder, Folder, PathFolder, identity
from .osflags import DESCRIPTORS, O_CLOEXEC

# ``stat``'s answers that say nothing stands at the path (or a file stands where a folder
# of it was): replaced. Any other (EACCES, EIO, ELOOP...) says the path could not be looked at
_NOTHING_THERE = frozenset({errno.ENOENT, errno.ENOTDIR})


class HeldFolder:
    def __init__(self, path: Path) -> None:
        self.path = path
        # why the last ``replaced`` could not look at ``path`` (EACCES on a parent, EIO):
        # that answer was True, the safe side, but the store may still be there (trust30)
        self.unreadable: OSError | None = None
        # the descriptor's users and its close, one at a time: a close from another thread
        # (a server closing the store) between a look at ``_fd`` and its use let the number,
        # reused meanwhile by any open, be ``dup``-ed for a record's write (junk33)
        self._using = threading.Lock()
        try:  # where a folder cannot be opened (Windows), it is never said to be replaced
            self._fd: int | None = os.open(
                path, os.O_RDONLY | O_CLOEXEC | getattr(os, "O_DIRECTORY", 0))
        except OSError:
            self._fd = None
            return
        # the held folder's (device, inode), kept: an open descriptor's never changes, so
        # each look is one ``stat`` of the path (it was a ``stat`` and an ``fstat``)
        self._ident = identity(os.fstat(self._fd))
        # closed when dropped unclosed too (a Store never closed): no descriptor kept for it
        self._closer = weakref.finalize(self, os.close, self._fd)

    def replaced(self) -> bool:
        """Whether ``path`` now leads to another folder, or nowhere; True too where it cannot
        be looked at (then ``unreadable`` holds why): nothing is trusted to a store unseen."""
        self.unreadable = None
        try:
            with self._using:
                if self._fd is None:
                    return False
                now = os.stat(self.path)
        except OSError as exc:
            if exc.errno not in _NOTHING_THERE:
                self.unreadable = exc
            return True
        return identity(now) != self._ident

    def folder(self) -> Folder | None:
        """The held folder, for a write that must land in the folder ``replaced`` looked at,
        wherever its path leads now (the checkpoint's record after the look: a store
        swapped in between got the line; redteam38). None where none is held (Windows):
        written by path. The caller closes it. Where folders are reached by path
        (``TURNBACK_FS_PATHS``), a ``PathFolder`` of the held identity: its path looked at
        before and after the ``open``, a write refused where it leads elsewhere."""
        with self._using:
            if self._fd is None:
                return None
            if DESCRIPTORS:
                return FdFolder(os.dup(self._fd), str(self.path))
            return PathFolder(str(self.path), self._ident)

    def close(self) -> None:
        with self._using:
            if self._fd is not None:
                self._fd = None
                self._closer()
