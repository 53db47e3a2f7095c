"""Which writes run on the event loop's thread itself instead of the writes pool.

A small checkpoint asked at once (files just changed: the preparer has read nothing ahead)
through the pool costs hand-offs between threads: the loop hands the job to a write thread
(a wake-up, the interpreter's lock passed back and forth while both run), the result wakes
the loop again. Run on the loop itself (bench/RESULTS.md, "the at-once checkpoint without
the thread hand-off", SPEC's 50,000-file workspace, 4 alternating pairs at load 1.3-1.8):
the server's voluntary context switches per at-once checkpoint 14-16.5 -> 8-10, its wall
time 13.7-14.9 -> 11.4-14.4 ms, lower in every pair.

While it runs, no request of any folder is read: a blocked loop freezes them all. So only
a write that is certainly short and waits for nothing is run there; anything else goes to
the pool as before:

- the folder's store is open, and no other write of the folder is running or queued;
- its inotify watcher is trusted, with at most ``SHORT_PATHS`` changed paths known and at
  most ``QUEUE_BYTES`` of events queued, and no drain under way on its own thread (a flush
  would wait for that one to end, whatever its size);
- the request cannot be cancelled (no progress: a walk's checkpoint always has one);
- then the write itself says whether it can go on (``Store.checkpoint_now``: an
  incremental scan of at most ``SHORT_PATHS`` paths, nothing of an earlier write left to
  finish, the store's mutex and its cross-process gc lock free at once). If not, nothing
  is done and the pool runs the write.
"""

from __future__ import annotations

from collections.abc import Set
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..workspace.folders import Folder

# An agent's turn changes a few files; SPEC's at-once checkpoint is 10 of them.
SHORT_PATHS = 32
# ~2 events per changed file (a write and its close), 16 bytes each plus the name padded:
# 32 files' events fit in well under this.
QUEUE_BYTES = 8192


def certainly_short(folder: Folder) -> bool:
    """Whether a small checkpoint of ``folder`` may be tried on the event loop now."""
    count = folder.tracker.count  # None unless trusted and watching
    watcher = folder.watcher
    return (
        folder.store is not None
        and not folder.write_lock.locked()
        and count is not None
        and count <= SHORT_PATHS
        and watcher is not None
        and watcher.drains_now(QUEUE_BYTES)
    )


def few(dirty: Set[str]) -> bool:
    """Whether a checkpoint told to read ``dirty`` is short."""
    return len(dirty) <= SHORT_PATHS
