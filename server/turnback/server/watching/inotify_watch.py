"""Watches one workspace folder and its store with Linux inotify, read on demand.

The same two jobs as :class:`~turnback.server.watching.watch.FolderWatcher` (store files
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
scanner reads all of it (watched first, then listed: a file written right after
its folder was made is an event or in the listing, never neither).

Only what a checkpoint keeps is watched: ignored folders (``.gitignore``,
``.turnbackignore``, git's ``info/exclude`` and ``core.excludesFile``, the
store's extra patterns, and always ``.git`` and ``.turnback``) are not, so an
ignored ``node_modules/`` of 20,000 folders costs no watch of the per-user
budget the editor's own watcher shares. An edit of an ignore file (or of
``info/exclude`` or the user's ``core.excludesFile``, whose folders are watched
too, one watch each) re-judges the folders below it: a folder that became
ignored loses its watch, one that no longer is gains it. (Which file
``core.excludesFile`` names is read when the watches are set up: a config edit
that names another file counts from the next start.)
In the store only its top folder and ``sessions/`` are watched (the files that
hold data).

When the kernel refuses a watch (``ENOSPC``: ``fs.inotify.max_user_watches``
reached) the folder is not lost: it joins the tracker's unwatched folders,
which every checkpoint walks (see ``store/watchlimit.py`` for how it is said).

In the server (``walk_lays``) the workspace's watches are laid by the first walk
of the whole workspace, which a checkpoint after start makes anyway: it calls
``walk_hook``'s hook before listing each folder it keeps (watch, then list), so
each folder is listed once at start, not once by the watcher and again by the
walk (1.1-1.2 s of 21,000 listings on 500,000 files, issue 23). Until such a
walk has ended, the tracker is not trusted: every checkpoint walks, and lays.
The first folder's watcher adopts the instance ``startwalk`` made before the
server's threads, and hands that walk the child that holds it too: the child
watches and checks half the folders. Events on its watches carry numbers this
watcher learns only when its walk watches the same folder; they are kept
(``_orphans``) and handled then. The child may have started at the fork, on the
store of the server's working folder (``startwalk``): its listings are then older
than the walk, so the walk first reads the queue (every change made before the
checkpoint was asked is in it), and a folder with an event on the child's watch,
or every folder after a queue overflow, is listed again by the walk instead of
taken from the child (``_Laying.__call__`` answers the walk's question).
"""

from __future__ import annotations

import errno
import logging
import os
import threading
from typing import TYPE_CHECKING, Any, Final

from ...snapshot import gitexclude
from ...snapshot.ignore import ALWAYS, IGNORE_FILES, IgnoreRules
from ...store import watchlimit
from ...store.watchlimit import WatchLimit
from . import startwalk
from .startwalk import WATCH_MASK
from .watch import Watcher, classify_store_path

if TYPE_CHECKING:
    from inotify_simple import INotify

    from ...snapshot.prescan import Worker

log = logging.getLogger("turnback.server.watching.watch")

IDLE_MS = 50  # queue drained this often when nothing happens (20 wake-ups a second)
BUSY_MS = 10  # ... and this often while events keep coming (a burst must not overflow it)

# what changes a folder's listing or a file's bytes, mode or link target
_CHANGES = 0x2 | 0x4 | 0x40 | 0x80 | 0x100 | 0x200  # MODIFY ATTRIB MOVED_FROM/TO CREATE DELETE
_SELF = 0x400 | 0x800  # DELETE_SELF MOVE_SELF: the watched folder itself went away
_ADD = WATCH_MASK  # _CHANGES, _SELF, ONLYDIR DONT_FOLLOW EXCL_UNLINK (the start child's too)
_Q_OVERFLOW = 0x4000
_IGNORED = 0x8000
_ISDIR = 0x40000000
_NEW_DIR = 0x80 | 0x100  # MOVED_TO, CREATE
_MOVED_FROM = 0x40
_GONE = 0x40 | 0x200  # MOVED_FROM DELETE
_IGNORE_SET = frozenset(IGNORE_FILES)


class _OutOfWatches(Exception):
    """The kernel refused a watch (ENOSPC): the folder is walked by checkpoints instead."""


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
    # extra gitignore-style patterns of the store (``config.ignores``): folders matching
    # them are not watched. Set by the folder before ``start``; fewer patterns than the
    # scanner's only cost watches, never a missed change.
    ignores: tuple[str, ...] = ()
    # The workspace's watches are laid by a walk (``walk_hook``), not by this watcher's
    # own listing of every folder. Set before ``start``.
    walk_lays = False

    def _setup(self) -> None:
        self._lock = threading.Lock()  # one reader of the queue at a time
        # Held from reading a batch until its store changes are reported (``drain``).
        # Never taken under ``_lock``: covers_store takes that one under the listing's
        # lock, and a report takes the listing's lock.
        self._reporting = threading.Lock()
        self._ino: INotify | None = None
        # wd -> ("ws" | "store" | "git" | "gitglobal", relative folder)
        self._dirs: dict[int, tuple[str, str]] = {}
        self._ws_wds: dict[str, int] = {}  # workspace folder -> wd (the "ws" rows of _dirs)
        self._rules: IgnoreRules | None = None
        self._git_info: str | None = None  # the repository's info/ folder (info/exclude)
        # the folder and name of the file core.excludesFile names (git's global ignore file)
        self._git_global: tuple[str, str] | None = None
        # folders the kernel would not watch (tops) -> how many folders not ignored they
        # hold, themselves included (for the numbers said)
        self._unwatched: dict[str, int] = {}
        self._full = False  # a watch was refused since the last time one was freed
        self.limit: WatchLimit | None = None  # what the kernel's limit costs right now
        self._said: str | None = None  # the limit's kind last logged (said once)
        self.precise = True
        self._gen = 0  # counts (re)starts: a walk's hook lays only for the start it began in
        self._laid = False  # the workspace's watches are all laid (or left to the walks)
        # while a walk lays the watches at the limit: each folder refused -> its top in
        # ``_unwatched`` (the walk comes to a folder's subfolders after the folder)
        self._left: dict[str, str] = {}
        # the instance startwalk made and its child, adopted by the first open (walk_lays)
        self._worker: Worker | None = None
        self._adopted = 0  # the start (``_gen``) that uses the adopted instance
        # events on watches the child laid, by watch number, until the walk learns it
        self._orphans: dict[int, list[Any]] = {}
        self._replay: list[Any] = []  # orphans whose folder is known now: read next
        # folders whose child's listing is stale (an event on its watch since), and
        # whether all are (the queue overflowed before the walk laid every watch)
        self._touched: set[str] = set()
        self._all_touched = False

    def covers_store(self) -> bool:
        """Whether the store's files reach this watcher (False: restart it). A store made
        inside the workspace is watched as soon as its folder's event is read."""
        if self._store.startswith(self._ws + os.sep):
            return True
        with self._lock:
            return any(kind == "store" and rel == "" for kind, rel in self._dirs.values())

    @property
    def watch_count(self) -> int:
        """How many inotify watches this watcher holds (workspace, store and git's info/)."""
        with self._lock:
            return len(self._dirs)

    def watched_folders(self) -> set[str]:
        """The workspace folders watched (relative; "" is the workspace itself)."""
        with self._lock:
            return set(self._ws_wds)

    # -- flush -------------------------------------------------------------------------
    def drains_now(self, limit: int) -> bool:
        """No drain under way on the watcher's thread (a flush would wait for it to end:
        a batch of any size) and at most ``limit`` bytes in the kernel's queue (an event
        is 16 bytes and its name, padded), no orphans to replay."""
        import array  # here: fcntl and termios are not on Windows, which imports this module
        import fcntl
        import termios

        if not self._ready.is_set() or not self._reporting.acquire(blocking=False):
            return False
        try:
            ino = self._ino
            if ino is None or self._replay:
                return False
            queued = array.array("i", [0])
            fcntl.ioctl(ino.fileno(), termios.FIONREAD, queued)
            return queued[0] <= limit
        except (OSError, ValueError):
            return False
        finally:
            self._reporting.release()

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
            except Exception as exc:  # OSError mostly; anything else must not end the thread
                no_instance = self._ino is None
                self._close()
                code = exc.errno if isinstance(exc, OSError) else None
                if code == errno.EMFILE and no_instance:
                    self._set_limit(WatchLimit(
                        "instances", 0, 0, watchlimit.read_limit(watchlimit.INSTANCES)))
                    why = "out of inotify instances (raise fs.inotify.max_user_instances)"
                elif code == errno.ENOSPC:
                    self._set_limit(WatchLimit(
                        "watches", 0, 0, watchlimit.read_limit(watchlimit.WATCHES)))
                    why = "out of inotify watches (raise fs.inotify.max_user_watches)"
                else:
                    why = str(exc)
                self.tracker.watching(False, f"watcher could not start: {why}")
                self._tried.set()
                log.warning(
                    "cannot watch %s (%s); checkpoints walk the whole tree, retrying in %.0fs",
                    self._ws, why, backoff,
                )  # fmt: skip
                self._stop.wait(backoff)
                backoff = min(backoff * 2, 30.0)
                continue
            self._up(f"inotify, {len(self._dirs)} folders")
            with self._lock:
                self._publish()
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
        self._tried.set()
        watchlimit.write_note(self.store_root, None)

    def _open(self) -> None:
        from inotify_simple import INotify

        with self._lock:
            self._ino = None
            made = startwalk.take() if self.walk_lays and self._gen == 0 else None
            if made is not None:
                self._ino, self._worker = made
                self._adopted = self._gen + 1
            else:
                self._ino = INotify(nonblocking=True)
            self._orphans, self._replay = {}, []
            self._touched, self._all_touched = set(), False
            self._dirs = {}
            self._ws_wds = {}
            self._unwatched = {}
            self._full = False
            self._rules = IgnoreRules(self.workspace, self.store_root, list(self.ignores))
            # the store and git's info/ first: a handful of watches the limit must not take
            self._watch_store()  # if it exists; one made later inside the workspace is seen
            self._watch_git_info()
            self._gen += 1
            self._left = {}
            if self.walk_lays:
                # the top only (its new folders are events); the rest by the next walk
                if not self._add("ws", ""):
                    raise FileNotFoundError(f"{self._ws} is not a folder")
                self._laid = False
            else:
                self._watch_tree("", raise_root=True)
                self._laid = True

    # -- watches laid by a walk ----------------------------------------------------------
    def walk_hook(self) -> _Laying | None:
        if self.walk_lays and not self._laid:
            # every event queued before the walk is read first: one on a folder the start
            # child listed before the checkpoint was asked makes the walk list it again
            try:
                self.drain()
            except OSError:
                pass  # the thread's next drain fails too and starts watching again
        with self._lock:
            if not self.walk_lays or self._laid or self._ino is None or not self.ready:
                return None
            worker = None
            if self._adopted == self._gen:
                worker, self._worker = self._worker, None
            return _Laying(self, self._gen, worker)

    def _lay(self, gen: int, rel: str, laid: int | None = None) -> bool:
        """A walk is about to list ``rel``: watch it first (or, at the limit, leave it
        to the checkpoints' walks with the folder above it that was refused). True if
        the start child's listing of it may be stale (an event on its watch since, or
        the queue overflowed): the walk lists it again. ``laid``: the watch number the
        child got for it, taken as this folder's watch when nothing happened on it
        since (the kernel would give back the same number; 7,000-14,000 of 21,000
        calls fewer at 500,000 files, bench/RESULTS.md, branch start23)."""
        with self._lock:
            if gen != self._gen or self._ino is None:
                return False
            if rel in self._ws_wds:
                return self._all_touched or rel in self._touched
            parent, _, name = rel.rpartition("/")
            if rel and self._skip(parent, name):
                return False  # the store's folder inside the workspace keeps its own watch
            top = self._left.get(parent) if rel else None
            if top is None and not self._full:
                try:
                    if (laid is not None and laid not in self._dirs and not self._all_touched
                            and rel not in self._touched and laid not in self._orphans):
                        self._dirs[laid] = ("ws", rel)
                        self._ws_wds[rel] = laid
                        self._unwatched.pop(rel, None)
                        return False
                    if self._add("ws", rel):
                        self._unwatched.pop(rel, None)
                        # events on the child's watch of this folder (the same number)
                        got = self._orphans.pop(self._ws_wds[rel], None)
                        if got:
                            self._replay += got
                            self._touched.add(rel)
                    return self._all_touched or rel in self._touched
                except _OutOfWatches:
                    self._full = True
            if top is None:
                top = rel
                self._unwatched[top] = 0
            elif top not in self._unwatched:
                return True  # gone meanwhile (``_drop_unwatched``)
            self._left[rel] = top
            self._unwatched[top] += 1
            return True  # unwatched: what the child saw is no better than a guess

    def _laid_by(self, gen: int) -> bool:
        """The walk of start ``gen`` ended: its watches are the whole set."""
        with self._lock:
            if gen != self._gen or self._ino is None:
                return False
            self._laid = True
            self._left = {}
            self._touched, self._all_touched = set(), False
            self._drop_orphans()
            if self._adopted == gen:
                self._drop_strays()
            self._publish()
            n = len(self._ws_wds)
        log.info("watching %s (inotify, %d folders, laid by the walk)", self._ws, n)
        return True

    def _drop_orphans(self) -> None:
        """Watches the child laid on folders the walk did not keep (ignored now, or gone):
        removed, with what they reported."""
        assert self._ino is not None
        for wd in self._orphans:
            try:
                self._ino.rm_watch(wd)
            except OSError:
                pass  # gone with its folder
        self._orphans = {}

    def _drop_strays(self) -> None:
        """Watches on this instance the walk did not keep and no event has named: the
        start child's on folders the walk never reached (ignored, or records planted for
        them), or all of a child killed before it sent its numbers. Removed, as each held
        one of the user's inotify watches for the server's life. The kernel lists them
        (``/proc/self/fdinfo``; an instance's ``wd`` numbers in hex)."""
        assert self._ino is not None
        try:
            with open(f"/proc/self/fdinfo/{self._ino.fileno()}") as f:
                wds = [int(line.split()[1][3:], 16) for line in f
                       if line.startswith("inotify wd:")]
        except (OSError, ValueError, IndexError):
            return  # no /proc: they stay, as before
        for wd in wds:
            if wd not in self._dirs:
                try:
                    self._ino.rm_watch(wd)
                except OSError:
                    pass  # gone with its folder meanwhile

    def _close(self) -> None:
        with self._lock:
            ino, self._ino = self._ino, None
            worker, self._worker = self._worker, None
            self._dirs = {}
            self._ws_wds = {}
        if worker is not None:
            worker.kill()  # it holds the instance too: it must not outlive this one
        if ino is not None:
            ino.close()

    def _watch_store(self) -> None:
        """The store's top folder and ``sessions/``: the only folders whose files say
        that sessions or checkpoints changed (objects, indexes and locks are noise)."""
        self._add("store", "")
        self._add("store", "sessions")

    def _watch_git_info(self) -> None:
        """The repository's ``info/`` folder, where ``info/exclude`` lives (.git itself is
        never watched: git writes there all the time)."""
        repo = gitexclude.find_repository(self.workspace)
        self._git_global = None
        path = gitexclude.excludes_file(repo[1] if repo is not None else None,
                                        repo[0] if repo is not None else self.workspace)
        if path is not None:
            # its folder (an editor saves by renaming a new file over the old one)
            self._git_global = (str(path.parent), path.name)
            self._add("gitglobal", "")
        if repo is None:
            return
        info = os.path.join(str(repo[1]), "info")
        self._git_info = info
        self._add("git", "")

    def _full_path(self, kind: str, rel: str) -> str:
        if kind == "git":
            return self._git_info or ""
        if kind == "gitglobal":
            return self._git_global[0] if self._git_global is not None else ""
        base = self._ws if kind == "ws" else self._store
        return os.path.join(base, rel) if rel else base

    def _add(self, kind: str, rel: str) -> bool:
        """Watch one folder; False if it is gone or not a folder. Out of watches, raises
        ``_OutOfWatches`` (``OSError`` for the store's own folders)."""
        assert self._ino is not None
        try:
            wd = self._ino.add_watch(self._full_path(kind, rel), _ADD)
        except OSError as exc:
            if exc.errno in (errno.ENOENT, errno.ENOTDIR, errno.EACCES):
                return False  # gone already, or not a folder, or not ours to read
            if exc.errno == errno.ENOSPC and kind == "ws":
                raise _OutOfWatches from exc
            raise
        old = self._dirs.get(wd)
        if old is not None and old[0] == "ws":
            self._ws_wds.pop(old[1], None)
        self._dirs[wd] = (kind, rel)  # a moved folder keeps its wd: this renames it
        if kind == "ws":
            self._ws_wds[rel] = wd
        return True

    def _skip(self, rel: str, name: str) -> bool:
        """Never watched nor reported: ``.git``, ``.turnback`` and the store folder."""
        return name in ALWAYS or os.path.join(self._full_path("ws", rel), name) == self._store

    def _ignored(self, parent: str, rel: str, name: str) -> bool:
        """Whether a checkpoint leaves the folder ``rel`` (in ``parent``) out: then no
        watch. The rules are the scanner's (git's files, the store's patterns)."""
        if self._skip(parent, name):
            return True
        rules = self._rules
        return rules is not None and rules.in_dir(parent, rel, name, True)

    def _watch_tree(self, top: str, raise_root: bool = False) -> None:
        """Watch ``top`` and every folder below it that is not ignored (each is watched
        before it is listed, so a folder made meanwhile is an event, not a gap). A folder
        the kernel will not watch is left to the checkpoints' walks (``_unwatched``)."""
        stack = [top]
        while stack:
            rel = stack.pop()
            if self._full:
                self._leave(rel)
                continue
            try:
                added = self._add("ws", rel)
            except _OutOfWatches:
                self._full = True
                self._leave(rel)
                continue
            if not added:
                if raise_root and rel == top:
                    raise FileNotFoundError(f"{self._full_path('ws', rel)} is not a folder")
                continue
            self._unwatched.pop(rel, None)
            try:
                with os.scandir(self._full_path("ws", rel)) as it:
                    for entry in it:
                        if not entry.is_dir(follow_symlinks=False):
                            continue
                        child = f"{rel}/{entry.name}" if rel else entry.name
                        if not self._ignored(rel, child, entry.name):
                            stack.append(child)
            except (FileNotFoundError, NotADirectoryError, PermissionError):
                continue

    def _leave(self, rel: str) -> None:
        """``rel`` gets no watch: every checkpoint walks it (and all below it)."""
        if rel not in self._unwatched:
            self._unwatched[rel] = self._count_folders(rel)

    def _count_folders(self, top: str) -> int:
        """The folders at and below ``top`` that are not ignored (for the numbers said)."""
        n = 0
        stack = [top]
        while stack:
            rel = stack.pop()
            n += 1
            try:
                with os.scandir(self._full_path("ws", rel)) as it:
                    for entry in it:
                        if entry.is_dir(follow_symlinks=False):
                            child = f"{rel}/{entry.name}" if rel else entry.name
                            if not self._ignored(rel, child, entry.name):
                                stack.append(child)
            except OSError:
                continue
        return n

    def _publish(self) -> None:
        """Tell the tracker which folders checkpoints must walk, and say the limit."""
        self.tracker.unwatched(frozenset(self._unwatched))
        if self._unwatched:
            self._set_limit(WatchLimit("watches", len(self._ws_wds),
                                       sum(self._unwatched.values()),
                                       watchlimit.read_limit(watchlimit.WATCHES)))
        else:
            self._set_limit(None)

    def _set_limit(self, limit: WatchLimit | None) -> None:
        """Keep, note and (once per kind of shortage) log what the kernel's limit costs."""
        if limit == self.limit:
            return
        self.limit = limit
        watchlimit.write_note(self.store_root, limit)
        if limit is None:
            if self._said is not None:
                log.info("%s: every folder is watched again", self._ws)
            self._said = None
        elif self._said != limit.kind:
            self._said = limit.kind
            log.warning("%s: %s", self._ws, limit.message)

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
            if self._replay:
                events, self._replay = self._replay + events, []
            if not events:
                return False
            self.batches += 1
            dirty: set[str] = set()
            lost = overflow = freed = False
            broken: OSError | None = None
            new_dirs: list[str] = []
            moved_out: list[str] = []
            gone: list[str] = []
            rules: set[str] = set()  # folders whose ignore files changed
            exclude = False  # git's info/exclude or core.excludesFile changed
            try:
                for wd, mask, _cookie, name in events:
                    if mask & _Q_OVERFLOW:
                        overflow = True
                        if self._adopted == self._gen and not self._laid:
                            self._all_touched = True  # the child's events are lost too
                        continue
                    where = self._dirs.get(wd)
                    if where is None:
                        if self._adopted == self._gen and not mask & _IGNORED:
                            if not self._laid:  # on a watch of the child's: kept till known
                                self._orphans.setdefault(wd, []).append(
                                    (wd, mask, _cookie, name))
                            else:  # a child's watch no walk kept (a folder ignored now)
                                self._orphans[wd] = []
                                self._drop_orphans()
                        continue  # a folder already forgotten
                    kind, rel = where
                    if kind == "ws" and self._adopted == self._gen and not self._laid:
                        self._touched.add(rel)  # the start child's listing of it is stale
                    if mask & _IGNORED:
                        self._dirs.pop(wd, None)
                        if kind == "ws" and self._ws_wds.get(rel) == wd:
                            del self._ws_wds[rel]
                        freed = True
                    elif mask & _SELF:
                        lost = lost or (kind == "ws" and rel == "")
                        checkpoints = checkpoints or kind == "store"  # the store itself moved
                    elif kind == "git":
                        exclude = exclude or name == "exclude"
                    elif kind == "gitglobal":
                        glob = self._git_global
                        exclude = exclude or (glob is not None and name == glob[1])
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
                        if new_dir and self._full_path("ws", path) == self._store:
                            self._watch_store()  # the store was just made inside the workspace
                            sessions |= self._watch_sessions()
                            checkpoints = True
                        elif not self._skip(rel, name):
                            dirty.add(path)
                            if name in _IGNORE_SET:
                                rules.add(rel)
                            if new_dir:
                                new_dirs.append(path)
                            elif mask & _ISDIR and mask & _MOVED_FROM:
                                moved_out.append(path)
                            if mask & _ISDIR and mask & _GONE:
                                gone.append(path)
                for path in moved_out:
                    self._forget_tree(path)  # watched again below if it moved within
                for path in gone:
                    self._drop_unwatched(path)
                if rules or exclude:
                    assert self._rules is not None
                    self._rules.forget()
                    for top in _tops({""} if exclude else rules):
                        self._rejudge(top)
                for path in new_dirs:
                    parent, _, name = path.rpartition("/")
                    if parent in self._ws_wds and not self._ignored(parent, path, name):
                        self._watch_tree(path)
                if freed and self._unwatched:
                    self._retry_unwatched(dirty)
                if new_dirs or gone or rules or exclude or freed:
                    self._publish()
            except OSError as exc:  # the inotify descriptor itself failed
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
                if self.on_reset is not None:  # the store's own events were lost too
                    self.on_reset()
            elif exclude:
                self.tracker.invalidate("git's info/exclude or core.excludesFile changed")
            elif dirty:
                self.tracker.add(dirty)
        self._report(sessions, checkpoints)
        return True

    def _rejudge(self, top: str) -> None:
        """The ignore rules in force below ``top`` changed: unwatch the folders that are
        ignored now, watch those that no longer are (each before it is listed)."""
        if top and top not in self._ws_wds:
            return  # not watched itself (ignored, gone, or left to the walks)
        stack = [top]
        while stack:
            rel = stack.pop()
            try:
                with os.scandir(self._full_path("ws", rel)) as it:
                    subs = [e.name for e in it if e.is_dir(follow_symlinks=False)]
            except OSError:
                continue
            for name in subs:
                child = f"{rel}/{name}" if rel else name
                if self._ignored(rel, child, name):
                    self._forget_tree(child)
                    self._drop_unwatched(child)
                elif child in self._ws_wds:
                    stack.append(child)
                elif child not in self._unwatched:
                    self._watch_tree(child)

    def _retry_unwatched(self, dirty: set[str]) -> None:
        """Watches were freed: try the folders left to the walks again. One that gets its
        watch is reported changed once, so the next checkpoint still walks it (it may have
        changed while nothing watched it)."""
        self._full = False
        tops = sorted(self._unwatched)
        self._unwatched = {}
        for top in tops:
            self._watch_tree(top)
            if top not in self._unwatched:
                dirty.add(top)

    def _drop_unwatched(self, top: str) -> None:
        """A folder left to the walks is gone (or ignored now): stop walking it."""
        below = top + "/"
        for rel in [r for r in self._unwatched if r == top or r.startswith(below)]:
            del self._unwatched[rel]

    def _forget_tree(self, top: str) -> None:
        """Stop watching a folder (moved away, or ignored now), and every folder below it."""
        assert self._ino is not None
        below = top + "/"
        for rel, wd in [(r, w) for r, w in self._ws_wds.items()
                        if r == top or r.startswith(below)]:
            del self._ws_wds[rel]
            self._dirs.pop(wd, None)
            try:
                self._ino.rm_watch(wd)
            except OSError:
                pass  # already gone with its folder

    def _watch_sessions(self) -> set[str]:
        """Watch ``sessions/`` (just made) and name the sessions written before the watch."""
        self._add("store", "sessions")
        try:
            names = os.listdir(self._full_path("store", "sessions"))
        except OSError:
            return set()
        return {sid for n in names if (sid := classify_store_path(f"sessions/{n}")[0])}


class _Laying:
    """The hook a walk calls (``Watcher.walk_hook``): watches laid for one start."""

    def __init__(self, watcher: InotifyWatcher, gen: int, worker: Worker | None) -> None:
        self._watcher: Final = watcher
        self._gen: Final = gen
        self._top = False  # the walk began at the workspace's top
        # the child that shares this watcher's instance, for the walk (``Scanner.worker``)
        self.worker = worker

    def __call__(self, rel: str) -> bool | None:
        """Watch ``rel`` before the walk lists it; True if a listing of it made before
        the walk (the start child's) must not be trusted."""
        if rel == "":
            self._top = True
        laid = self.worker.laid().get(rel) if self.worker is not None else None
        if not isinstance(laid, int):
            laid = None
        return True if self._watcher._lay(self._gen, rel, laid) else None

    def done(self) -> bool:
        return self._top and self._watcher._laid_by(self._gen)


def _tops(folders: set[str]) -> list[str]:
    """The folders of ``folders`` that are not below another one of them."""
    out: list[str] = []
    for rel in sorted(folders, key=lambda r: (r.count("/"), r)):
        if not any(rel == t or t == "" or rel.startswith(t + "/") for t in out):
            out.append(rel)
    return out
