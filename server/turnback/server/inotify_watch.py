"""Watches one workspace folder and its store with Linux inotify, read on demand.

The same two jobs as :class:`~turnback.server.watch.FolderWatcher` (store files
become ``turnback/didChange``; workspace paths feed the :class:`DirtyTracker`),
with one difference that matters for an agent waiting on a checkpoint: nothing
blocks on the inotify descriptor. The kernel queues every event inside the
system call that caused it, so

- ``flush`` is a non-blocking read of that queue: every change made before the
  call is in it, without a cookie file or a wait for a batch (~0.1 ms instead of
  the 3-4 ms a watcher thread's quiet period costs);
- no thread is woken per event: a rewind writing files into a watched tree does
  not hand the CPU to a watcher for each of them (measured: ten file
  replacements 4.8 ms with a blocking watcher, 1.4 ms without one);
- a background thread drains the queue every ``IDLE_MS`` (``BUSY_MS`` while
  events keep coming), so notifications still arrive well within 200 ms.

A real queue overflow (``IN_Q_OVERFLOW``) makes the next checkpoint walk.
Folders are watched one by one (inotify is not recursive): a new or moved-in
folder is watched when its event is read and is itself reported dirty, so the
scanner reads all of it. ``.git`` and ``.turnback`` folders are not watched; in
the store only its top folder and ``sessions/`` are (the files that hold data).
"""

from __future__ import annotations

import errno
import logging
import os
import threading
from typing import TYPE_CHECKING

from ..snapshot.ignore import ALWAYS
from .watch import Watcher, classify_store_path

if TYPE_CHECKING:
    from inotify_simple import INotify

log = logging.getLogger("turnback.server.watch")

IDLE_MS = 50  # queue drained this often when nothing happens (20 wake-ups a second)
BUSY_MS = 10  # ... and this often while events keep coming (a burst must not overflow it)

# what changes a folder's listing or a file's bytes, mode or link target
_CHANGES = 0x2 | 0x4 | 0x40 | 0x80 | 0x100 | 0x200  # MODIFY ATTRIB MOVED_FROM/TO CREATE DELETE
_SELF = 0x400 | 0x800  # DELETE_SELF MOVE_SELF: the watched folder itself went away
_ADD = _CHANGES | _SELF | 0x01000000 | 0x02000000 | 0x04000000  # ONLYDIR DONT_FOLLOW EXCL_UNLINK
_Q_OVERFLOW = 0x4000
_IGNORED = 0x8000
_ISDIR = 0x40000000
_NEW_DIR = 0x80 | 0x100  # MOVED_TO, CREATE
_MOVED_FROM = 0x40


def available() -> bool:
    """Whether this system has inotify and the library that reaches it."""
    try:
        from inotify_simple import INotify
    except (ImportError, OSError):
        return False
    try:
        INotify().close()
    except OSError:
        return False
    return True


class InotifyWatcher(Watcher):
    """The inotify watcher of one workspace folder."""

    THREAD = "turnback-inotify"

    def _setup(self) -> None:
        self._lock = threading.Lock()  # one reader of the queue at a time
        # Held from reading a batch until its store changes are reported (``drain``).
        # Never taken under ``_lock``: covers_store takes that one under the listing's
        # lock, and a report takes the listing's lock.
        self._reporting = threading.Lock()
        self._ino: INotify | None = None
        self._dirs: dict[int, tuple[str, str]] = {}  # wd -> ("ws" | "store", relative folder)
        self.precise = True

    def covers_store(self) -> bool:
        """Whether the store's files reach this watcher (False: restart it). A store made
        inside the workspace is watched as soon as its folder's event is read."""
        if self._store.startswith(self._ws + os.sep):
            return True
        with self._lock:
            return any(kind == "store" and rel == "" for kind, rel in self._dirs.values())

    # -- flush -------------------------------------------------------------------------
    def flush(self, timeout: float = 1.0) -> bool:
        """Read every event queued so far: the dirty set then holds every change made
        before this call. False when that cannot be known (not watching)."""
        if not self._ready.is_set():
            return False
        try:
            self.drain()
        except OSError as exc:
            log.warning("reading the inotify queue of %s failed: %s", self._ws, exc)
            return False
        return self._ready.is_set()

    # -- the thread --------------------------------------------------------------------
    def _run(self) -> None:
        backoff = 0.5
        while not self._stop.is_set():
            try:
                self._open()
            except OSError as exc:
                self._close()
                why = (
                    "out of inotify watches (raise fs.inotify.max_user_watches)"
                    if exc.errno == errno.ENOSPC
                    else str(exc)
                )
                self.tracker.watching(False, f"watcher could not start: {why}")
                log.warning(
                    "cannot watch %s (%s); checkpoints walk the whole tree, retrying in %.0fs",
                    self._ws, why, backoff,
                )  # fmt: skip
                self._stop.wait(backoff)
                backoff = min(backoff * 2, 30.0)
                continue
            self._up(f"inotify, {len(self._dirs)} folders")
            backoff = 0.5
            wait = IDLE_MS
            try:
                while not self._stop.wait(wait / 1000):
                    wait = BUSY_MS if self.drain() else IDLE_MS
                    if not self._ready.is_set():
                        break  # the workspace folder itself went away: start again
            except Exception as exc:
                backoff = self._failed(exc, backoff)
            finally:
                self._ready.clear()
                self._close()
        self.tracker.watching(False, "watcher stopped")

    def _open(self) -> None:
        from inotify_simple import INotify

        with self._lock:
            self._ino = INotify(nonblocking=True)
            self._dirs = {}
            self._watch_tree("ws", "", raise_root=True)
            self._watch_store()  # if it exists; one made later inside the workspace is seen

    def _close(self) -> None:
        with self._lock:
            ino, self._ino = self._ino, None
            self._dirs = {}
        if ino is not None:
            ino.close()

    def _watch_store(self) -> None:
        """The store's top folder and ``sessions/``: the only folders whose files say
        that sessions or checkpoints changed (objects, indexes and locks are noise)."""
        self._add("store", "")
        self._add("store", "sessions")

    def _full(self, kind: str, rel: str) -> str:
        base = self._ws if kind == "ws" else self._store
        return os.path.join(base, rel) if rel else base

    def _add(self, kind: str, rel: str) -> bool:
        assert self._ino is not None
        try:
            wd = self._ino.add_watch(self._full(kind, rel), _ADD)
        except OSError as exc:
            if exc.errno in (errno.ENOENT, errno.ENOTDIR, errno.EACCES):
                return False  # gone already, or not a folder, or not ours to read
            raise
        self._dirs[wd] = (kind, rel)  # a moved folder keeps its wd: this renames it
        return True

    def _skip(self, rel: str, name: str) -> bool:
        """Never watched nor reported: ``.git``, ``.turnback`` and the store folder."""
        return name in ALWAYS or os.path.join(self._full("ws", rel), name) == self._store

    def _watch_tree(self, kind: str, top: str, raise_root: bool = False) -> None:
        """Watch ``top`` and every folder below it (each is watched before it is listed,
        so a folder made meanwhile is an event, not a gap)."""
        stack = [top]
        while stack:
            rel = stack.pop()
            if not self._add(kind, rel):
                if raise_root and rel == top:
                    raise FileNotFoundError(f"{self._full(kind, rel)} is not a folder")
                continue
            try:
                with os.scandir(self._full(kind, rel)) as it:
                    for entry in it:
                        if entry.is_dir(follow_symlinks=False) and not self._skip(rel, entry.name):
                            stack.append(f"{rel}/{entry.name}" if rel else entry.name)
            except (FileNotFoundError, NotADirectoryError, PermissionError):
                continue

    def drain(self) -> bool:
        """Read and handle the queued events; True if there were any.

        The tracker is updated before the queue is let go: a ``flush`` that finds the
        queue empty must not overtake a drain whose paths are not in the set yet. Nor
        its report of store changes: a drain under way is waited for, so a flush is a
        barrier for the reports too, and the reports keep the order of the events.
        """
        with self._reporting:
            return self._drain()

    def _drain(self) -> bool:
        sessions: set[str] = set()
        checkpoints = False
        with self._lock:
            ino = self._ino
            if ino is None:
                return False
            events = ino.read(timeout=0)
            if not events:
                return False
            self.batches += 1
            dirty: set[str] = set()
            lost = overflow = False
            broken: OSError | None = None
            new_dirs: list[str] = []
            moved_out: list[str] = []
            try:
                for wd, mask, _cookie, name in events:
                    if mask & _Q_OVERFLOW:
                        overflow = True
                        continue
                    where = self._dirs.get(wd)
                    if where is None:
                        continue  # a folder already forgotten
                    kind, rel = where
                    if mask & _IGNORED:
                        self._dirs.pop(wd, None)
                    elif mask & _SELF:
                        lost = lost or (kind == "ws" and rel == "")
                        checkpoints = checkpoints or kind == "store"  # the store itself moved
                    elif kind == "store":
                        sid, cps = classify_store_path(f"{rel}/{name}" if rel else name)
                        if sid is not None:
                            sessions.add(sid)
                        checkpoints = checkpoints or cps
                        if rel == "" and name == "sessions" and mask & _ISDIR and mask & _NEW_DIR:
                            sessions |= self._watch_sessions()
                    elif name:
                        path = f"{rel}/{name}" if rel else name
                        new_dir = bool(mask & _ISDIR and mask & _NEW_DIR)
                        if new_dir and self._full("ws", path) == self._store:
                            self._watch_store()  # the store was just made inside the workspace
                            sessions |= self._watch_sessions()
                            checkpoints = True
                        elif not self._skip(rel, name):
                            dirty.add(path)
                            if new_dir:
                                new_dirs.append(path)
                            elif mask & _ISDIR and mask & _MOVED_FROM:
                                moved_out.append(path)
                for path in moved_out:
                    self._forget_tree(path)  # watched again below if it moved within
                for path in new_dirs:
                    self._watch_tree("ws", path)
            except OSError as exc:  # out of inotify watches, most likely
                broken = exc
            if lost or broken is not None:
                self._ready.clear()  # the thread starts watching again
                self.tracker.invalidate(
                    "the watched folder itself changed" if lost
                    else f"a new folder could not be watched ({broken})")
                if broken is not None:
                    log.warning("%s: a new folder could not be watched (%s); watching again",
                                self._ws, broken)
            elif overflow:
                self.tracker.invalidate("the inotify event queue overflowed")
            elif dirty:
                self.tracker.add(dirty)
        self._report(sessions, checkpoints)
        return True

    def _forget_tree(self, top: str) -> None:
        """Stop watching a folder that moved away, and every folder below it."""
        assert self._ino is not None
        below = top + "/"
        for wd, (kind, rel) in list(self._dirs.items()):
            if kind == "ws" and (rel == top or rel.startswith(below)):
                del self._dirs[wd]
                try:
                    self._ino.rm_watch(wd)
                except OSError:
                    pass  # already gone with its folder

    def _watch_sessions(self) -> set[str]:
        """Watch ``sessions/`` (just made) and name the sessions written before the watch."""
        self._add("store", "sessions")
        try:
            names = os.listdir(self._full("store", "sessions"))
        except OSError:
            return set()
        return {sid for n in names if (sid := classify_store_path(f"sessions/{n}")[0])}
