"""``Store``: the one object every client (CLI, language server, importers) calls.

It ties together the session backend (event trees), the object store and scanner
(checkpoints), the checkpoint index, the operation log and journal (rewind and
undo). It knows nothing of the server or the CLI.
"""

from __future__ import annotations

import os
import weakref
from pathlib import Path
from typing import Any

from ..errors import InvalidInput, NotFound, TurnbackError, imported_late
from ..events import JSON
from ..fs import privacy, probeplace, storeroots
from ..fs.locks import rw_lock
from ..fs.namefold import EXACT, NameRules, probe, probe_store
from ..fs.paths import expand_home
from ..objects.merging import MERGE_AT
from ..objects.objfolder import follow_links_in
from ..sessions.backend import MemorySessions
from ..sessions.files import FileSessions
from .closing import CLOSE_WAIT
from .config import FORMAT_VERSION, StoreConfig, default_store_dir, load_config, save_config
from .file_history_ops import FileHistoryOps
from .rewind_ops import MODES, RewindOps
from .session_ops import (
    COUNT_BEFORE_ANSWER,
    HEAD,
    WORKSPACE_SESSION,
    filter_sessions,
    listing_order,
)

__all__ = ["COUNT_BEFORE_ANSWER", "HEAD", "MODES", "WORKSPACE_SESSION", "Store",
           "filter_sessions", "listing_order"]


class Store(FileHistoryOps, RewindOps):
    """The history store of one workspace: sessions, checkpoints, rewinds (the operations
    are layered in ``session_ops``, ``checkpoint_ops`` and ``rewind_ops``); this class opens,
    closes and maintains it. Thread-safe for the server's use."""

    @classmethod
    def open(
        cls,
        workspace: str | os.PathLike[str],
        *,
        store_dir: str | os.PathLike[str] | None = None,
        config: StoreConfig | dict[str, Any] | None = None,
        create: bool = True,
    ) -> Store:
        """Open the store of ``workspace`` (creating it unless ``create=False``).

        An interrupted rewind found in the journal is finished before returning.
        """
        ws = expand_home(workspace)
        if not ws.is_dir():
            raise NotFound(f"workspace {str(ws)!r} is not a folder")
        ws = ws.resolve()
        root = expand_home(store_dir).resolve() if store_dir else default_store_dir(ws)
        if ws == root or ws.is_relative_to(root):
            raise InvalidInput(f"store {root} cannot contain the workspace it records")
        chosen = bool(store_dir or os.environ.get("TURNBACK_STORE"))
        privacy.refuse_foreign(root, chosen=chosen)
        if chosen:
            follow_links_in(root)
        exists = (root / "config.json").exists()
        if not exists and not create:
            raise NotFound(f"no Turnback store at {root}; create one with 'turnback init'")
        file_cfg, version = load_config(root)
        if not exists:
            # private from the first byte: root and folders 0700, files 0600 (privacy.py)
            privacy.make_root(root)
        # from here every write below root goes through folders opened from it without
        # following a link, and root itself must stay this folder (fs/storeroots.py)
        guard = None if chosen else storeroots.opened(root)
        try:
            store = cls._open_made(ws, root, exists, config, file_cfg, version)
        except BaseException:
            if guard is not None:
                storeroots.closed(guard)
            raise
        if guard is not None:  # released by close, or once the Store is collected unclosed
            store._guard = weakref.finalize(store, storeroots.closed, guard)
        # fs/hardlinks' probe on this device goes into the root, where each open removes
        # one a killed process left (a folder of the user's kept it for good: trust33)
        store._probe_place = weakref.finalize(store, probeplace.closed, probeplace.opened(root))
        probeplace.sweep(root)
        try:
            store.restore_records()  # before recovery: a journal may name a restored record
            store.recover()
        except BaseException:
            # (a MemoryError, a KeyboardInterrupt: recovery keeps TurnbackError and OSError)
            # the descriptors this open holds, closed: the caller never gets the Store
            store._let_go()
            raise
        return store

    def _let_go(self) -> None:
        """Close what this Store holds open, saving nothing (an open that failed)."""
        try:
            self._statcache.close()
            self._root_held.close()
        finally:
            self.objects.close()
            if self._guard is not None:
                self._guard()
            if self._probe_place is not None:
                self._probe_place()

    @classmethod
    def _open_made(cls, ws: Path, root: Path, exists: bool,
                   config: StoreConfig | dict[str, Any] | None, file_cfg: StoreConfig,
                   version: int) -> Store:
        if isinstance(config, dict):
            cfg = file_cfg.merged(config)
        else:
            cfg = (config or file_cfg).validate()
        if not exists:
            for sub in ("sessions", "objects", "index", "cache", "locks"):
                privacy.make_dir(root / sub)
            privacy.write_gitignore(root)
            save_config(root, file_cfg)
        else:
            privacy.keep_private(root)  # a store made before: tightened once
            if version < FORMAT_VERSION:
                # an older store: everything it holds reads as it is; new trees may use
                # the newer modes (2) and are binary (3), which older Turnbacks cannot
                # read: they must not read or write it any more
                try:
                    save_config(root, file_cfg)
                    version = FORMAT_VERSION
                except OSError:
                    pass  # read-only: it can only be read, which needs no upgrade
        names = _name_rules(ws, root, file_cfg)
        cfg.filesystem = file_cfg.filesystem  # kept when the config is saved again
        backend = FileSessions(root / "sessions", root / "index" / "summaries.json",
                               fsync_appends=cfg.fsync_appends)
        return cls(ws, root, cfg, backend, version, names)

    @classmethod
    def memory(cls, workspace: str | os.PathLike[str] | None = None) -> Store:
        """A store whose sessions live in memory (objects in a temporary folder)."""
        import tempfile  # here: the CLI's checkpoint has no use for it

        ws = Path(workspace).resolve() if workspace else Path(tempfile.mkdtemp(prefix="tb-ws-"))
        root = Path(tempfile.mkdtemp(prefix="tb-store-"))
        for sub in ("objects", "index", "cache", "locks"):
            privacy.make_dir(root / sub)
        store = cls(ws, root, StoreConfig(), MemorySessions(), names=probe(ws) or EXACT)
        # what it made for itself goes with it (close); a workspace it was given stays
        store._temporary = [root] if workspace else [root, ws]
        return store

    def close(self) -> None:
        """Close the store once the checkpoint, rewind or fold under way in another thread
        (a server's pool) has ended; anything asked of it later is refused
        (``store/closing.py``). A second close does nothing."""
        unfinishable = False  # the finish failed: the close makes it as before, and ends
        while True:
            # a rewind left to finish is finished first, under the rewind lock then the
            # mutex, as every rewind takes them: under the mutex (``_close``), the close
            # waited for that lock while a rewind's finish held it and waited for the mutex
            # (redteam42)
            # a record refused earlier too: ``_close``'s retry of it raised a lock held by
            # another process out of the close, the store half closed (redteam47)
            if (self._unfinished is not None or self._refused_record is not None) \
                    and not unfinishable:
                try:
                    self.finish_rewind(CLOSE_WAIT, closing=True)
                except (OSError, TurnbackError):
                    unfinishable = True
            ready = (lambda: True) if unfinishable else (lambda: self._unfinished is None)
            with self._mutex.closing(ready) as first:
                if first is None:
                    continue  # a rewind left to finish came meanwhile: finished first
                if not first:
                    return
                try:
                    if unfinishable:  # not waited for again (a minute in all, redteam42)
                        self.leave_unfinished()
                    self._close()
                finally:
                    self.objects.close()  # its log's descriptor: one a Store, else they pile up
                    if self._guard is not None:
                        self._guard()
                    if self._probe_place is not None:
                        self._probe_place()
                return

    def _close(self) -> None:
        self.finish_rewind(CLOSE_WAIT, closing=True)
        self.scanner.close()
        if self._temporary:
            import shutil

            for folder in self._temporary:
                shutil.rmtree(folder, ignore_errors=True)
            self._temporary = []
            self._statcache.close()
            self._root_held.close()
            return
        if self._root_held.replaced():  # nothing of this store's caches goes into another
            self._statcache.close()
            self._root_held.close()
            return
        if isinstance(self.backend, FileSessions):
            self.backend.save_index()
        if not (self._statcache.unsaved or self.objects.holds_batch):
            # nothing to write, so no gc lock to take nor gc mark to look at: the CLI
            # closes before it prints and again after (the lock was taken three times
            # a fresh checkpoint, the first before its answer; cold25)
            self._statcache.close()
            self._root_held.close()
            return
        try:
            # under the gc lock, after a look at the gc mark: a gc (any process) may have
            # removed objects the cache in memory names, and must not find them named again
            with rw_lock(self.root / "locks" / "gc", exclusive=False):
                self._check_gc()
                self.objects.flush_held()  # the cache may name a held batch's objects
                self._statcache.flush()
        except (OSError, TurnbackError):
            pass  # a cache: losing it only costs re-reading files
        finally:
            self._statcache.close()
            self._root_held.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def save_config(self) -> None:
        save_config(self.root, self.config)

    def status(self) -> JSON:
        cps = self.index.all()
        return {
            "folder": str(self.workspace),
            "store": str(self.root),
            "formatVersion": self.format_version,
            "sessions": len(self.backend.ids()),
            "checkpoints": len(cps),
            "bytes": self.disk_usage(),
            "lastCheckpoint": cps[-1].to_json() if cps else None,
            "pendingRewind": self.oplog.holds_journal(),
        }

    def notices(self) -> list[Any]:
        """What the store found and set aside (a refused object log, a repaired
        ``checkpoints.jsonl``): ``store/notices.py``."""
        with imported_late("turnback.store.notices"):
            from .notices import current
        return list(current(self))

    def untold_notices(self, channel: str, found: list[Any] | None = None) -> list[Any]:
        """``notices`` (or ``found``, those just asked for) that ``channel`` (``cli``,
        ``server``) has not told the user yet, now noted told: once for each cause."""
        if found is None and channel == "cli" and not self.set_aside():
            return []  # nothing to tell: ``notices`` not imported (its Notice class is built)
        with imported_late("turnback.store.notices"):
            from .notices import untold
        return list(untold(self, channel, found))

    def log(self) -> list[JSON]:
        """The operation log (rewinds and undos), oldest first."""
        return self.oplog.all()

    def gc(self, dry_run: bool = False, keep_last: int | None = None,
           keep_days: float | None = None, quota_bytes: int | None = None) -> Any:
        from .gc import collect

        self.finish_rewind()

        return collect(self, dry_run=dry_run, keep_last=keep_last, keep_days=keep_days,
                       quota_bytes=quota_bytes)

    def merge_logs(self, at_least: int = MERGE_AT) -> tuple[int, int] | None:
        """Merge the object logs (and the small packs beside them) into one pack when
        there are more than ``at_least``, if no writer or gc holds the gc lock now; the
        (logs, packs) merged, or None. For a moment no answer waits for (the CLI calls it
        after printing); it touches none of this object's caches, so it may follow
        ``close``. See ``store/logmerge.py``."""
        from .logmerge import merge_logs

        return merge_logs(self, at_least)

    def fold_held(self) -> bool:
        """Fold this process's raw held frames into a pack at the configured level, if any
        and if no gc, merge or other fold runs now; whether it did. Off every writer's
        path: for a server's quiet time (``server/jobs/prepare.py``), see ``store/logmerge.py``."""
        from .logmerge import fold_held

        return fold_held(self)

    def fold_left(self) -> bool | None:
        """Merge the logs if another process's holds raw frames (a server killed before
        its fold): whether it did, None when the gc lock was busy. For a starting
        server's first quiet moment: see ``store/logmerge.py``."""
        from .logmerge import fold_left

        return fold_left(self)

    def fsck(self) -> Any:
        from .fsck import check

        return check(self)

    def repair_logs(self) -> list[Any]:
        """``fsck --repair``: logs' junk tails that refuse appends moved to side files."""
        from .fsck import repair

        return list(repair(self))


def _name_rules(ws: Path, root: Path, cfg: StoreConfig) -> NameRules:
    """How names compare in ``ws``: as recorded in ``cfg`` for its device, else probed now
    (in the store when it is on the same file system, else in the workspace) and recorded.
    Unknown (nothing can be written): compared exactly, as on Linux."""
    device = ws.stat().st_dev
    names = cfg.name_rules(device)
    if names is not None:
        return names
    names = probe_store(ws, root)
    if names is None:
        return EXACT
    cfg.filesystem = {"device": device, **names.to_json()}
    try:
        save_config(root, cfg)
    except OSError:
        pass  # a read-only store: probed again at the next open
    return names
