"""The object logs merged into a pack by the process that finds them many.

Each fresh process that stores objects leaves one log (``objects/packlog.py``); without
this only ``turnback gc`` merged them, and every open read them all: a workspace served
only by agents' hooks made every hook slower until someone ran gc (bench/RESULTS.md,
"Issue 16: the object logs bounded"). Here a process, once its answer is out (the CLI
after printing), merges them when there are more than ``merging.MERGE_AT``: it takes the
gc lock exclusively only if it is free (a writer holds it shared while it appends, a gc
exclusively), so no caller ever waits behind a merge and no frame is being written
during one; it puts back the records a crash lost from ``checkpoints.jsonl`` and syncs
that file (a line another process appended without a wait must not outlive its log
only in the page cache), then writes the logs' objects into one pack, synced, and only
then removes the logs (``ObjectStore.merge_logs``).

Weighed and not done: a fresh process taking over a dead writer's log (a lock held for
a log's life) bounds the files but not the frames, which every checkpoint's first batch
reads two preads each: 1,000 hooks would be 2,000 reads in one log instead of 1,000
files; and a torn tail would have to be cut under that lock. Reading only the logs that
may hold a lost record would leave ``refresh``'s reads of every frame.
"""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import TurnbackError
from ..fs.atomic import fsync_file
from ..fs.locks import try_rw_lock
from ..objects.merging import MERGE_AT
from ..objects.objfolder import unlink_object_file
from ..objects.packlog import log_names
from ..objects.packlog import records as logged_records

if TYPE_CHECKING:
    from .state import StoreState


def merge_logs(store: StoreState, at_least: int = MERGE_AT) -> tuple[int, int] | None:
    """Merge the object logs when there are more than ``at_least``; the (logs, packs)
    merged, or None when nothing was done (few logs, the gc lock busy, nothing to merge).
    A failure leaves every log as it was (the pack written is then a second copy, or
    removed by gc as an unfinished write)."""
    folder = store.objects.root / "log"
    names = log_names(folder)
    if len(names) <= at_least:
        return None
    # past the count only, an lstat a log: an empty one (made ahead by a writer killed
    # before its first frame, redteam33) holds nothing to merge and costs an open a
    # listing's entry; it counted toward the merge for the hour before it may go
    empty = _empty_logs(folder, names)
    if len(names) - len(empty) <= at_least:
        stale = [n for n, age in empty.items() if age > _stray_age()]
        if stale:
            _remove_stale(store, folder, stale)
        return None
    # past the count, gc's module (``_merge_locked``): every fresh CLI call asks once its
    # answer is out, and most find few logs; it was ~1 ms of that serial tail (cold25)
    with try_rw_lock(store.root / "locks" / "gc", exclusive=True) as held:
        if not held:
            return None  # a writer or a gc now: a later process merges
        return _merge_locked(store)


def _stray_age() -> float:
    from .gc import STRAY_AGE_S

    return STRAY_AGE_S


def _empty_logs(folder: Path, names: list[str]) -> dict[str, float]:
    """The logs of ``names`` with no byte, each with its age in seconds."""
    now = time.time()
    out: dict[str, float] = {}
    for name in names:
        try:
            st = os.lstat(folder / name)
        except OSError:
            continue
        if st.st_size == 0:
            out[name] = now - st.st_mtime
        # a link or a FIFO planted there is never read (``open_regular``): not counted
        elif not stat.S_ISREG(st.st_mode):
            out[name] = 0.0
    return out


def _remove_stale(store: StoreState, folder: Path, stale: list[str]) -> None:
    """Remove empty logs older than gc's ``STRAY_AGE_S``, under the gc lock taken only if
    free (no writer appends meanwhile; a live writer's log made ahead and left empty that
    long starts a new log at its next frame: ``LogFile.usable``)."""
    with try_rw_lock(store.root / "locks" / "gc", exclusive=True) as held:
        if not held:
            return
        for name in stale:
            try:
                if os.lstat(folder / name).st_size == 0:
                    unlink_object_file(folder / name)
            except (OSError, TurnbackError):
                pass  # gone, or not ours to remove: gc names it


def _merge_locked(store: StoreState) -> tuple[int, int] | None:
    """``merge_logs``'s work, under the gc lock held exclusively."""
    from .gc import STRAY_AGE_S

    # each log read whole: it is removed below, with any record a line lost from the
    # middle of checkpoints.jsonl while later ones stayed (the open's look stops there)
    store.restore_records_locked(every=True)
    fsync = store.config.fsync_commits
    if fsync and store.index.path.exists():
        fsync_file(store.index.path)
    return store.objects.merge_logs(fsync, stray_age=STRAY_AGE_S)


def fold_held(store: StoreState) -> bool:
    """Fold this process's log, whose held batches went out as raw frames
    (``ObjectStore.raw_held``: a server, off its answer's path), into a pack at the
    configured level; False when nothing was to be done, or a lock was busy (a gc or a
    merge holds the gc lock, another process folds, a write of this process is under
    way: the next quiet moment tries again).

    Off every writer's path (redteam33: a fold under the exclusive gc lock and the
    folder's write lock made a checkpoint asked meanwhile wait 40-170 ms): the gc lock
    is held shared, as a writer holds it, so gc and merges (exclusive) stay out while
    writers go on; ``locks/fold`` keeps two processes' folds from taking the same small
    packs. Under the store's mutex, for two assignments, this process's log is swapped
    for a new one (``detach_log``): no frame goes to the old one after, and no record
    of it is between its frame and its line. Then, with nothing held that a checkpoint
    needs: the old log's records put back into ``checkpoints.jsonl`` and synced, its
    objects written into a pack and synced, only then the log removed. Only this
    process's log: another's may be mid-append, which only the exclusive lock rules
    out (those go with the merges past ``MERGE_AT`` and gc)."""
    objects = store.objects
    if not objects.unfolded:
        return False
    locks = store.root / "locks"
    with try_rw_lock(locks / "gc", exclusive=False) as held, \
            try_rw_lock(locks / "fold", exclusive=True) as folding:
        if not held or not folding:
            return False
        fsync = store.config.fsync_commits
        if not store._mutex.acquire(blocking=False):
            return False  # a write of this process: its own fold comes once quiet
        try:
            log = objects.detach_log(fsync)
        finally:
            store._mutex.release()
        if log is None:
            return not objects.unfolded
        _restore_one(store, log, fsync)
        objects.fold_log(log, fsync)
    return True


def _restore_one(store: StoreState, log: str, fsync: bool) -> None:
    """Put back into ``checkpoints.jsonl`` any record of ``log`` it lacks, and sync the
    file: the log goes once its objects are packed, and a line appended without a wait
    must not outlive it only in the page cache."""
    folder = store.objects.root / "log"
    store.index.restore(
        lambda missing, _every: logged_records(folder, missing, every=True, only=log),
        store.objects.exists, fsync=fsync)
    if fsync and store.index.path.exists():
        fsync_file(store.index.path)


def fold_left(store: StoreState) -> bool | None:
    """Merge the logs when another's holds raw frames (a server killed before its quiet
    moment: ~12 times the bytes folded, redteam33), once, in a starting server's first
    quiet moment: True when merged, False when there were none, None when the gc lock
    was busy (tried again). Under the exclusive gc lock, as any merge: the writer of
    those logs may be alive, and only that lock keeps a frame from going with its log."""
    if not store.objects.raw_logs():
        return False
    with try_rw_lock(store.root / "locks" / "gc", exclusive=True) as held:
        if not held:
            return None
        _merge_locked(store)
    return True
