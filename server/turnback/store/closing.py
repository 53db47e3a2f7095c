"""The store's mutex, which its close takes too: a close waits for the checkpoint, rewind or
fold under way in another thread, and every later one is refused.

Before (branch junk33), ``Store.close`` took no lock: a server closing a store (at shutdown,
at a workspace folder's removal) while a checkpoint ran on a pool thread closed the held root's
and the object log's descriptors under it, and the number of either, reused by the next
``open`` of any thread, could take the checkpoint's record or objects into another file.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType

from ..errors import Conflict

# How long a close waits for the rewind lock to finish a rewind left to finish (another
# process's rewind or recovery holding it): a server's shutdown or a workspace folder's
# removal waited the lock's 30 s twice, a minute on the event loop (redteam42's open item).
# A rewind not finished in that time is left to the next open (``Store.close``).
CLOSE_WAIT = 2.0


def closed_store(root: Path) -> Conflict:
    return Conflict(
        f"the store {root} was closed (its workspace folder removed, or the server ending) "
        "while this was asked of it; nothing was written. Run the command again (in an "
        "editor: reload its window)")


class StoreMutex:
    """A re-entrant lock held by every checkpoint, rewind, fold and scan of one ``Store``,
    refused (``Conflict``) once the store is closed."""

    def __init__(self, root: Path) -> None:
        self._root = root
        self._lock = threading.RLock()
        self._closed = False

    def acquire(self, blocking: bool = True) -> bool:
        if not self._lock.acquire(blocking):
            return False
        if self._closed:
            self._lock.release()
            raise closed_store(self._root)
        return True

    def release(self) -> None:
        self._lock.release()

    def __enter__(self) -> StoreMutex:
        self.acquire()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.release()

    @contextmanager
    def closing(self, ready: Callable[[], bool] = lambda: True) -> Iterator[bool | None]:
        """Held for a close, once every other holder has let it go: yields whether this is
        the first close (a second one has nothing to do). Closed when the block ends, so
        the close's own work may take the mutex again. Yields None, and leaves the store
        open, where ``ready()`` (asked under the mutex) is False: the caller takes first
        what it then lacks, a lock taken before this mutex everywhere else, and asks again
        (redteam42: the rewind lock, taken under it, met a rewind's finish holding that
        lock and waiting for this mutex)."""
        with self._lock:
            if not self._closed and not ready():
                yield None
                return
            first = not self._closed
            try:
                yield first
            finally:
                self._closed = True
