"""Preparing the next checkpoint while the workspace is quiet.

What an agent waits for when it asks for a checkpoint is the reading, hashing and
packing of the files it changed. The watcher knows those files as they change, so
once the workspace has been quiet for ``QUIET_S`` the server does that work ahead
(``Store.prepare``), on the folder's write queue like any other write. The checkpoint
that follows commits the prepared tree if nothing changed since, or patches it with
what did; a rewind's safety checkpoint gains the same way.

It costs the idle server one read of each changed file per quiet moment, which the
next checkpoint would have paid anyway, unless the file changes again first. Large
batches (a build, a branch switch) are left to the checkpoint. ``TURNBACK_PREPARE=0``
turns it off (for comparisons).

The same quiet moment folds the server's own object log (``Store.fold_held``): the
server writes a checkpoint's held objects as raw zstd frames (no compression on the
answer's path, ``ObjectStore.raw_held``), and its preparer, poked after each write that
wrote one (``fold_soon``), packs them again at the configured level once nothing has
happened for ``QUIET_S``. The fold runs outside the folder's write lock and holds nothing
a checkpoint needs but for the swap of its log (``store/logmerge.py``): a request that
comes meanwhile no longer waits for it (it waited 40-170 ms, branch ``redteam33``;
bench/RESULTS.md, branch ``fold28``). A fold a busy lock puts off (a gc, another
process's fold) is tried again (``FOLD_RETRY_MAX_S``). The first quiet moment also looks
once for raw frames another server left (killed before its fold: ``Store.fold_left``).

The server starts a preparer per watched folder; the preparer needs of the server
only whether it is closing and its writes pool (``Host``), so this module does not
import the server's class (``core.py`` imports this one).
"""

from __future__ import annotations

import asyncio
import logging
import os
from typing import TYPE_CHECKING, Protocol

from ..watching.dirty import FLUSH_TIMEOUT_S
from .work import Pools, run_blocking

if TYPE_CHECKING:
    from ...store.facade import Store
    from ..workspace.folders import Folder

log = logging.getLogger("turnback.server")

QUIET_S = 0.1  # no new change for this long: the agent has probably finished its edits
# a fold put off by a busy gc lock (a CLI writer, a gc) is tried again after 0.2 s, then
# twice as long each time up to this: a try-lock is ~3 system calls, so a long gc costs
# a few per minute, and the checkpoint's raw frames do not wait for the next write
FOLD_RETRY_MAX_S = 30.0
MAX_PATHS = 2000  # more changed paths than this: left to the checkpoint


class Host(Protocol):
    """What a preparer uses of the server (:class:`~turnback.server.core.TurnbackServer`)."""

    @property
    def closing(self) -> bool: ...

    @property
    def pools(self) -> Pools: ...


def prepare_folder(folder: Folder, store: Store) -> bool:
    """Prepare with the watcher's changed paths, only if they are known (never a walk).

    Runs on a worker thread under the folder's write lock. The paths go back to the
    tracker if nothing was prepared, so the next checkpoint still reads them.
    """
    watcher = folder.watcher
    if watcher is None or not folder.tracker.trusted:
        return False
    with folder.tracker.taking():
        if not watcher.flush(FLUSH_TIMEOUT_S):
            return False
    paths = folder.tracker.take_to_prepare()
    if not paths:  # nothing, or untrusted meanwhile (the checkpoint walks)
        return False
    try:
        done = store.prepare(paths)
    except BaseException:
        folder.tracker.give_back_prepared(paths)
        raise
    if not done:
        folder.tracker.give_back_prepared(paths)
    return done


def enabled() -> bool:
    return os.environ.get("TURNBACK_PREPARE", "1") != "0"


class Preparer:
    """Schedules ``Store.prepare`` for one folder; ``poke`` comes from any thread."""

    def __init__(self, ls: Host, folder: Folder,
                 loop: asyncio.AbstractEventLoop) -> None:
        self._ls = ls
        self._folder = folder
        self._loop = loop
        self._timer: asyncio.TimerHandle | None = None
        self._task: asyncio.Task[None] | None = None
        self._fold = False  # a write left raw frames in the server's log: fold them
        # another's raw frames (a server killed before its fold): looked for once, at the
        # first quiet moment with the store open (``Store.fold_left``)
        self._left = True
        self._retry_s = QUIET_S  # the wait before trying a put-off fold again
        # the first quiet moment comes without a change or a write; armed once the watcher
        # has started (its start stops the preparer's timer first)
        loop.call_soon(self._arm)

    def fold_soon(self) -> None:
        """A write of this server left raw frames in its log: fold them once quiet. On the
        event loop."""
        self._fold = True
        self._arm()

    def poke(self) -> None:
        """The watcher saw changes: (re)start the quiet period. Thread-safe."""
        try:
            self._loop.call_soon_threadsafe(self._arm)
        except RuntimeError:
            pass  # the loop is closed: the server is going away

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _arm(self, delay: float = QUIET_S) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer = self._loop.call_later(delay, self._fire)

    def _fire(self) -> None:
        self._timer = None
        if self._task is not None and not self._task.done():
            self._arm()  # one at a time: look again once this one is done
            return
        self._task = self._loop.create_task(self._run())

    async def _run(self) -> None:
        folder = self._folder
        count = folder.tracker.count
        prepare = bool(count) and count is not None and count <= MAX_PATHS
        store = folder.store
        left = self._left and store is not None
        fold = self._fold or left
        if self._left and store is None and not self._ls.closing:
            # the store is not open yet (or not made): looked for again, ever less often
            self._retry_s = min(self._retry_s * 2, FOLD_RETRY_MAX_S)
            self._arm(self._retry_s)
        if (not prepare and not fold) or store is None or self._ls.closing:
            return
        if folder.write_lock.locked():
            # a write runs or waits: a checkpoint among them takes the paths itself; a fold
            # waits for the next quiet moment after it
            if fold:
                self._arm()
            return
        self._fold = self._left = False

        def prepare_job() -> bool:
            return prepare_folder(folder, store)

        def fold_job() -> tuple[bool, bool]:
            """Whether this process's fold, and the look for others' raw frames, were put
            off (a lock was busy)."""
            left_off = left and store.fold_left() is None
            return not store.fold_held() and store.objects.unfolded, left_off

        try:
            if prepare:
                async with folder.write_lock:
                    await run_blocking(self._ls.pools.writes, prepare_job)
            # not under the folder's write lock: a request that comes meanwhile does not
            # wait for the fold (``Store.fold_held`` holds nothing a checkpoint needs but
            # for the swap of its log)
            put_off, left_off = (await run_blocking(self._ls.pools.writes, fold_job)
                                 if fold else (False, False))
        except Exception as exc:  # the checkpoint will read the paths itself
            # a fold that failed (disk full, damage) is not retried in a loop: the next
            # write that leaves raw frames asks again
            log.debug("%s: preparing the next checkpoint or folding the log failed: %s",
                      folder.path, exc)
            return
        if (put_off or left_off) and not self._ls.closing:
            self._fold = put_off
            self._left = left_off
            self._retry_s = min(self._retry_s * 2, FOLD_RETRY_MAX_S)
            self._arm(self._retry_s)
        elif fold:
            self._retry_s = QUIET_S
