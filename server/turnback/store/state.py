"""What every part of the store shares: its components, opened once per ``Store``, and the
few helpers several parts need (the gc mark, what checkpoints reference, the paths never
written). The operations are layered on it, each in its own module — sessions
(``session_ops``), checkpoints (``checkpoint_ops``), rewinds (``rewind_ops``) — and the
facade (``facade``) opens and closes the whole.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable
from pathlib import Path

from ..errors import Conflict, NotFound, StoreDamaged, Unsafe
from ..events import JSON
from ..fs.folders import Folder
from ..fs.heldfolder import HeldFolder
from ..fs.locks import rw_lock
from ..fs.namefold import EXACT, NameRules
from ..fs.paths import refuse_protected_path
from ..fs.reading import read_regular
from ..fs.walk import walk
from ..models import Checkpoint
from ..objects.objectstore import ObjectStore
from ..objects.packlog import records as logged_records
from ..objects.trees import DIR, TreeReader
from ..objects.walkedlogs import WalkedLogs
from ..rewind.oplog import OpLog
from ..sessions.backend import SessionBackend
from ..snapshot.ignore import IgnoreRules
from ..snapshot.scan import Scanner
from ..snapshot.statcache import StatCache
from .checkpoint_index import CheckpointIndex
from .closing import StoreMutex
from .config import FORMAT_VERSION, StoreConfig

TYPE_CHECKING = False  # not typing's: see turnback/__init__.py
if TYPE_CHECKING:
    from ..rewind.apply import Applier  # a rewind's; a checkpoint imports none of it


def replaced_store(root: Path) -> Conflict:
    """The error for a store replaced (a link, nothing or another folder put at ``root``)
    under the process that opened it."""
    return Conflict(
        f"the store {root} was replaced (made again, restored or moved) while this process "
        "was using it; nothing was recorded. Run the command again (in an editor: reload its "
        "window)")


def replaced_while_recorded(root: Path, cp_id: str) -> Conflict:
    """The error for a store replaced after the look before a checkpoint's commit and
    before its record and session event were written (redteam40): what those steps met at
    ``root`` (a link, no session) says nothing of what happened."""
    return Conflict(
        f"the store {root} was replaced (made again, restored or moved) while this process "
        f"recorded checkpoint {cp_id}: its record went into the store this process had "
        "opened, wherever that is now (or stays in that store's object log, put back when "
        f"it is next opened), not into what is at {root}. Run the command again (in an "
        "editor: reload its window)")


def replaced_before_rewind(root: Path, safety_id: str | None, why: OSError | None
                           ) -> Conflict:
    """The error for a store replaced (or, ``why``, no longer readable) after a rewind's
    look and before its journal: nothing was rewound; its safety checkpoint (``safety_id``
    when it was recorded) is in the store this process opened."""
    what = ("was replaced (made again, restored or moved)" if why is None
            else f"could not be looked at ({why.strerror or why})")
    safety = "its safety checkpoint" + (f" {safety_id}" if safety_id else "")
    return Conflict(
        f"the store {root} {what} while this process began a rewind: nothing was "
        f"rewound; {safety} went into the store this process had opened, wherever that "
        "is now (or stays in its object log, put back when it is next opened), not into "
        f"what is at {root}. Run the command again (in an editor: reload its window)")


def unreadable_store(root: Path, why: OSError) -> Conflict:
    """The error for a store whose root could not be looked at (a parent's permissions, a
    disk error): refused as a replaced one is, but named for what is true (trust30)."""
    return Conflict(
        f"the store {root} could not be looked at ({why.strerror or why}); nothing was "
        "recorded. Check that this user can reach that folder and that its disk reads, "
        "then run the command again")


class StoreState:
    """The components of one store and the state its operations share. Thread-safe for the
    server's use (``_mutex``)."""

    def __init__(
        self,
        workspace: Path,
        root: Path,
        config: StoreConfig,
        sessions: SessionBackend,
        format_version: int = FORMAT_VERSION,
        names: NameRules = EXACT,
    ) -> None:
        self.workspace = workspace
        self.names = names  # how the workspace's file system compares names (namefold.py)
        # Windows' name rules apply (fs/winnames.py); a test sets it to try them here
        self.windows = sys.platform == "win32"
        self._symlinks: bool | None = None  # whether this user may make symlinks (Windows)
        self.root = root
        self.config = config
        self.format_version = format_version
        self.backend = sessions
        self.objects = ObjectStore(root / "objects", config.compression_level)
        self.trees = TreeReader(self.objects)
        self._root_held = HeldFolder(root)  # _check_gc: still this store, not one in its place
        # a record goes into the root looked at before it, wherever that went (redteam38)
        self.index = CheckpointIndex(root / "checkpoints.jsonl", root / "cache" / "index-mended")
        self.oplog = OpLog(root)
        self.ignore = IgnoreRules(workspace, root, config.ignores)
        self._statcache = StatCache(root / "cache" / "stat.bin")
        self._gc_seen = self._gc_generation()
        self._packs_gen: str | None = None  # the gc mark when the pack indexes were last listed
        # not a bound method: a cycle through it kept a Store never closed (and its
        # descriptors) until the cyclic collector ran
        held = self._root_held
        self.objects.replaced = lambda: replaced_store(root) if held.replaced() else None
        self.scanner = Scanner(workspace, self.objects, self.trees, self.ignore, self._statcache,
                               config.size_cap_bytes)
        self.scanner.held_root = self.index.last_tree
        self._scan_base: str | None = None  # tree of this object's last scan (watcher base)
        self._own_dirty: set[str] = set()  # paths this object changed since that scan
        self._walked = False  # a full scan since the last warm_trees (whose trees it kept)
        # a committed scan's stat cache not saved yet (``checkpoint(save_later=True)``):
        # saved by ``save_scan_cache``, which every write and scan calls first
        self._cache_unsaved = False
        # what that scan skipped, when it was a prepare() no checkpoint has committed yet
        self._prepared_skipped: list[JSON] = []
        # a rewind's record and the files it replaced (not yet unlinked), for finish_rewind()
        self._unfinished: tuple[JSON, Applier] | None = None
        # this open's rewind whose files are in place but whose record was refused (a link
        # swapped in for sessions/, a full disk): recorded before the next write
        # (finish_rewind), not only by the next open's recovery
        self._refused_record: JSON | None = None
        # why the journal of an interrupted rewind was not applied (see recover())
        self.journal_problem: str | None = None
        # a recovery that waits for the op log to be readable (a FIFO or a socket at its
        # name): every write is refused with these words until it is done (trust36)
        self._recovery_waits: str | None = None
        # damaged lines of checkpoints.jsonl a repair_index looked past already
        self._index_problems = 0
        # object logs the walks found holding what no writer writes (store/notices.py)
        self.refused_logs: set[str] = set()
        # this process's recovery emptied a journal whose rewind touched no file: its
        # notice is in cache/rewind-dropped (store/dropped_rewind.py)
        self.rewind_dropped = False
        self.index_damaged = 0  # the most damaged lines of checkpoints.jsonl a listing saw
        self._temporary: list[Path] = []  # Store.memory()'s folders, removed by close()
        # releases this open in fs/storeroots.py (its held folders closed with the last)
        self._guard: Callable[[], object] | None = None
        # gives up this open as fs/probeplace.py's place for the link probe (Store.open)
        self._probe_place: Callable[[], object] | None = None
        self._mutex = StoreMutex(root)  # a close waits for its holders, then refuses

    def _gc_generation(self) -> str:
        """The gc mark: its value and its file's identity (inode, times, size), which every
        gc changes (``atomic_write`` makes a new file). The value alone read the same after
        a gc when the mark was written back, or replaced by what cannot be read (a FIFO, a
        file too large) where there was none: a prepared checkpoint then committed a tree
        whose objects the gc had removed (tests/reliability/test_pack_removed_without_gc.py)."""
        path = self.root / "cache" / "gc-generation"
        try:
            st = os.lstat(path)
        except OSError:
            return ""
        try:
            value = read_regular(path, limit=4096).decode("utf-8", "replace")
        except (OSError, StoreDamaged):
            value = "?"
        return f"{value}@{st.st_ino}:{st.st_mtime_ns}:{st.st_ctime_ns}:{st.st_size}"

    def _replaced(self) -> Conflict | None:
        """The error naming this store as replaced under this process, if it was: asked
        before a checkpoint, and where an object is missing (a swap in the scan; before
        ``store27`` named "object … is missing; run 'turnback fsck'")."""
        if not self._root_held.replaced():
            return None
        why = self._root_held.unreadable
        return replaced_store(self.root) if why is None else unreadable_store(self.root, why)

    def _check_gc(self) -> None:
        """After a gc (any process), cached hashes may name removed objects: forget them.

        A store replaced since this object opened it (restored, made again) holds none of
        the objects its caches name, nor of much else it keeps in memory: refused."""
        replaced = self._replaced()
        if replaced is not None:
            raise replaced
        gen = self._gc_generation()
        if gen != self._gc_seen:
            self._gc_seen = gen
            self._statcache.discard()  # rows and folder trees alike may name removed objects
            self._scan_base = None
            self.objects.recent.clear()  # nor is a blob it removed read from memory

    def _packs_stale(self) -> bool:
        """Whether a checkpoint's object batch must list the pack folder again, after
        ``_check_gc`` under the gc lock: only when a gc removed objects since the last
        listing (any process's: it marks the generation first), or at the first. A repack
        that kept every object moved them to a new pack: a read that finds the old one
        gone lists again (``ObjectStore._packed``), and a look-up before a write that still
        places one there finds that pack's file gone and stores the object again
        (``ObjectStore._in_pack``: a pack removed without the mark changing, too).
        Listing it every time cost 5.2 ms at 3,724 packs (one per checkpoint until a gc
        repacks them), 0.05 ms at 30."""
        if self._packs_gen == self._gc_seen:
            return False
        self._packs_gen = self._gc_seen
        return True

    def restore_records(self, every: bool = False) -> int:
        """Put back into ``checkpoints.jsonl`` the records a crash lost there whose log
        frames are on disk (``CheckpointIndex.restore``; ``every``: each log read whole).
        Under the gc lock: a gc, which restores them first itself, must not drop a record
        and see it put back after. A read-only store is left as it is (its listings miss
        those records)."""
        try:
            with rw_lock(self.root / "locks" / "gc", exclusive=False):
                return self.restore_records_locked(every)
        except OSError:
            return 0

    def repair_index(self) -> int:
        """Put back every logged record missing from ``checkpoints.jsonl`` once a damaged
        line was found in it (read whole: a listing, a look-up), each time more are found:
        the line lost there may be a record whose log holds later ones, which the open's
        restore, reading each log from its end, stops before. An undamaged file costs
        nothing more: its whole read is the listing's own."""
        seen = self.index.problem_count()
        self.index_damaged = max(self.index_damaged, seen)
        if seen <= self._index_problems:
            return 0
        put_back = self.restore_records(every=True)
        # 0 once the repair's mark covers them; else those seen, not repaired again here
        self._index_problems = min(seen, self.index.problem_count())
        return put_back

    def restore_records_locked(self, every: bool = False) -> int:
        """``restore_records`` for a caller holding the gc lock (gc, fsck, the merge)."""
        folder = self.objects.root / "log"
        looked: list[bool] = []

        def stored(name: str) -> bool:
            # the index read again first: one read at this process's open (a hook's, a
            # server's) misses the frames written since, and a record whose tree looked
            # unstored was skipped, then merged away with its log for good (a killed
            # hook's, a rewind's safety: tests/reliability/test_log_merge_removals.py).
            # Only when a record is missing: an ordinary open never calls this
            if not looked:
                self.objects.packs.refresh()
                looked.append(True)
            return self.objects.exists(name)

        refused: list[str] = []
        try:
            return self.index.restore(
                lambda missing, whole: logged_records(
                    folder, missing, every=whole, refused=refused,
                    walked=None if whole else WalkedLogs(self.root / "cache" / "logs-walked")),
                stored, fsync=self.config.fsync_commits, every=every,
                folder=self._held_for_put_back)
        finally:
            self.refused_logs.update(refused)

    def _held_for_put_back(self) -> Folder | None:
        """The held root, for records put back from the object logs, looked at first (one
        ``stat``, only when there is a record to put back): the logs were read by path,
        so a store replaced before that read gave another store's records, which the held
        root would list naming trees it lacks (redteam43). Refused, nothing put back: a
        gc's merge then removes no log whose records are not listed."""
        replaced = self._replaced()
        if replaced is not None:
            raise replaced
        return self._root_held.folder()

    def set_aside(self) -> bool:
        """Whether this process found something set aside: a refused object log, a
        repaired ``checkpoints.jsonl``, a rewind's journal emptied (``notices.current``'s
        causes but those a probe of each log finds). Asked before ``notices`` is imported:
        a command with nothing to tell (nearly all) spares its import (``Store.untold_notices``)."""
        return bool(self.refused_logs or self.index.repaired or self.index_damaged
                    or self.rewind_dropped)

    def disk_usage(self) -> int:
        total = 0
        for dirpath, _dirs, files in walk(self.root):
            for f in files:
                try:
                    total += os.lstat(os.path.join(dirpath, f)).st_size
                except OSError:
                    pass
        return total

    def reachable(self, checkpoints: Iterable[Checkpoint]) -> set[str]:
        """Every object name the given checkpoints need."""
        seen: set[str] = set()
        # a stack, not recursion: however deep (or looped) a damaged tree, gc still ends
        todo = [cp.tree for cp in checkpoints]
        while todo:
            tree = todo.pop()
            if tree in seen:
                continue
            seen.add(tree)
            try:
                entries = self.trees.get(tree)
            except (NotFound, StoreDamaged, Unsafe):
                continue  # fsck reports it; gc must not fail on it, nor skip its siblings
            for entry in entries.values():
                if entry.mode == DIR:
                    todo.append(entry.hash)
                else:
                    seen.add(entry.hash)
        return seen

    def _refuse_reserved(self, paths: Iterable[str], what: str) -> None:
        """Never write into a .git folder (any repository's) or into the store itself.

        Checkpoints never hold such paths; a crafted tree or an imported file list might.
        """
        # every spelling a macOS or Windows file system takes for `.git` or a store
        # (`.GIT`, `git~1`, `.git.`), on every platform: see fs/paths.refuse_protected_path
        for rel in paths:
            refuse_protected_path(rel, what, self.ignore.store_rel)

    def finish_rewind(self) -> None:
        """Record a rewind left to finish later; ``RewindOps`` does it, every write calls it."""
