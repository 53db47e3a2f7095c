"""``Store``: the one object every client (CLI, language server, importers) calls.

It ties together the session backend (event trees), the object store and scanner
(checkpoints), the checkpoint index, the operation log and journal (rewind and
undo). It knows nothing of the server or the CLI.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from ..errors import Conflict, InvalidInput, NotFound, StoreDamaged, TurnbackError, Unsafe
from ..fs import privacy
from ..fs.atomic import syncfs
from ..fs.locks import file_lock, rw_lock
from ..fs.paths import expand_home, normalize
from ..models import (
    Change,
    Checkpoint,
    FileContent,
    RewindResult,
    SessionLog,
    SessionPage,
    SessionSummary,
)
from ..objects.objectstore import BLOB, ObjectStore
from ..objects.trees import DIR, LINK, Entry, Tree, TreeReader, is_executable
from ..rewind.apply import Applier, check_conflicts
from ..rewind.oplog import OpLog
from ..rewind.plan import Plan, diff_plan, make_plan
from ..sessions.backend import MemorySessions, SessionBackend
from ..sessions.events import (
    JSON,
    Event,
    Kind,
    SessionHeader,
    check_id,
    new_id,
    new_session_id,
    now_iso,
)
from ..sessions.files import FileSessions
from ..snapshot import changes as changes_mod
from ..snapshot import prescan
from ..snapshot.checkpoint_index import CheckpointIndex
from ..snapshot.ignore import IgnoreRules
from ..snapshot.scan import Progress, Scanner, ScanResult
from ..snapshot.statcache import StatCache
from .config import FORMAT_VERSION, StoreConfig, default_store_dir, load_config, save_config

WORKSPACE_SESSION = "workspace"
MODES = ("files", "conversation", "both")
MAX_TEXT = 8 * 1024 * 1024  # fileContent returns text up to this size
WARM_MAX = 64  # prepare() reads the previous versions of at most this many files


class _Head:
    """Sentinel: attach to the session head."""


HEAD: Any = _Head()



def filter_sessions(summaries: list[SessionSummary], query: str) -> list[SessionSummary]:
    """The summaries whose id, title, agent or model holds ``query`` (any case), in order."""
    q = query.lower()
    return [
        s for s in summaries
        if q in s.header.id.lower() or q in s.header.title.lower()
        or q in s.header.agent.lower() or q in (s.header.model or "").lower()
    ]

def _normal(path: str) -> str | None:
    """``path`` normalised, or None when it is no plain relative path."""
    try:
        return normalize(path)
    except TurnbackError:
        return None


def _skipped_paths(skipped: list[JSON]) -> list[str]:
    """The paths a checkpoint skipped (unreadable, too large, not a file), normalised."""
    out = []
    for item in skipped:
        p = item.get("path") if isinstance(item, dict) else None
        if isinstance(p, str):
            if p == ".":
                return [""]  # the whole workspace could not be listed
            n = _normal(p)
            if n is not None:
                out.append(n)
    return out


def _selected_by(path: str, prefixes: list[str]) -> bool:
    return any(p == "" or path == p or path.startswith(p + "/") for p in prefixes)


def _carry_skipped(before: list[JSON], now: list[JSON], looked: Iterable[str]) -> list[JSON]:
    """An earlier scan's skipped files that a later incremental scan, which looked again
    at ``looked`` only, neither looked at nor skipped itself; then its own."""
    again = {str(s.get("path")) for s in now} | set(looked)
    return [s for s in before if str(s.get("path")) not in again] + now


class Store:
    """The history store of one workspace. Thread-safe for the server's use."""

    def __init__(
        self,
        workspace: Path,
        root: Path,
        config: StoreConfig,
        sessions: SessionBackend,
        format_version: int = FORMAT_VERSION,
    ) -> None:
        self.workspace = workspace
        self.root = root
        self.config = config
        self.format_version = format_version
        self.backend = sessions
        self.objects = ObjectStore(root / "objects", config.compression_level)
        self.trees = TreeReader(self.objects)
        self.index = CheckpointIndex(root / "checkpoints.jsonl")
        self.oplog = OpLog(root)
        self.ignore = IgnoreRules(workspace, root, config.ignores)
        self._statcache = StatCache(root / "cache" / "stat.bin")
        self._gc_seen = self._gc_generation()
        self.scanner = Scanner(workspace, self.objects, self.trees, self.ignore, self._statcache,
                               config.size_cap_bytes)
        self._scan_base: str | None = None  # tree of this object's last scan (watcher base)
        self._own_dirty: set[str] = set()  # paths this object changed since that scan
        # what that scan skipped, when it was a prepare() no checkpoint has committed yet
        self._prepared_skipped: list[JSON] = []
        self._unfinished: JSON | None = None  # a rewind's record, for finish_rewind()
        # why the journal of an interrupted rewind was not applied (see recover())
        self.journal_problem: str | None = None
        self._temporary: list[Path] = []  # Store.memory()'s folders, removed by close()
        self._mutex = threading.RLock()

    # -- opening ---------------------------------------------------------------------
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
        privacy.refuse_foreign(root, chosen=bool(store_dir or os.environ.get("TURNBACK_STORE")))
        exists = (root / "config.json").exists()
        if not exists and not create:
            raise NotFound(f"no Turnback store at {root}; create one with 'turnback init'")
        file_cfg, version = load_config(root)
        if isinstance(config, dict):
            cfg = file_cfg.merged(config)
        else:
            cfg = (config or file_cfg).validate()
        if not exists:
            # private from the first byte: root and folders 0700, files 0600 (privacy.py)
            privacy.make_root(root)
            for sub in ("sessions", "objects", "index", "cache", "locks"):
                privacy.make_dir(root / sub)
            privacy.write_gitignore(root)
            save_config(root, file_cfg)
        else:
            privacy.keep_private(root)  # a store made before: tightened once
            if version < FORMAT_VERSION:
                # an older store: everything it holds reads as it is; new trees may use
                # the newer modes, so older Turnbacks must not write to it any more
                try:
                    save_config(root, file_cfg)
                    version = FORMAT_VERSION
                except OSError:
                    pass  # read-only: it can only be read, which needs no upgrade
        backend = FileSessions(root / "sessions", root / "index" / "summaries.json",
                               fsync_appends=cfg.fsync_appends)
        store = cls(ws, root, cfg, backend, version)
        store.recover()
        return store

    @classmethod
    def memory(cls, workspace: str | os.PathLike[str] | None = None) -> Store:
        """A store whose sessions live in memory (objects in a temporary folder)."""
        import tempfile  # here: the CLI's checkpoint has no use for it

        ws = Path(workspace).resolve() if workspace else Path(tempfile.mkdtemp(prefix="tb-ws-"))
        root = Path(tempfile.mkdtemp(prefix="tb-store-"))
        for sub in ("objects", "index", "cache", "locks"):
            privacy.make_dir(root / sub)
        store = cls(ws, root, StoreConfig(), MemorySessions())
        # what it made for itself goes with it (close); a workspace it was given stays
        store._temporary = [root] if workspace else [root, ws]
        return store

    def close(self) -> None:
        self.finish_rewind()
        self.scanner.close()
        if self._temporary:
            import shutil

            for folder in self._temporary:
                shutil.rmtree(folder, ignore_errors=True)
            self._temporary = []
            return
        if isinstance(self.backend, FileSessions):
            self.backend.save_index()
        try:
            # under the gc lock, after a look at the gc mark: a gc (any process) may have
            # removed objects the cache in memory names, and must not find them named again
            with rw_lock(self.root / "locks" / "gc", exclusive=False):
                self._check_gc()
                self._statcache.flush()
        except (OSError, TurnbackError):
            pass  # a cache: losing it only costs re-reading files

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def save_config(self) -> None:
        save_config(self.root, self.config)

    # -- sessions --------------------------------------------------------------------
    def start_session(
        self,
        title: str = "",
        agent: str = "unknown",
        model: str | None = None,
        cwd: str | None = None,
        source: str = "turnback",
        session_id: str | None = None,
        started: str | None = None,
        extra: JSON | None = None,
    ) -> SessionHeader:
        sid = check_id(session_id, "session id") if session_id else new_session_id()
        header = SessionHeader(sid, title, agent, model, started or now_iso(),
                               cwd or str(self.workspace), source, None, extra or {})
        self.backend.create(header)
        return header

    def ensure_session(self, header: SessionHeader) -> tuple[SessionHeader, bool]:
        """Create the session unless it exists (importers); return it and whether it was new."""
        check_id(header.id, "session id")
        if self.backend.exists(header.id):
            return self.backend.load(header.id).header, False
        try:
            self.backend.create(header)
        except Conflict:
            return self.backend.load(header.id).header, False
        return header, True

    def has_session(self, session_id: str) -> bool:
        return self.backend.exists(check_id(session_id, "session id"))

    def update_session(self, session_id: str, **meta: str) -> None:
        bad = set(meta) - {"title", "agent", "model", "cwd", "ended"}
        if bad:
            raise InvalidInput(f"cannot update session field(s) {sorted(bad)}")
        self.backend.update_meta(check_id(session_id, "session id"), meta)

    def end_session(self, session_id: str, ts: str | None = None) -> None:
        self.update_session(session_id, ended=ts or now_iso())

    def _workspace_session(self) -> str:
        if not self.backend.exists(WORKSPACE_SESSION):
            try:
                self.backend.create(SessionHeader(
                    WORKSPACE_SESSION, "Workspace checkpoints", "turnback", None, now_iso(),
                    str(self.workspace), "turnback"))
            except Conflict:
                pass
        return WORKSPACE_SESSION

    def append(
        self,
        session_id: str,
        kind: str,
        data: JSON | None = None,
        parent: str | _Head | None = HEAD,
        ts: str | None = None,
        event_id: str | None = None,
        fsync: bool = False,
    ) -> Event:
        """Append one event; ``parent`` defaults to the head (decided under the file lock)."""
        self.finish_rewind()
        check_id(session_id, "session id")
        if not isinstance(kind, str) or not kind or len(kind) > 64:
            raise InvalidInput("event kind must be a non-empty string of at most 64 characters")
        if data is not None and not isinstance(data, dict):
            raise InvalidInput("event data must be a JSON object")
        eid = check_id(event_id, "event id") if event_id else new_id()
        if parent is not None and not isinstance(parent, _Head):
            check_id(parent, "parent event id")

        def make(head: str | None, _ids: set[str] | None) -> list[Event]:
            p = head if isinstance(parent, _Head) else parent
            return [Event(eid, session_id, p, ts or now_iso(), kind, dict(data or {}))]

        return self.backend.append(session_id, make, fsync=fsync)[0]

    def append_events(self, session_id: str, events: Iterable[Event]) -> int:
        """Append events as they are (ids, parents, times kept), skipping ids already present."""
        self.finish_rewind()
        batch = list(events)
        if not batch:
            return 0

        def make(_head: str | None, ids: set[str] | None) -> list[Event]:
            known = ids or set()
            out = []
            for e in batch:
                if e.id in known:
                    continue
                known.add(e.id)
                e.session = session_id
                out.append(e)
            return out

        return len(self.backend.append(session_id, make, need_ids=True))

    def session(self, session_id: str) -> SessionLog:
        return self.backend.load(check_id(session_id, "session id"))

    def session_page(self, session_id: str, offset: int, limit: int) -> SessionPage:
        """``session(session_id)``'s events[offset:offset + limit], parsing only those."""
        return self.backend.page(check_id(session_id, "session id"), offset, limit)

    def session_summary(self, session_id: str) -> SessionSummary:
        return self.backend.summary(check_id(session_id, "session id"))

    def stats(self, session_id: str) -> JSON:
        return self.session_summary(session_id).stats

    def sessions(self, offset: int = 0, limit: int | None = None, query: str | None = None
                 ) -> tuple[list[SessionSummary], int]:
        """Summaries, newest first; ``query`` matches id, title, agent and model."""
        summaries = self.backend.summaries()
        summaries.sort(key=lambda s: (s.stats.get("startedAt") or s.header.started or "",
                                      s.header.id), reverse=True)
        if query:
            summaries = filter_sessions(summaries, query)
        if isinstance(self.backend, FileSessions):
            self.backend.save_index()
        total = len(summaries)
        end = None if limit is None else offset + limit
        return summaries[offset:end], total

    def find_event(self, event_id: str, session_id: str | None = None) -> Event:
        check_id(event_id, "event id")
        ids = [session_id] if session_id else self.backend.ids()
        for sid in ids:
            for e in self.session(sid).events:
                if e.id == event_id:
                    return e
        raise NotFound(f"no event {event_id!r}" + (f" in session {session_id!r}" if session_id
                                                    else ""))

    def children(self, session_id: str, event_id: str | None) -> list[Event]:
        return [e for e in self.session(session_id).events if e.parent == event_id]

    def conversation(self, session_id: str, head: str | None = None) -> list[Event]:
        """The events on the path root → head (the conversation as it stands)."""
        log = self.session(session_id)
        by_id = log.by_id()
        cur = head or log.head
        path: list[Event] = []
        seen: set[str] = set()
        while cur is not None and cur in by_id and cur not in seen:
            seen.add(cur)
            path.append(by_id[cur])
            cur = by_id[cur].parent
        return path[::-1]

    def fork(self, event_id: str, session_id: str | None = None) -> tuple[str, str]:
        """Move the session head to ``event_id``: new events branch from there."""
        self.finish_rewind()
        check_id(event_id, "event id")
        if session_id is not None:
            check_id(session_id, "session id")
            if not self.backend.has_event(session_id, event_id):
                raise NotFound(f"no event {event_id!r} in session {session_id!r}")
            self.backend.set_head(session_id, event_id)
            return session_id, event_id
        ev = self.find_event(event_id)
        self.backend.set_head(ev.session, ev.id)
        return ev.session, ev.id

    # -- checkpoints -----------------------------------------------------------------
    def _gc_generation(self) -> str:
        try:
            return (self.root / "cache" / "gc-generation").read_text()
        except (FileNotFoundError, OSError):
            return ""

    def _check_gc(self) -> None:
        """After a gc (any process), cached hashes may name removed objects: forget them."""
        gen = self._gc_generation()
        if gen != self._gc_seen:
            self._gc_seen = gen
            self._statcache.discard()  # rows and folder trees alike may name removed objects
            self._scan_base = None

    def checkpoint(
        self,
        label: str | None = None,
        session_id: str | None = None,
        auto: bool = False,
        dirty: Iterable[str] | None = None,
        progress: Progress | None = None,
    ) -> Checkpoint:
        """Snapshot the whole workspace (minus ignores) as a checkpoint event."""
        self.finish_rewind()
        if session_id is not None:
            check_id(session_id, "session id")
            if not self.backend.exists(session_id):
                raise NotFound(f"no session {session_id!r}")
        if label is not None and not isinstance(label, str):
            raise InvalidInput("label must be a string")
        with self._mutex, rw_lock(self.root / "locks" / "gc", exclusive=False):
            res, skipped = self._snapshot(dirty, progress)
            try:
                cp = self._commit_checkpoint(
                    res.tree, label, session_id, auto, res.files, res.bytes, skipped
                )
            except BaseException:
                self._statcache.discard()
                self._scan_base = None
                raise
            # saved only now: a crash before the commit must not leave a cache file that
            # names objects no checkpoint holds (the next checkpoint would trust them)
            self.scanner.save_cache()
            return cp

    def _snapshot(self, dirty: Iterable[str] | None, progress: Progress | None
                  ) -> tuple[ScanResult, list[JSON]]:
        """Store the workspace's files and trees (durable, not yet committed) and return
        the scan with the files it skipped. The caller holds the mutex and the gc lock,
        commits (``_commit_checkpoint``), then calls ``scanner.save_cache()``."""
        self._check_gc()
        base = self._scan_base if dirty is not None else None
        if base is not None and dirty is not None:
            dirty = {*dirty, *self._own_dirty}
        self._own_dirty = set()
        carried, self._prepared_skipped = self._prepared_skipped, []
        try:
            with self.objects.batch(fsync=self.config.fsync_commits):
                res = self.scanner.scan(base=base, dirty=dirty if base else None,
                                        progress=progress, save_cache=False)
            self._scan_base = res.tree
            if self.config.fsync_commits:
                self.objects.sync()
        except BaseException:
            # the stat cache may name objects of a pack that was never finished
            self._statcache.discard()
            self._scan_base = None
            raise
        # a prepared scan's skipped files hold unless this scan looked again
        skipped = (_carry_skipped(carried, res.skipped, dirty or ())
                   if base is not None else res.skipped)
        return res, skipped

    def prepare(self, dirty: Iterable[str]) -> bool:
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
        """
        self.finish_rewind()
        with self._mutex, rw_lock(self.root / "locks" / "gc", exclusive=False):
            self._check_gc()
            base = self._scan_base
            if base is None:
                return False
            paths = {*dirty, *self._own_dirty}
            if not paths:
                return True
            self._own_dirty = set()
            try:
                with self.objects.batch(fsync=self.config.fsync_commits):
                    res = self.scanner.scan(base=base, dirty=paths, save_cache=False)
                if self.config.fsync_commits:
                    self.objects.sync()
            except BaseException:
                self._statcache.discard()
                self._scan_base = None
                raise
            self._scan_base = res.tree
            self._warm_previous(paths)
            self._prepared_skipped = _carry_skipped(self._prepared_skipped, res.skipped, paths)
            return True

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
    ) -> Checkpoint:
        sid = session_id or self._workspace_session()
        cid = cp_id or new_id()[:12]
        eid = f"cp-{cid}"
        when = ts or now_iso()
        cp = Checkpoint(cid, label or f"checkpoint {when[:19].replace('T', ' ')}", when, tree, sid,
                        eid, auto, partial, files, nbytes, skipped, absent or [])
        self.index.add(cp, fsync=self.config.fsync_commits)
        self.append(sid, Kind.CHECKPOINT,
                    {"checkpoint": cid, "label": cp.label, "auto": auto, "files": files,
                     "bytes": nbytes, "partial": partial, "skipped": len(skipped)},
                    parent=parent, ts=when, event_id=eid)
        return cp

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

    def _write_nested(self, nested: dict[str, Any]) -> str:
        tree: Tree = {}
        for name, item in nested.items():
            if isinstance(item, dict):
                h = self._write_nested(item)
                tree[name] = Entry(DIR, h, 0)
            else:
                tree[name] = item
        return self.trees.put(tree)

    def checkpoints(self, session_id: str | None = None) -> list[Checkpoint]:
        items = self.index.all()
        if session_id is not None:
            items = [c for c in items if c.session_id == session_id]
        return items

    def resolve_checkpoint(self, ref: object, where: str = "checkpoint") -> Checkpoint:
        return self.index.resolve(ref, where)

    # -- reading states --------------------------------------------------------------
    def _working_tree(self) -> str:
        """The working tree's root hash, computed without storing anything."""
        with self._mutex:
            self._check_gc()
            return self.scanner.scan(write=False).tree

    def _reader(self, working: bool) -> Callable[[str, Entry], bytes]:
        def read_obj(_path: str, entry: Entry) -> bytes:
            return self.objects.get(BLOB, entry.hash)

        def read_disk(path: str, entry: Entry) -> bytes:
            full = self.workspace / path
            try:
                if entry.mode == LINK:
                    return os.fsencode(os.readlink(full))
                return full.read_bytes()
            except OSError:
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

    # -- rewind and undo ---------------------------------------------------------------
    def _check_objects(self, plan: Plan) -> None:
        """Every blob the plan needs must be there before the workspace is touched."""
        for path, entry in {**plan.write, **plan.create}.items():
            if not self.objects.exists(entry.hash):
                raise StoreDamaged(
                    f"cannot rewind: the stored content of '{path}' (object {entry.hash[:12]}) is "
                    "missing; the workspace was not changed. Run 'turnback fsck'"
                )

    def rewind(
        self,
        checkpoint: str,
        paths: list[str] | None = None,
        mode: str = "files",
        dry_run: bool = False,
        dirty: Iterable[str] | None = None,
        finish_later: bool = False,
    ) -> RewindResult:
        """Make the workspace (and/or the conversation) what it was at ``checkpoint``.

        ``dirty`` (a watcher's changed paths) lets the safety checkpoint read only those.
        ``finish_later``: return once the files are in place, and leave recording the
        rewind to ``finish_rewind()`` (see there).
        """
        if mode not in MODES:
            raise InvalidInput(f"mode {mode!r} must be one of {', '.join(MODES)}")
        cp = self.resolve_checkpoint(checkpoint)
        sel = sorted({normalize(p) for p in paths}) if paths else None
        if mode == "conversation":
            return self._rewind_conversation(cp, dry_run)
        return self._rewind_files(cp.id, cp.tree, sel, mode, dry_run, cp.partial, cp.absent,
                                  unknown=_skipped_paths(cp.skipped),
                                  session_id=cp.session_id, to_event=cp.event_id, op="rewind",
                                  dirty=dirty, finish_later=finish_later)

    def _rewind_conversation(self, cp: Checkpoint, dry_run: bool) -> RewindResult:
        if not cp.session_id or not cp.event_id:
            raise Conflict(f"checkpoint {cp.id} belongs to no session event: nothing to rewind")
        if dry_run:
            return RewindResult([], [], [], None, True, "conversation", cp.id, cp.event_id)
        prev = self.backend.head(cp.session_id)
        ev = self.append(cp.session_id, Kind.REWIND,
                         {"checkpoint": cp.id, "mode": "conversation", "previousHead": prev},
                         parent=cp.event_id, fsync=self.config.fsync_commits)
        self.oplog.add({"id": new_id(), "op": "rewind", "ts": now_iso(), "mode": "conversation",
                        "checkpoint": cp.id, "session": cp.session_id, "prevHead": prev,
                        "newHead": ev.id}, fsync=self.config.fsync_commits)
        return RewindResult([], [], [], None, False, "conversation", cp.id, ev.id)

    def _rewind_files(
        self, label_id: str, target_tree: str, sel: list[str] | None, mode: str, dry_run: bool,
        partial: bool, absent: list[str], *, unknown: list[str], session_id: str | None,
        to_event: str | None, op: str, undo_of: str | None = None,
        dirty: Iterable[str] | None = None, finish_later: bool = False,
    ) -> RewindResult:
        """``unknown``: paths the target checkpoint skipped (unreadable, too large): what
        they held then is not known, so the rewind leaves them as they are."""
        self.finish_rewind()
        self._refuse_if_journal_bad()
        with file_lock(self.root / "locks" / "rewind"), self._mutex:
            if dry_run:
                plan = self._plan(self._working_tree(), target_tree, sel, partial, absent,
                                  unknown)
                return RewindResult(sorted(plan.write), sorted(plan.create), plan.remove, None,
                                    True, mode, label_id)
            sid = session_id if session_id and self.backend.exists(session_id) else None
            with rw_lock(self.root / "locks" / "gc", exclusive=False):
                # the safety checkpoint is committed only once the rewind is known to go
                # ahead: a refused rewind leaves nothing behind (and `latest~1` stays put)
                res, skipped = self._snapshot(dirty, None)
                try:
                    plan = self._plan(res.tree, target_tree, sel, partial, absent, unknown)
                    self._check_objects(plan)
                    check_conflicts(str(self.workspace), plan, {
                        str(k.get("path")): str(k.get("reason")) for k in skipped})
                except BaseException:
                    # refused: the scan stays the base of the next one, like a prepare()
                    self._prepared_skipped = skipped
                    raise
                try:
                    safety = self._commit_checkpoint(
                        res.tree, f"before {op} to {label_id}", sid, True, res.files,
                        res.bytes, skipped)
                except BaseException:
                    self._statcache.discard()  # as in checkpoint()
                    self._scan_base = None
                    raise
                self.scanner.save_cache()
            sid = safety.session_id
            assert sid is not None
            prev_head = self.backend.head(sid)
            op_id = new_id()
            record = {
                "id": op_id, "op": op, "ts": now_iso(), "mode": mode, "checkpoint": label_id,
                "target": target_tree, "safety": safety.id, "paths": sel, "session": sid,
                "prevHead": prev_head, "toEvent": to_event if mode == "both" else None,
                "undoOf": undo_of, "plan": plan.to_json(),
            }
            self.oplog.begin(record, fsync=self.config.fsync_commits)
            applier = Applier(str(self.workspace), self.objects, False)
            try:
                applier.apply(plan)
            except (TurnbackError, OSError) as exc:
                self._roll_back(record, plan.reverse(applier.done), exc)
                raise
            finally:
                # the next incremental checkpoint looks again at what the rewind changed
                self._own_dirty.update(plan.paths())
            if finish_later:
                self._unfinished = record
                head: str | None = f"rw-{op_id}"  # the id _finish gives the event
            else:
                if self.config.fsync_commits:
                    syncfs(self.workspace)  # the files are down before the rewind is recorded
                head = self._finish(record)
            return RewindResult(sorted(plan.write), sorted(plan.create), plan.remove, safety.id,
                                False, mode, label_id, head)

    def finish_rewind(self) -> None:
        """Record the rewind that ``rewind(..., finish_later=True)`` left: sync the files it
        wrote, then its event, its op-log entry and the end of its journal.

        The journal, written and synced before any file was touched, is what makes the
        rewind durable: if the process dies first, the next open finishes it (``recover``).
        So a server may answer as soon as the files are in place and do this right after,
        still holding the folder's write lock; every write method of this object calls it
        first, so nothing is recorded out of order.
        """
        if self._unfinished is None:
            return
        with file_lock(self.root / "locks" / "rewind"), self._mutex:
            record, self._unfinished = self._unfinished, None
            if record is None:
                return
            pending = self.oplog.pending()
            if pending is None or pending.get("id") != record["id"]:
                return  # another process opened the store and finished it (recover)
            if self.config.fsync_commits:
                syncfs(self.workspace)
            self._finish(record)

    def _plan(self, current: str, target: str, sel: list[str] | None, partial: bool,
              absent: list[str], unknown: list[str]) -> Plan:
        """What a rewind from tree ``current`` to ``target`` writes, creates and removes."""
        if partial:
            # a partial checkpoint knows few files: look each one up
            want = self._flatten_selected(target, sel)
            now = {p: e for p in [*want, *absent]
                   if (e := self.trees.lookup(current, p)) is not None and e.mode != DIR}
            plan = make_plan(self.trees, now, want, sel, absent, partial)
        else:
            plan = diff_plan(self.trees, current, target, sel)
        if unknown:
            # absent from the target only because it could not read them: not removed
            plan.remove = [p for p in plan.remove if not _selected_by(p, unknown)]
        self._refuse_reserved(plan.paths(), "the checkpoint's path")
        return plan

    def _refuse_reserved(self, paths: Iterable[str], what: str) -> None:
        """Never write into a .git folder (any repository's) or into the store itself.

        Checkpoints never hold such paths; a crafted tree or an imported file list might.
        """
        sr = self.ignore.store_rel
        for rel in paths:
            if ".git" in rel.split("/"):
                raise Unsafe(f"{what} '{rel}' is inside a .git folder; Turnback never writes "
                             "there")
            if sr is not None and (rel == sr or rel.startswith(sr + "/")):
                raise Unsafe(f"{what} '{rel}' is inside the Turnback store; Turnback never "
                             "writes there")

    def _roll_back(self, record: JSON, back: Plan, exc: BaseException) -> None:
        """Put back the workspace as it was before a rewind that failed part-way (a symlink
        swapped in, a name the file system refuses, a full disk, a file saved meanwhile),
        and end its journal: replaying the journal would only fail again at every open.

        ``back`` reverses just the paths the rewind changed; a path changed again since
        the rewind wrote it is kept, never overwritten (and named in the error)."""
        applier = Applier(str(self.workspace), self.objects, self.config.fsync_commits)
        try:
            kept = applier.apply(back, strict=False)
            applier.remove_temps(Plan.from_json(record["plan"], "the rewind's plan"))
        except (TurnbackError, OSError) as again:
            raise StoreDamaged(
                f"a rewind failed part-way ({exc}) and putting the workspace back failed too "
                f"({again}); it is retried when the store is next opened, and safety "
                f"checkpoint {record.get('safety')} holds the files as they were"
            ) from again
        self.oplog.end()
        if kept:
            raise Conflict(
                f"a rewind failed part-way ({exc}); the workspace was put back, except "
                f"{', '.join(repr(p) for p in kept[:5])}, changed again meanwhile and kept as "
                f"it is now; safety checkpoint {record.get('safety')} holds what was there "
                "before the rewind") from exc

    def _flatten_selected(self, tree: str, sel: list[str] | None) -> dict[str, Entry]:
        """The files of ``tree`` under the selected paths, reading only the trees on the way
        (so the intact parts of a damaged checkpoint can still be restored)."""
        if sel is None:
            return self.trees.flatten(tree)
        out: dict[str, Entry] = {}
        for p in sel:
            entry = self.trees.lookup(tree, p)
            if entry is None:
                continue
            if entry.mode == DIR:
                out.update(self.trees.walk(entry.hash, p + "/"))
            else:
                out[p] = entry
        return out

    def _finish(self, record: JSON) -> str | None:
        """Record a rewind whose files are in place: event, op log, end of journal."""
        sid = record["session"]
        plan = Plan.from_json(record["plan"], "the rewind's plan")
        data = {"checkpoint": record["checkpoint"], "mode": record["mode"],
                "safetyCheckpoint": record["safety"], "paths": record["paths"],
                "written": len(plan.write) + len(plan.create), "removed": len(plan.remove),
                "previousHead": record["prevHead"]}
        if record.get("kept"):
            data["kept"] = record["kept"]  # changed meanwhile: left as they were (recover)
        if record.get("undoOf"):
            data["undo"] = record["undoOf"]
        parent: str | _Head | None = record["toEvent"] if record.get("toEvent") else HEAD
        ev = self.append(sid, Kind.REWIND, data, parent=parent, event_id=f"rw-{record['id']}",
                         fsync=self.config.fsync_commits)
        op = {k: v for k, v in record.items() if k != "plan"}
        op["newHead"] = ev.id
        self.oplog.add(op, fsync=self.config.fsync_commits)
        self.oplog.end()
        return ev.id

    def recover(self) -> str | None:
        """Finish a rewind that a crash interrupted (idempotent); return its op id.

        The journal is input like any other file (a cloned repository may ship a
        ``.turnback/``): it is applied only if every field checks out, and then only to
        paths that still hold what its safety checkpoint captured or already what it
        writes. Anything else is kept. A journal that does not check out is not applied
        at all: rewinds are refused (``journal_problem``) and ``fsck`` reports it.
        """
        self.journal_problem = None
        try:
            record = self.oplog.pending()
        except StoreDamaged as exc:
            self.journal_problem = f"{exc.message}; it was not applied"
            return None
        if record is None:
            return None
        # the CLI's early check of folders saw the workspace before this rewind's end
        prescan.drop_early()
        with file_lock(self.root / "locks" / "rewind"):
            try:
                record = self.oplog.pending()
                if record is None:
                    return None
                plan = self._journal_plan(record)
            except (StoreDamaged, NotFound) as exc:
                self.journal_problem = (
                    f"{self.oplog.journal} (an interrupted rewind) was not applied: "
                    f"{exc.message}. Nothing was changed. If no rewind was interrupted here, "
                    "delete that file; 'turnback fsck' reports it until then")
                return None
            applier = Applier(str(self.workspace), self.objects, True)
            try:
                kept = applier.apply(plan, strict=False)
            except (TurnbackError, OSError) as exc:
                try:
                    self._roll_back(record, plan.reverse(), exc)
                except Conflict:
                    pass  # rolled back but for paths changed since, which are kept
                except StoreDamaged as again:
                    self.journal_problem = again.message
                return None
            applier.remove_temps(plan)
            if kept:
                record["kept"] = kept  # changed since the rewind began: left as they are
            last = self.oplog.last()
            if last is not None and last.get("id") == record["id"]:
                self.oplog.end()  # already recorded; only the journal was left
                return str(record["id"])
            sid = record["session"]
            log = self.backend.load(sid) if self.backend.exists(sid) else None
            if log is not None and any(e.id == f"rw-{record['id']}" for e in log.events):
                op = {k: v for k, v in record.items() if k != "plan"}
                self.oplog.add(op, fsync=True)
                self.oplog.end()
            else:
                self._finish(record)
            return str(record["id"])

    def _journal_plan(self, record: JSON) -> Plan:
        """The plan of a journal record, every field checked (``StoreDamaged`` names the
        first fault), with what each path held before read from its safety checkpoint."""
        def bad(what: str) -> StoreDamaged:
            return StoreDamaged(what)

        for key in ("id", "session"):
            try:
                check_id(record.get(key), key)
            except InvalidInput as exc:
                raise bad(exc.message) from None
        for key in ("prevHead", "toEvent", "undoOf"):
            value = record.get(key)
            if value is not None:
                try:
                    check_id(value, key)
                except InvalidInput as exc:
                    raise bad(exc.message) from None
        if record.get("op") not in ("rewind", "undo"):
            raise bad(f"op {str(record.get('op'))[:40]!r} is not rewind or undo")
        if record.get("mode") not in ("files", "both"):
            raise bad(f"mode {str(record.get('mode'))[:40]!r} is not files or both")
        if not isinstance(record.get("checkpoint"), str):
            raise bad("checkpoint is not a string")
        sel = record.get("paths")
        if sel is not None:
            if not isinstance(sel, list):
                raise bad("paths is not a list")
            for p in sel:
                if not isinstance(p, str) or _normal(p) != p:
                    raise bad(f"path {str(p)[:80]!r} is not a plain relative path")
        safety_id = record.get("safety")
        safety = self.index.get(safety_id) if isinstance(safety_id, str) else None
        if safety is None:
            raise bad(f"its safety checkpoint {str(safety_id)[:40]!r} is not in this store")
        plan = Plan.from_json(record.get("plan"), "its plan")
        try:
            self._refuse_reserved(plan.paths(), "path")
        except Unsafe as exc:
            raise bad(exc.message) from None
        for p in plan.paths():
            entry = self.trees.lookup(safety.tree, p)
            plan.before[p] = None if entry is None or entry.mode == DIR else entry
        return plan

    def _refuse_if_journal_bad(self) -> None:
        if self.journal_problem is not None:
            if not self.oplog.journal.exists():
                self.journal_problem = None  # resolved: the file was removed
                return
            raise StoreDamaged(f"rewinds are refused: {self.journal_problem}")

    def undo(self, dry_run: bool = False, dirty: Iterable[str] | None = None,
             finish_later: bool = False) -> RewindResult:
        """Revert the last rewind or undo (so undo twice is redo); ``finish_later`` as in
        ``rewind``."""
        self.finish_rewind()
        last = self.oplog.last()
        if last is None:
            raise Conflict("nothing to undo: no rewind has been made in this store")
        self._check_op(last)
        if last.get("mode") == "conversation":
            sid, prev = last.get("session"), last.get("prevHead")
            assert isinstance(sid, str)
            if dry_run:
                return RewindResult([], [], [], None, True, "conversation", None, prev)
            cur = self.backend.head(sid)
            if isinstance(prev, str):
                self.backend.set_head(sid, prev)
            self.oplog.add({"id": new_id(), "op": "undo", "ts": now_iso(), "mode": "conversation",
                            "session": sid, "prevHead": cur, "newHead": prev,
                            "undoOf": last.get("id")}, fsync=self.config.fsync_commits)
            return RewindResult([], [], [], None, False, "conversation", None, prev)
        safety = self.index.get(str(last.get("safety")))
        if safety is None:
            raise NotFound(
                f"cannot undo: the safety checkpoint {last.get('safety')!r} of the last rewind is "
                "gone (dropped by retention)")
        # Undo of a `both` rewind is itself `both`: its event follows the head the rewind
        # found, so the conversation goes back too, and undoing that comes forward again.
        prev = last.get("prevHead")
        both = last.get("mode") == "both" and isinstance(prev, str)
        return self._rewind_files(
            safety.id, safety.tree, last.get("paths"), "both" if both else "files", dry_run,
            False, [], unknown=_skipped_paths(safety.skipped), session_id=last.get("session"),
            to_event=prev if both else None, op="undo", undo_of=last.get("id"), dirty=dirty,
            finish_later=finish_later)

    def _check_op(self, op: JSON) -> None:
        """An operation-log line is input: its ids and paths are checked before use."""
        where = f"the last line of {self.oplog.path}"
        try:
            check_id(op.get("session"), "its session")
            for key in ("id", "prevHead", "newHead"):
                if op.get(key) is not None:
                    check_id(op.get(key), key)
        except InvalidInput as exc:
            raise StoreDamaged(f"{where}: {exc.message}; run 'turnback fsck'") from None
        if op.get("mode") not in MODES:
            raise StoreDamaged(f"{where}: mode {str(op.get('mode'))[:40]!r} is unknown")
        sel = op.get("paths")
        if sel is not None and (not isinstance(sel, list) or not all(
                isinstance(p, str) and _normal(p) == p for p in sel)):
            raise StoreDamaged(f"{where}: its paths are not plain relative paths; "
                               "run 'turnback fsck'")

    # -- maintenance -------------------------------------------------------------------
    def disk_usage(self) -> int:
        total = 0
        for dirpath, _dirs, files in os.walk(self.root):
            for f in files:
                try:
                    total += os.lstat(os.path.join(dirpath, f)).st_size
                except OSError:
                    pass
        return total

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
            "pendingRewind": self.oplog.journal.exists(),
        }

    def log(self) -> list[JSON]:
        """The operation log (rewinds and undos), oldest first."""
        return self.oplog.all()

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

    def gc(self, dry_run: bool = False, keep_last: int | None = None,
           keep_days: float | None = None, quota_bytes: int | None = None) -> Any:
        from .gc import collect

        self.finish_rewind()

        return collect(self, dry_run=dry_run, keep_last=keep_last, keep_days=keep_days,
                       quota_bytes=quota_bytes)

    def fsck(self) -> Any:
        from .fsck import check

        return check(self)

    def remove_store(self) -> None:
        import shutil  # here: with bz2 and lzma, ~2 ms of every CLI run otherwise

        shutil.rmtree(self.root)

