"""The store's checkpoint operations: snapshots of the workspace (full, incremental, prepared
ahead, imported), and reading them back (changes, diffs, file contents)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from typing import Any

from ..errors import InvalidInput, LinkedInStore, NotFound, TurnbackError
from ..events import (
    JSON,
    Kind,
    check_id,
    new_id,
    now_iso,
)
from ..fs.folders import Folder, open_dir, open_root
from ..fs.jsonl import dumps
from ..fs.locks import rw_lock, try_rw_lock
from ..fs.paths import display, normalize
from ..fs.reading import read_regular
from ..models import Checkpoint
from ..objects.objectstore import BLOB
from ..objects.trees import DIR, LINK, MAX_DEPTH, Entry, Tree, is_executable
from ..snapshot import changes as changes_mod
from ..snapshot.nodes import PastBound, Progress, ScanResult
from .checkpoint_index import bad_ids as _bad_record
from .record_folders import RecordFolders, open_record_folders
from .session_ops import HEAD, WORKSPACE_SESSION, SessionOps, _Head
from .state import replaced_while_recorded

TYPE_CHECKING = False  # not typing's: see turnback/__init__.py
if TYPE_CHECKING:
    from ..results import Change, FileContent  # a checkpoint makes neither (cold28)

MAX_TEXT = 8 * 1024 * 1024  # fileContent returns text up to this size
WARM_MAX = 64  # prepare() reads the previous versions of at most this many files
# warm_trees() reads trees until the tree cache holds this many entries (a tree read from a
# pack counts each entry twice: decoded, and its line). SPEC's 50,000-file workspace: 102,000
# (~32 MB); the cache's bound (CACHE_ENTRIES) leaves room for the trees checkpoints make.
WARM_TREE_ENTRIES = 120_000


def _carry_skipped(before: list[JSON], now: list[JSON], looked: Iterable[str]) -> list[JSON]:
    """An earlier scan's skipped files that a later incremental scan, which looked again
    at ``looked`` only, neither looked at nor skipped itself; then its own."""
    again = {str(s.get("path")) for s in now} | set(looked)
    return [s for s in before if str(s.get("path")) not in again] + now


# ``checkpoint_now``'s bound on the changed files' bytes: reading, hashing and compressing
# 1 MiB is a few ms, the most a server's event loop should be held for (SPEC's at-once
# checkpoint is 10 files of ~6 KB)
NOW_BYTES = 1 << 20


class CheckpointOps(SessionOps):
    """Checkpoints of the store (see ``Store``)."""

    def checkpoint(
        self,
        label: str | None = None,
        session_id: str | None = None,
        auto: bool = False,
        dirty: Iterable[str] | None = None,
        progress: Progress | None = None,
        save_later: bool = False,
    ) -> Checkpoint:
        """Snapshot the whole workspace (minus ignores) as a checkpoint event.

        ``save_later``: leave the stat cache file to ``save_scan_cache()`` (a server calls
        it after answering). The cache is no part of what the checkpoint promises: a
        crash before it is saved only makes the next process read those files again.
        """
        self.finish_rewind()
        self._check_checkpoint_args(label, session_id)
        with self._mutex, rw_lock(self.root / "locks" / "gc", exclusive=False):
            return self._checkpoint_held(label, session_id, auto, dirty, progress, save_later)

    def checkpoint_now(
        self,
        dirty: Iterable[str],
        label: str | None = None,
        session_id: str | None = None,
        auto: bool = False,
    ) -> Checkpoint | None:
        """``checkpoint(dirty=dirty, save_later=True)`` if it can go on without waiting for
        anything; None, with nothing done, if it cannot.

        For a caller that must not block (a server's event loop, ``server/jobs/shortwrite.py``):
        it runs only as an incremental scan (an earlier scan of this object to build on),
        with nothing left of an earlier write to finish first (a rewind's record, a stat
        cache to save: those take the rewind lock and sync the disk; a rewind's paths to
        look at again, any number of them), no gc since the last scan (the scan would walk
        the whole workspace), and with this
        object's mutex, the store's cross-process gc lock and the session's file lock free
        at once. If another thread or process holds one, the caller runs ``checkpoint``
        where waiting is harmless. Nor when the changed paths hold a folder (a tree moved
        in is listed whole), an ignore file (every path is in question: a walk) or files
        of more than ``NOW_BYTES`` together: the scan finds that in its own look at them,
        before it reads anything.
        """
        if (self._scan_base is None or self._unfinished is not None
                or self._refused_record is not None or self._cache_unsaved
                or self._recovery_waits is not None  # refused by ``checkpoint``'s words
                or self._own_dirty):  # a rewind's paths, to look at again: any number
            return None
        dirty = frozenset(dirty)
        self._check_checkpoint_args(label, session_id)
        if not self._mutex.acquire(blocking=False):
            return None
        try:
            with try_rw_lock(self.root / "locks" / "gc", exclusive=False) as held:
                if not held:
                    return None
                sid = session_id or WORKSPACE_SESSION
                try:
                    # the session's lock looked at in the folders its record and event
                    # go to (opened once, kept to the commit), not by path: a store
                    # replaced before this call got ``sessions/`` and the lock made there
                    folders = open_record_folders(self._root_held, self.backend, sid)
                except (OSError, NotFound, LinkedInStore):
                    return None  # ``checkpoint`` says what is wrong (a replaced store:
                    # ``Conflict``, raised as the root's look after the scan raises it)
                with folders:
                    return self._checkpoint_at_once(label, session_id, auto, dirty, folders)
        except PastBound:
            return None
        finally:
            self._mutex.release()

    def _checkpoint_at_once(self, label: str | None, session_id: str | None, auto: bool,
                            dirty: frozenset[str], folders: RecordFolders
                            ) -> Checkpoint | None:
        """``checkpoint_now``'s checkpoint, under its mutex and gc lock, in ``folders``."""
        # the checkpoint's event takes the session's file lock, waiting up to 30 s for
        # another process (one stopped holding it: ^Z on an append)
        if not self.backend.append_free_now(session_id or WORKSPACE_SESSION, folders.sessions):
            return None
        if self._gc_generation() != self._gc_seen:
            return None  # a gc since (any process's): the scan would walk it all
        # the scan's own look at each changed path bounds it (``NOW_BYTES``, no folder
        # listed whole, no walk) and sizes its read: one ``lstat`` a path, and a file grown
        # after it is read only as far as it was admitted. ``checked``: the mark was just
        # looked at, under the gc lock held since; the scan's own ``_check_gc`` would read
        # it again. The root is looked at once, after the scan, before the commit
        # (``_checkpoint_held``; trust29)
        return self._checkpoint_held(label, session_id, auto, dirty, None, True,
                                     bound=NOW_BYTES, checked=True, folders=folders)

    def _check_checkpoint_args(self, label: str | None, session_id: str | None) -> None:
        if session_id is not None:
            check_id(session_id, "session id")
            if not self.backend.exists(session_id):
                raise self.backend.missing(session_id)
        if label is not None and not isinstance(label, str):
            raise InvalidInput("label must be a string")

    def _checkpoint_held(self, label: str | None, session_id: str | None, auto: bool,
                         dirty: Iterable[str] | None, progress: Progress | None,
                         save_later: bool, bound: int | None = None, checked: bool = False,
                         folders: RecordFolders | None = None) -> Checkpoint:
        """The checkpoint itself; the caller holds the mutex and the gc lock. ``bound``:
        the scan's (``Scanner.scan``); ``PastBound`` with nothing done past it.
        ``checked``: the caller found no gc since the last scan under the gc lock it
        still holds (``_snapshot``). The root is looked at here, after the scan, for
        every caller. ``folders``: where the record and event go (the caller's, open),
        else opened in ``_commit_checkpoint``."""
        res, skipped = self._snapshot(dirty, progress, bound, checked)
        # the root looked at again before the commit: a store named with ``--store`` is
        # written by path, and one replaced during a scan that met no missing object
        # took the checkpoint into what was put there (a link's target, an empty
        # folder), naming objects left in the moved store (store27's open item;
        # checkpoint_now's too since trust29, its look before the scan moved here)
        replaced = self._replaced()
        if replaced is not None:
            self._statcache.discard()
            self._scan_base = None
            raise replaced
        try:
            cp = self._commit_checkpoint(
                res.tree, label, session_id, auto, res.files, res.bytes, skipped,
                folders=folders)
        except BaseException:
            self._statcache.discard()
            self._scan_base = None
            raise
        # saved only now: a crash before the commit must not leave a cache file that
        # names objects no checkpoint holds (the next checkpoint would trust them)
        if save_later:
            self._cache_unsaved = True  # saved after ``_check_gc``'s look at the root
        elif self._root_held.replaced():
            # the record went into the store looked at, wherever it went; its stat cache,
            # written by path, would go into what is at the path now (a link's target)
            self._statcache.discard()
        else:
            try:
                self.scanner.save_cache()
            except LinkedInStore:  # a link in cache/: the recorded checkpoint stands
                self._statcache.discard()
        return cp

    def save_scan_cache(self) -> None:
        """Save the stat cache a ``checkpoint(save_later=True)`` or a rewind finished later
        left in memory; nothing if there is none.

        Called first by every write and scan of this object (through ``finish_rewind``
        and ``_working_tree``): the next scan builds on the saved state. As at ``close``,
        a failure only loses the cache (the next scan reads those files again), and a
        gc since the scan (any process) drops it instead (``_check_gc``).
        """
        if not self._cache_unsaved:
            return
        with self._mutex:
            if not self._cache_unsaved:
                return
            self._cache_unsaved = False
            try:
                with rw_lock(self.root / "locks" / "gc", exclusive=False):
                    self._check_gc()
                    self.scanner.save_cache()
            except (OSError, TurnbackError):
                self._statcache.discard()

    def _snapshot(self, dirty: Iterable[str] | None, progress: Progress | None,
                  bound: int | None = None, checked: bool = False
                  ) -> tuple[ScanResult, list[JSON]]:
        """Store the workspace's files and trees (durable, not yet committed) and return
        the scan with the files it skipped. The caller holds the mutex and the gc lock,
        commits (``_commit_checkpoint``, which writes a held batch with the record), then
        calls ``scanner.save_cache()``; a caller that does not commit writes the held batch
        (``objects.flush_held``) before anything saves the stat cache. ``checked``: the
        caller did ``_check_gc``'s looks under the gc lock it holds (no gc can run until
        it lets go), so they are not taken twice (``checkpoint_now``: a file read and
        five system calls a checkpoint)."""
        if not checked:
            self._check_gc()
        base = self._scan_base if dirty is not None else None
        if base is not None and dirty is not None:
            dirty = {*dirty, *self._own_dirty}
        own, self._own_dirty = self._own_dirty, set()
        carried, self._prepared_skipped = self._prepared_skipped, []
        try:
            here = self._workspace_here()
            # a small batch is held for the commit: its objects and the record in one
            # log frame, one disk wait (objects/packlog.py)
            with self.objects.batch(fsync=self.config.fsync_commits,
                                    refresh=self._packs_stale(), hold=True):
                res = self.scanner.scan(base=base, dirty=dirty if base else None,
                                        progress=progress, save_cache=False, bound=bound)
                if self._workspace_here() != here:
                    raise self._workspace_gone()
            self._scan_base = res.tree
            self._walked = self._walked or base is None
            if self.config.fsync_commits:
                self.objects.sync(keep_held=True)
        except PastBound:
            # declined before any file was read: the batch aborted, the base and the stat
            # cache stand, and what this scan took over is left for the next one
            self._own_dirty, self._prepared_skipped = own, carried
            raise
        except BaseException:
            # the stat cache may name objects of a pack that was never finished
            self._statcache.discard()
            self._scan_base = None
            raise
        # a prepared scan's skipped files hold unless this scan looked again
        skipped = (_carry_skipped(carried, res.skipped, dirty or ())
                   if base is not None else res.skipped)
        return res, skipped

    def _workspace_here(self) -> tuple[int, int]:
        """The workspace folder's identity, or ``NotFound`` naming it when it is gone. A
        scan lists a missing folder as empty: with the store kept elsewhere (``--store``,
        ``turnback.storePath``), a checkpoint of a workspace moved or removed under a
        running server recorded no files, and a rewind to it, once the folder was back,
        removed every file. Looked at before the scan and after it (a folder moved or
        removed while it ran): two ``stat`` calls."""
        try:
            st = os.stat(self.workspace)
        except (FileNotFoundError, NotADirectoryError):
            raise self._workspace_gone() from None
        return st.st_dev, st.st_ino

    def _workspace_gone(self) -> NotFound:
        return folder_gone("workspace", self.workspace, "no checkpoint was made or prepared")

    def prepare(self, dirty: Iterable[str] | None) -> bool:
        """Do the next checkpoint's reading ahead, without making a checkpoint.

        ``dirty`` are the paths a watcher saw change since this object's last scan. They
        are read, hashed and packed, and the folders on their paths rebuilt, exactly as
        an incremental checkpoint would, and made durable; the tree becomes the base of
        the next scan. A checkpoint that follows with nothing changed meanwhile then
        only commits that tree (a server prepares while the workspace is quiet, so the
        agent that asks for a checkpoint does not wait for its files to be read).

        Until a checkpoint commits them, the new objects are garbage to ``gc``, which
        makes every process drop its stat cache (``_check_gc``). Returns False, reading
        nothing, when there is no previous scan to build on.

        ``dirty`` None: the whole workspace is walked, as a full checkpoint would, and
        becomes the base (a background server that has just started its watcher walks at
        once, so the first checkpoint asked of it reads only what changed since:
        ``server/background.py``).
        """
        self.finish_rewind()
        with self._mutex, rw_lock(self.root / "locks" / "gc", exclusive=False):
            self._check_gc()
            base = self._scan_base
            if base is None and dirty is not None:
                return False
            paths = None if dirty is None else {*dirty, *self._own_dirty}
            if paths is not None and not paths:
                return True
            self._own_dirty = set()
            try:
                here = self._workspace_here()  # a base read from a gone folder: empty
                with self.objects.batch(fsync=self.config.fsync_commits,
                                        refresh=self._packs_stale()):
                    res = self.scanner.scan(base=base if paths is not None else None,
                                            dirty=paths, save_cache=False)
                    if self._workspace_here() != here:
                        raise self._workspace_gone()
                if self.config.fsync_commits:
                    self.objects.sync()
            except BaseException:
                self._statcache.discard()
                self._scan_base = None
                raise
            self._scan_base = res.tree
            if paths is None:
                self._walked = True
                self._prepared_skipped = res.skipped  # the walk looked at every path
                cps = self.index.all()
                if cps and cps[-1].tree == res.tree:
                    # nothing new since the last checkpoint: the cache names only committed
                    # objects. Saved now, it keeps this walk's folder records, which the
                    # next (incremental) scan's save would drop: the next fresh process
                    # then checks folders by them (+100 ms of its CPU on SPEC's workspace
                    # when they were dropped, bench/RESULTS.md)
                    self.scanner.save_cache()
                return True
            self._warm_previous(paths)
            self._prepared_skipped = _carry_skipped(self._prepared_skipped, res.skipped, paths)
            return True

    @property
    def walked(self) -> bool:
        """Whether a walk happened since the last ``warm_trees``."""
        return self._walked

    def warm_trees(self, budget: int = WARM_TREE_ENTRIES) -> int:
        """After a walk, read the folder trees of its result into memory; returns how many.

        For a process that keeps the store open (a server): a walk reuses its folders'
        records and decodes no tree, so the next incremental checkpoint (or a rewind's
        safety checkpoint and diff) would read the ~60 trees on 10 changed paths out of
        packs. Read here, once per walk, up to ``budget`` entries (breadth first), they
        are not. Does nothing when no walk happened since the last call.
        """
        with self._mutex:
            base = self._scan_base
            if not self._walked or base is None:
                return 0
            self._walked = False
            try:
                return self.trees.warm(base, budget)
            except TurnbackError:
                return 0  # a damaged tree: the next checkpoint that needs it says so

    def _warm_previous(self, paths: set[str]) -> None:
        """Read the last checkpoint's versions of ``paths`` into the pack block cache.

        Those are what a rewind of these changes writes back, and the pack blocks that
        hold them are mostly cold (on this benchmark's VM, a disk read and a partial
        block decompression each, about 0.4 ms a file). Reading them here, while the
        workspace is quiet, takes that off the rewind an agent or a user waits for.
        """
        cps = self.index.all()
        if not cps:
            return
        tree = cps[-1].tree
        for path in sorted(paths)[:WARM_MAX]:
            try:
                entry = self.trees.lookup(tree, path)
                if entry is not None and entry.mode != DIR:
                    self.objects.warm(entry.hash)
            except TurnbackError:
                return  # a damaged checkpoint: the rewind will say so

    def _commit_checkpoint(
        self, tree: str, label: str | None, session_id: str | None, auto: bool, files: int,
        nbytes: int, skipped: list[JSON], *, partial: bool = False,
        absent: list[str] | None = None, parent: str | _Head | None = HEAD,
        ts: str | None = None, cp_id: str | None = None,
        folders: RecordFolders | None = None,
    ) -> Checkpoint:
        """Append the checkpoint's record (fsynced per policy) and its session event.

        When the scan's objects are held (a small batch), the record goes with them into
        one log frame, synced per policy; its line in ``checkpoints.jsonl`` then needs no
        wait of its own: a crash that loses it there is made whole from the log at the
        next open (``CheckpointIndex.restore``). (A rewind's safety checkpoint syncs its
        frame with its journal instead: ``RewindOps._commit_safety``.) ``folders``: where
        the record and event go, open (``checkpoint_now``'s: its ``sessions/`` opened
        again here, as it was held across the scan); else opened here, before the log
        frame: a ``sessions/`` removed or swapped since the look is refused with nothing
        of the checkpoint written (not even the frame, which the next open would
        put back as a record without its event)."""
        cp = self._new_checkpoint(tree, label, session_id, auto, files, nbytes, skipped,
                                  partial=partial, absent=absent, ts=ts, cp_id=cp_id)
        own = None
        assert cp.session_id is not None
        if folders is None:
            folders = own = open_record_folders(self._root_held, self.backend, cp.session_id)
        else:
            # held across the scan (``checkpoint_now``'s lock look): ``sessions/`` renamed
            # aside meanwhile would get the event while the record is listed (redteam43)
            folders.reopen_sessions(self.backend, cp.session_id)
        try:
            logged = self.objects.commit(dumps(cp.to_json()), fsync=self.config.fsync_commits)
            try:
                self._record(cp, parent, folders, fsync=self.config.fsync_commits and not logged)
            except (OSError, TurnbackError) as exc:
                # a store replaced since the look: what the record's or the event's step
                # met at the path (a link, no session) is not what happened (redteam40).
                # Looked at only on a failure: no system call on the way that succeeds
                if not self._root_held.replaced() or self._root_held.unreadable is not None:
                    raise
                raise replaced_while_recorded(self.root, cp.id) from exc
        finally:
            if own is not None:
                own.close()
        return cp

    def _record(self, cp: Checkpoint, parent: str | _Head | None, folders: RecordFolders,
                *, fsync: bool) -> None:
        """``cp``'s record, its lock and its session event, all in ``folders``: one ``dup``
        of the held root (``HeldFolder.folder``) and the session's folder opened there,
        into the store whose root was looked at, wherever its path leads now (a store
        replaced after the look got the lock file, or, a copy, the event naming a record
        it lacks). None held (Windows): by path."""
        self.index.add(cp, fsync=fsync, folder=folders.root)
        self._checkpoint_event(cp, parent, folders.sessions)

    def _new_checkpoint(
        self, tree: str, label: str | None, session_id: str | None, auto: bool, files: int,
        nbytes: int, skipped: list[JSON], *, partial: bool = False,
        absent: list[str] | None = None, ts: str | None = None, cp_id: str | None = None,
    ) -> Checkpoint:
        """A checkpoint's record, not yet written anywhere."""
        sid = session_id or self._workspace_session()
        cid = cp_id or new_id()[:12]
        when = ts or now_iso()
        return Checkpoint(cid, label or f"checkpoint {when[:19].replace('T', ' ')}", when, tree,
                          sid, f"cp-{cid}", auto, partial, files, nbytes, skipped, absent or [])

    def _checkpoint_event(self, cp: Checkpoint, parent: str | _Head | None,
                          sessions: Folder | None) -> None:
        """The session event that says ``cp`` was taken (its id ``cp.event_id``);
        ``sessions``: its session's folder, open (``RecordFolders``), else by path."""
        assert cp.session_id is not None and cp.event_id is not None
        self.append(cp.session_id, Kind.CHECKPOINT,
                    {"checkpoint": cp.id, "label": cp.label, "auto": cp.auto,
                     "files": cp.files, "bytes": cp.bytes, "partial": cp.partial,
                     "skipped": len(cp.skipped)},
                    parent=parent, ts=cp.ts, event_id=cp.event_id, sessions=sessions)

    def import_checkpoint(
        self,
        files: dict[str, bytes | None],
        session_id: str,
        event_id: str | None = None,
        label: str = "",
        ts: str | None = None,
        partial: bool = True,
        checkpoint_id: str | None = None,
    ) -> Checkpoint:
        """A checkpoint of some files given by content (None: known absent), for importers."""
        if checkpoint_id is not None:
            check_id(checkpoint_id, "checkpoint id")
            existing = self.index.get(checkpoint_id)
            if existing is not None:
                return existing
        nested: dict[str, Any] = {}
        absent: list[str] = []
        nbytes = 0
        count = 0
        with rw_lock(self.root / "locks" / "gc", exclusive=False):
            with self.objects.batch(fsync=self.config.fsync_commits):
                for raw_path, content in sorted(files.items()):
                    rel = normalize(raw_path, "checkpoint file path")
                    if rel.count("/") >= MAX_DEPTH:
                        # a reader walks no deeper (fsck would call the checkpoint damaged),
                        # and _write_nested recurses once a folder
                        raise InvalidInput(
                            f"checkpoint file path {rel[:80]!r}... nests more than {MAX_DEPTH} "
                            "folders deep; a checkpoint holds at most that many")
                    self._refuse_reserved([rel], "checkpoint file path")
                    if content is None:
                        absent.append(rel)
                        continue
                    parts = rel.split("/")
                    node = nested
                    for part in parts[:-1]:
                        nxt = node.setdefault(part, {})
                        if not isinstance(nxt, dict):
                            raise InvalidInput(f"checkpoint file path {rel!r} runs through a file")
                        node = nxt
                    node[parts[-1]] = Entry("f", self.objects.put(BLOB, content), len(content))
                    nbytes += len(content)
                    count += 1
                tree = self._write_nested(nested)
            # the pack is complete and durable once the batch ends: only then commit,
            # still under the gc lock so the new objects cannot be collected meanwhile
            if self.config.fsync_commits:
                self.objects.sync()
            return self._commit_checkpoint(tree, label, session_id, True, count, nbytes, [],
                                           partial=partial, absent=absent,
                                           parent=event_id if event_id else HEAD, ts=ts,
                                           cp_id=checkpoint_id)

    def adopt_checkpoints(
        self, build: Callable[[], list[Checkpoint]]
    ) -> list[Checkpoint]:
        """Record checkpoints whose trees ``build`` writes (pulled history, ``sharing/``).

        ``build`` runs under the gc lock, inside one object batch: the objects it stores
        cannot be collected before the records naming them are committed. Each record is
        checked as a record read from ``checkpoints.jsonl`` would be, its tree is walked
        (names, bounds, no path into a ``.git`` folder or the store), and an id already
        used here is skipped: a pulled record never replaces one of this store's.
        """
        with rw_lock(self.root / "locks" / "gc", exclusive=False):
            with self.objects.batch(fsync=self.config.fsync_commits):
                records = build()
            if self.config.fsync_commits:
                self.objects.sync()
            out = []
            checked: set[tuple[str, str]] = set()
            for cp in records:
                if _bad_record(cp) is not None:
                    raise InvalidInput(f"pulled checkpoint {cp.id[:80]!r}: {_bad_record(cp)}")
                self._refuse_reserved(self._new_paths(cp.tree, checked),
                                      "pulled checkpoint path")
            with RecordFolders(self._root_held.folder(), None) as held:  # as a checkpoint's
                for cp in records:
                    if self.index.get(cp.id) is not None:
                        continue
                    self.index.add(cp, fsync=self.config.fsync_commits, folder=held.root)
                    out.append(cp)
            return out

    def _write_nested(self, nested: dict[str, Any]) -> str:
        tree: Tree = {}
        for name, item in nested.items():
            if isinstance(item, dict):
                h = self._write_nested(item)
                tree[name] = Entry(DIR, h, 0)
            else:
                tree[name] = item
        return self.trees.put(tree)

    def _new_paths(self, root: str, checked: set[tuple[str, str]]) -> list[str]:
        """Every path of tree ``root`` (folders too) not under a (folder, tree) already in
        ``checked``: successive checkpoints share most folders, and checking each one's
        50,000 paths again made a pull of 100 checkpoints spend minutes here."""
        out: list[str] = []
        stack = [("", root)]
        while stack:
            prefix, h = stack.pop()
            if (prefix, h) in checked:
                continue
            checked.add((prefix, h))
            for name, e in self.trees.get(h).items():
                out.append(prefix + name)
                if e.mode == DIR:
                    stack.append((prefix + name + "/", e.hash))
        return out

    def checkpoints(self, session_id: str | None = None) -> list[Checkpoint]:
        """By time; checkpoints of one millisecond in the order they were taken. A
        damaged ``checkpoints.jsonl`` is mended first from the object logs
        (``repair_index``): a checkpoint whose line was lost is listed again."""
        self.repair_index()
        items = self.index.all()
        if session_id is not None:
            items = [c for c in items if c.session_id == session_id]
        return items

    def resolve_checkpoint(self, ref: object, where: str = "checkpoint") -> Checkpoint:
        self.repair_index()  # as for a listing: a rewind to a checkpoint whose line was lost
        return self.index.resolve(ref, where)

    def _working_tree(self) -> str:
        """The working tree's root hash, computed without storing anything."""
        self.save_scan_cache()  # this scan starts the cache's next state
        with self._mutex:
            self._check_gc()
            return self.scanner.scan(write=False).tree

    def _reader(self, working: bool) -> Callable[[str, Entry], bytes]:
        def read_obj(_path: str, entry: Entry) -> bytes:
            return self.objects.get(BLOB, entry.hash)

        def read_disk(path: str, entry: Entry) -> bytes:
            # never through a link (fs/folders.py): a folder swapped for a link to
            # ~/.ssh while the diff is asked must not show what lies there
            *folders, name = path.split("/")
            try:
                with open_root(str(self.workspace)) as root:
                    dfd = open_dir(root, folders, create=False)
                with dfd:
                    if entry.mode == LINK:
                        return os.fsencode(dfd.readlink(name))
                    return read_regular(name, folder=dfd, limit=self.config.size_cap_bytes)
            except (OSError, TurnbackError):
                return b""

        return read_disk if working else read_obj

    def changes(self, a: str, b: str | None = None, paths: list[str] | None = None
                ) -> list[Change]:
        """What changed from checkpoint ``a`` to ``b`` (or to the working tree)."""
        ca = self.resolve_checkpoint(a, "from")
        tb = self.resolve_checkpoint(b, "to").tree if b is not None else self._working_tree()
        sel = [normalize(p) for p in paths] if paths else None
        read_a, read_b = self._reader(False), self._reader(b is None)
        out = []
        for path, old, new in changes_mod.diff_trees(self.trees, ca.tree, tb):
            if sel is not None and not any(path == p or path.startswith(p + "/") for p in sel):
                continue
            out.append(changes_mod.describe(path, old, new, read_a, read_b))
        return out

    def diff(self, a: str, b: str | None = None, path: str | None = None) -> str:
        """Unified diff text (git style) from ``a`` to ``b`` or the working tree."""
        ca = self.resolve_checkpoint(a, "from")
        tb = self.resolve_checkpoint(b, "to").tree if b is not None else self._working_tree()
        sel = normalize(path) if path else None
        read_a, read_b = self._reader(False), self._reader(b is None)
        parts = []
        for p, old, new in changes_mod.diff_trees(self.trees, ca.tree, tb):
            if sel is not None and not (p == sel or p.startswith(sel + "/")):
                continue
            parts.append(changes_mod.unified(
                p, read_a(p, old) if old else None, read_b(p, new) if new else None,
                ca.id, b or "working"))
        return "".join(parts)

    def read_file(self, checkpoint: str, path: str) -> bytes | None:
        cp = self.resolve_checkpoint(checkpoint)
        entry = self.trees.lookup(cp.tree, normalize(path))
        if entry is None or entry.mode == DIR:
            return None
        return self.objects.get(BLOB, entry.hash)

    def file_content(self, checkpoint: str, path: str) -> FileContent:
        from ..results import FileContent  # a checkpoint makes none: imported here (cold28)

        cp = self.resolve_checkpoint(checkpoint)
        rel = normalize(path)
        entry = self.trees.lookup(cp.tree, rel)
        if entry is None or entry.mode == DIR:
            return FileContent(rel, False)
        data = self.objects.get(BLOB, entry.hash)
        kind = ("symlink" if entry.mode == LINK
                else "executable" if is_executable(entry.mode) else "file")
        binary = changes_mod.is_binary(data)
        text = None
        if not binary and len(data) <= MAX_TEXT:
            text = data.decode("utf-8")
        return FileContent(rel, True, binary, len(data), text, kind)


def folder_gone(what: str, path: object, nothing: str) -> NotFound:
    """The error for the workspace or store folder ``what`` gone since the store was opened
    (moved or removed while a server ran, the store kept elsewhere), saying ``nothing`` was
    done and where to open the store: a checkpoint's, a read-ahead's and a rewind's."""
    return NotFound(
        f"the {what} folder {display(str(path))} is gone (moved or removed since this store "
        f"was opened): {nothing}; open the store again where the folder is now (restart "
        "the server there)")
