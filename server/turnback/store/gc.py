"""Garbage collection and retention: storage stays bounded.

Retention drops checkpoints (never the newest, never one the operation log needs
to undo the last operation); then objects no remaining checkpoint reaches are
deleted. gc holds the store's gc lock exclusively, so no checkpoint can be
writing objects it has not yet committed while unreferenced objects are swept.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import TurnbackError
from ..events import parse_iso
from ..fs import instore
from ..fs.atomic import atomic_write, fsync_file
from ..fs.folders import identity, open_dir
from ..fs.locks import rw_lock
from ..fs.privacy import DIR_MODE
from ..fs.tempnames import TMP_PREFIX
from ..fs.walk import walk
from ..models import Checkpoint
from ..objects.objfolder import unlink_in_store
from ..results import GcResult

if TYPE_CHECKING:
    from .state import StoreState

STRAY_AGE_S = 3600  # temp files older than this belong to dead writers


def _identity(path: str | Path) -> tuple[int, int] | None:
    """The folder at ``path`` (followed, as ``realpath`` did), by device and inode."""
    try:
        return identity(os.stat(path))
    except OSError:
        return None


def stray_temps(store: StoreState) -> Iterator[Path]:
    """Files a writer that died left half-written anywhere in the store.

    Objects (and unfinished packs) as ``ObjectStore`` knows them; everywhere else
    (sessions, index, caches, the journal), the ``.tmp-*`` files of ``atomic_write``.
    """
    yield from store.objects.stray_temps()
    objects_dir = _identity(store.objects.root)
    for dirpath, dirnames, filenames in walk(store.root):
        # the objects folder told by its identity, one ``stat`` a folder: ``realpath``
        # looked at every folder above each (a chain of 1,100 planted in the store: 44 s)
        dirnames[:] = [d for d in dirnames
                       if _identity(os.path.join(dirpath, d)) != objects_dir]
        for name in filenames:
            if name.startswith(TMP_PREFIX):
                yield Path(dirpath) / name


@dataclass(slots=True)
class _Plan:
    drop: list[Checkpoint]
    keep: list[Checkpoint]


def _retention(store: StoreState, items: list[Checkpoint], keep_last: int | None,
               keep_days: float | None) -> _Plan:
    protected: set[str] = set()
    last_op = store.oplog.last()
    if last_op is not None:
        for key in ("safety", "checkpoint"):
            v = last_op.get(key)
            if isinstance(v, str):
                protected.add(v)
    if items:
        protected.add(items[-1].id)
    if keep_last is None and keep_days is None:
        return _Plan([], items)
    now = time.time()
    drop, keep = [], []
    for i, cp in enumerate(items):
        newest_rank = len(items) - i  # 1 = newest
        young = False
        if keep_days is not None:
            t = parse_iso(cp.ts)
            young = t is not None and now - t <= keep_days * 86400
        recent = keep_last is not None and newest_rank <= keep_last
        if cp.id in protected or young or recent:
            keep.append(cp)
        else:
            drop.append(cp)
    return _Plan(drop, keep)


def forget_caches(store: StoreState) -> None:
    """Make every process stop trusting its stat cache: it may name objects now gone.

    The file goes, and the generation mark tells running processes to drop theirs.
    """
    instore.unlink(store.scanner.statcache.path)  # through no link swapped in
    store.objects.recent.clear()  # this process's kept blobs: one may be gone now
    gen = store.root / "cache" / "gc-generation"
    atomic_write(gen, f"{time.time_ns()}-{os.getpid()}".encode(), fsync=False)


@contextmanager
def _gc_lock(store: StoreState) -> Iterator[None]:
    """The exclusive gc lock, in ``locks/`` of the held root (made there if missing): by
    path, a store replaced before the gc got an empty ``locks/gc`` made where its path led
    before the look that refused it (trust32's item; trust35). Where no root is held
    (Windows), by path as before. A root replaced, folders by path: refused as replaced."""
    root = store._root_held.folder()
    if root is None:
        with rw_lock(store.root / "locks" / "gc", exclusive=True):
            yield
        return
    try:
        try:
            locks = open_dir(root, ["locks"], create=True, mode=DIR_MODE)
        except (OSError, TurnbackError):
            _refuse_if_replaced(store)  # told as replaced, not as what the open met
            raise
    finally:
        root.close()
    try:
        with rw_lock(store.root / "locks" / "gc", exclusive=True, folder=locks):
            yield
    finally:
        locks.close()


def _refuse_if_replaced(store: StoreState) -> None:
    """``Conflict`` where the store's root is no longer the folder this process opened (one
    ``stat``). Asked before each of a gc's steps that write or remove by path: looked at
    only at the start (trust34), a store replaced during the gc (a copy moved in, under
    its exclusive lock) got the later steps where its path led, the drop lines, the caches
    forgotten, the objects removed and the repack, by this process's reading of the moved
    store (trust35). A swap within one step is not seen (RELIABILITY.md, trust35)."""
    replaced = store._replaced()
    if replaced is not None:
        raise replaced


def collect(store: StoreState, *, dry_run: bool = False, keep_last: int | None = None,
            keep_days: float | None = None, quota_bytes: int | None = None) -> GcResult:
    cfg = store.config
    keep_last = cfg.keep_last if keep_last is None else keep_last
    keep_days = cfg.keep_days if keep_days is None else keep_days
    quota_bytes = cfg.quota_bytes if quota_bytes is None else quota_bytes
    with _gc_lock(store):
        # a store replaced under this process (restored, made again, a copy moved in) is
        # not collected: every step below reaches the store by path (its listing, the
        # drop lines, the objects removed), and this process's caches (pack indexes, the
        # checkpoints read) are the moved store's. One ``stat``, under the lock
        _refuse_if_replaced(store)
        if not dry_run:
            # the logs are merged and removed below: every record they hold must be in
            # checkpoints.jsonl first (each log read whole: a line lost from the file's
            # middle too), and its objects reachable
            store.restore_records_locked(every=True)
            if cfg.fsync_commits and store.index.path.exists():
                # lines appended without a wait (a log frame holds each): synced before
                # the logs that would put them back are merged away below
                fsync_file(store.index.path)
        items = store.index.all()
        plan = _retention(store, items, keep_last, keep_days)
        keep = plan.keep
        objects = dict(store.objects.all_names())
        reachable = store.reachable(keep)
        pending = store.oplog.pending()
        if pending is not None:
            # an unfinished rewind still needs its target
            reachable |= store.reachable([Checkpoint("journal", "", "", str(pending.get("target")),
                                                     None, None)])
        if quota_bytes is not None:
            # drop the oldest automatic checkpoints while the kept objects exceed the quota
            protected = {c.id for c in _retention(store, keep, 0, None).keep}
            while sum(objects.get(n, 0) for n in reachable) > quota_bytes:
                victims = [c for c in keep if c.auto and c.id not in protected]
                if not victims:
                    break
                plan.drop.append(victims[0])
                keep = [c for c in keep if c.id != victims[0].id]
                reachable = store.reachable(keep)
        garbage = [n for n in objects if n not in reachable]
        freed = sum(objects[n] for n in garbage)
        dropped = [c.id for c in plan.drop]
        if not dry_run:
            _refuse_if_replaced(store)
            store.index.drop(dropped, fsync=cfg.fsync_commits)
            _refuse_if_replaced(store)
            if garbage:
                # before anything goes: the stat cache may name garbage (a checkpoint that
                # crashed before its commit, one retention dropped, an empty folder's tree,
                # which no checkpoint holds); a gc killed after a removal must not leave a
                # cache file that a checkpoint would trust
                forget_caches(store)
            for name in garbage:
                if store.objects.is_loose(name):
                    _refuse_if_replaced(store)
                    store.objects.remove(name)
            _refuse_if_replaced(store)
            store.objects.repack(reachable, cfg.fsync_commits)
            _refuse_if_replaced(store)
            now = time.time()
            for tmp in stray_temps(store):
                try:
                    if now - tmp.stat().st_mtime > STRAY_AGE_S:
                        unlink_in_store(store.root, tmp)  # through no link swapped in
                except OSError:
                    pass
        return GcResult(len(garbage), freed, dropped, dry_run,
                        store.disk_usage() if not dry_run else store.disk_usage() - freed)
