"""The journal a rewind just wrote, held open until the rewind's first file is written.

A rewind refused after its journal and before its files (its safety checkpoint's listing
refused, a store replaced at a path that folders are reached by, a disk full) left that
journal pending: the next open of the store it was written in applied the rewind the user
had been told was refused (trust35, left open). Held by its descriptor, it is retracted
(emptied) where it was written, wherever that store's path leads now: a file's descriptor
needs no folder's, so this holds by path (``TURNBACK_FS_PATHS``, Windows) too.
"""

from __future__ import annotations

import os
from pathlib import Path
from types import TracebackType


class WrittenJournal:
    """``fd``: the journal file ``OpLog.begin`` wrote, open; ``path``: its name, for errors.
    Closed by ``close`` (or ``__exit__``), which retracts it first when the block raised."""

    __slots__ = ("fd", "fsync", "path")

    def __init__(self, fd: int, path: Path, *, fsync: bool) -> None:
        self.fd = fd
        self.path = path
        self.fsync = fsync

    def retract(self) -> None:
        """Empty the journal: its rewind touched no file and never will. Synced where the
        journal was (a power cut then must not bring back a rewind refused)."""
        if self.fd < 0:
            return
        os.ftruncate(self.fd, 0)
        if self.fsync:
            os.fsync(self.fd)

    def close(self) -> None:
        if self.fd >= 0:
            fd, self.fd = self.fd, -1
            os.close(fd)

    def __enter__(self) -> WrittenJournal:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        try:
            if kind is not None:
                self.retract()
        except OSError:
            pass  # the refusal raised is the error to tell; the journal is left, as before
        finally:
            self.close()
