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

from typing import TYPE_CHECKING

from ..fs.atomic import fsync_file
from ..fs.locks import try_rw_lock
from ..objects.merging import MERGE_AT
from ..objects.packlog import log_names

if TYPE_CHECKING:
    from .state import StoreState


def merge_logs(store: StoreState, at_least: int = MERGE_AT) -> tuple[int, int] | None:
    """Merge the object logs when there are more than ``at_least``; the (logs, packs)
    merged, or None when nothing was done (few logs, the gc lock busy, nothing to merge).
    A failure leaves every log as it was (the pack written is then a second copy, or
    removed by gc as an unfinished write)."""
    folder = store.objects.root / "log"
    if len(log_names(folder)) <= at_least:
        return None
    # past the count, gc's module (``_merge_locked``): every fresh CLI call asks once its
    # answer is out, and most find few logs; it was ~1 ms of that serial tail (cold25)
    with try_rw_lock(store.root / "locks" / "gc", exclusive=True) as held:
        if not held:
            return None  # a writer or a gc now: a later process merges
        return _merge_locked(store)


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
    configured level: a merge as above, whatever the count of logs, then this process's
    next log made and named ahead of the next checkpoint. False when nothing was to be
    done, or the gc lock was busy (a writer or a gc: the next quiet moment tries again)."""
    objects = store.objects
    if not objects.unfolded:
        return False
    with try_rw_lock(store.root / "locks" / "gc", exclusive=True) as held:
        if not held:
            return False
        _merge_locked(store)
        # merged, or no frame left to merge (a gc took the logs): either way none is raw
        objects.unfolded = False
        objects.open_log(store.config.fsync_commits)
    return True

