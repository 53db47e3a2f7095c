"""Watches one workspace folder and its store on a background thread (watchfiles).

This module holds what every watcher shares (:class:`Watcher`,
``classify_store_path``) and the portable one, :class:`FolderWatcher` (FSEvents,
ReadDirectoryChanges, or polling). ``watchers.make_watcher`` picks between it and
the Linux one of ``inotify_watch.py``, which builds on this module: so this
module never imports that one.

Two jobs, one inotify (or FSEvents, ReadDirectoryChanges) watcher:

- store files written by any process (the CLI, an agent, an importer, this
  server) become ``turnback/didChange`` notifications, one per batch of events;
- workspace paths feed the :class:`DirtyTracker`, so a checkpoint re-reads only
  what changed.

Events reach Python in batches (watchfiles groups them until ``STEP_MS`` pass
without a new one). Before a checkpoint trusts the dirty set it *flushes*: it
creates a uniquely named cookie file in the store and waits for the batch that
holds it. One watcher delivers events in order, so every change made before the
cookie is then in the set.
"""

from __future__ import annotations

import itertools
import logging
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from ...fs import instore
from ...snapshot.prescan import Worker
from ...store.watchlimit import WatchLimit
from .dirty import DirtyTracker

log = logging.getLogger("turnback.server.watching.watch")

STEP_MS = 2  # quiet time that ends a batch: bounds flush latency (~1-2 steps; 0.6% idle CPU)
DEBOUNCE_MS = 60  # longest a busy stream of events is held before delivery
TIMEOUT_MS = 1000  # wake up this often to notice a stop request
COOKIE_PREFIX = ".tmp-watch-"  # ".tmp-" files in the store are never store data


def _overflow_threshold() -> int:
    """A batch this large means the kernel queue may have overflowed (events lost).

    watchfiles drops inotify's overflow marker (it carries no path), so a burst
    close to the queue's size is treated as an overflow: the next checkpoint walks.
    """
    try:
        queued = int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())
    except (OSError, ValueError):
        queued = 16384
    return max(1024, queued // 2)


OVERFLOW_BATCH = _overflow_threshold()

StoreChange = Callable[[set[str], bool], None]


class WalkHook(Protocol):
    """Handed to a walk of the whole workspace by a watcher that lets that walk lay its
    watches: called with each folder (relative, "" the top) before the walk lists it;
    True (else None) when a listing of it made before the walk must not be trusted."""

    def __call__(self, rel: str) -> bool | None: ...

    # a child that lays this watcher's watches too, for the walk to hand folders to
    # (``Scanner.worker``); None for most walks
    worker: Worker | None

    def done(self) -> bool:
        """The walk ended without an error: take its watches as the whole set. False if it
        did not start at the top (or the watcher restarted): the set is not whole."""
        ...


class Watcher:
    """One workspace folder's watcher thread: what a folder needs of it, whichever library
    is under it (the subclasses)."""

    precise: bool  # events in order, none missed silently: a flush can be trusted
    limit: WatchLimit | None = None  # the kernel's limit keeps some folders unwatched
    THREAD = "turnback-watch"  # the thread's name, before the folder's

    def __init__(
        self,
        workspace: Path,
        store_root: Path,
        tracker: DirtyTracker,
        on_store_change: StoreChange,
        on_reset: Callable[[], None] | None = None,
    ) -> None:
        self.workspace = workspace
        self.store_root = store_root
        self.tracker = tracker
        self.on_store_change = on_store_change
        self.on_reset = on_reset  # (re)started: changes may have gone unseen
        self._ws = str(workspace)
        self._store = str(store_root)
        self._stop = threading.Event()
        self._ready = threading.Event()
        self._tried = threading.Event()  # the first attempt to watch is over (up or failed)
        self._thread = threading.Thread(
            target=self._run, name=f"{self.THREAD}:{workspace.name}", daemon=True
        )
        self.batches = 0
        self._setup()

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._wake()
        if self._thread.is_alive() and threading.current_thread() is not self._thread:
            self._thread.join(timeout=5)

    def wait_ready(self, timeout: float) -> bool:
        return self._ready.wait(timeout)

    def wait_started(self, timeout: float) -> bool:
        """Until the first attempt to watch is over, up or not (False: still trying)."""
        return self._tried.wait(timeout)

    @property
    def ready(self) -> bool:
        return self._ready.is_set()

    def walk_hook(self) -> WalkHook | None:
        """For a walk of the whole workspace about to start: what it calls before listing
        each folder, while this watcher waits for such a walk to lay its workspace
        watches. None when it lays its own (or has them all already)."""
        return None

    def drains_now(self, limit: int) -> bool:
        """Whether a ``flush`` now would read at most ``limit`` bytes of queued events itself,
        waiting for no other thread (``shortwrite.py``). Only inotify's watcher can tell."""
        return False

    def flush(self, timeout: float = 1.0) -> bool:
        """Until every change made before this call is in the tracker, and its store changes
        reported; False when that cannot be known (the caller then walks the tree)."""
        raise NotImplementedError

    def covers_store(self) -> bool:
        """Whether the store's files reach this watcher (False: restart it)."""
        raise NotImplementedError

    def _setup(self) -> None:
        """A subclass's own state, made before the thread starts."""

    def _run(self) -> None:
        raise NotImplementedError

    def _wake(self) -> None:
        """Wake whoever waits on this watcher (stopping)."""

    def _up(self, how: str) -> None:
        """Watching (again): what happened meanwhile is unknown until the next walk."""
        self.tracker.watching(self.precise, "watcher (re)started")
        if self.on_reset is not None:
            self.on_reset()
        self._ready.set()
        self._tried.set()
        log.info("watching %s (%s)", self._ws, how)

    def _failed(self, exc: BaseException, backoff: float) -> float:
        """The watcher broke: checkpoints walk until it is back. Wait, then try again."""
        self.tracker.watching(False, f"watcher failed: {exc}")
        log.warning("watcher of %s failed (%s); restarting", self._ws, exc)
        self._stop.wait(backoff)
        return min(backoff * 2, 30.0)

    def _report(self, sessions: set[str], checkpoints: bool) -> None:
        if sessions or checkpoints:
            try:
                self.on_store_change(sessions, checkpoints)
            except Exception:
                log.exception("store change callback failed")


def classify_store_path(rel: str) -> tuple[str | None, bool]:
    """(session id, checkpoints changed) for a path inside the store.

    Only the files that hold data count: ``sessions/<id>.jsonl`` and
    ``checkpoints.jsonl``. Caches (``index/``), objects, locks and temp files
    change when anyone merely reads or prepares, and would echo back forever.
    """
    parts = rel.split("/")
    if len(parts) == 2 and parts[0] == "sessions" and parts[1].endswith(".jsonl"):
        name = parts[1][: -len(".jsonl")]
        if name and not name.startswith("."):
            return name, False
    if rel == "checkpoints.jsonl":
        return None, True
    return None, False


class FolderWatcher(Watcher):
    """The watchfiles watcher thread of one workspace folder."""

    _instances = itertools.count(1)

    def _setup(self) -> None:
        self._cond = threading.Condition()
        self._seq = 0
        self._seen = 0
        self._cookie = f"{COOKIE_PREFIX}{os.getpid()}-{next(self._instances)}-"
        self.precise = False  # inotify-like (ordered events), not polling
        self._watched: list[str] = []

    def _wake(self) -> None:
        with self._cond:
            self._cond.notify_all()

    # -- flush -------------------------------------------------------------------------
    def flush(self, timeout: float = 1.0) -> bool:
        """Wait until every change made before this call has been delivered.

        False when that cannot be known (no watcher, polling, timeout): the caller
        then walks the tree instead of trusting the dirty set.
        """
        if not (self._ready.is_set() and self.precise):
            return False
        with self._cond:
            self._seq += 1
            seq = self._seq
        cookie = self.store_root / f"{self._cookie}{seq}"
        try:
            # store: private; through no link swapped in (fs/instore.py)
            fd = instore.open_file(cookie, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            os.close(fd)
        except OSError as exc:
            log.warning("cannot write watcher cookie %s: %s", cookie, exc)
            return False
        try:
            with self._cond:
                return (
                    self._cond.wait_for(lambda: self._seen >= seq or self._stop.is_set(), timeout)
                    and not self._stop.is_set()
                )
        finally:
            try:
                instore.unlink(cookie)
            except OSError:
                pass

    # -- the thread --------------------------------------------------------------------
    def _store_inside(self) -> bool:
        return self._store.startswith(self._ws + os.sep)

    def _paths(self) -> list[str]:
        paths = [self._ws]
        if not self._store_inside() and os.path.isdir(self._store):
            paths.append(self._store)
        return paths

    def covers_store(self) -> bool:
        """Whether the store's files reach this watcher (False: restart it)."""
        return self._store_inside() or self._store in self._watched


    def _run(self) -> None:
        # Imported here, on the watcher's thread: not on the way to the first answer.
        from watchfiles._rust_notify import RustNotify

        backoff = 0.5
        while not self._stop.is_set():
            self._watched = self._paths()
            try:
                notify = RustNotify(self._watched, False, False, 300, True, True)
            except Exception as exc:  # missing folder, out of inotify watches, ...
                self.tracker.watching(False, f"watcher could not start: {exc}")
                self._tried.set()
                log.warning(
                    "cannot watch %s (%s); checkpoints walk the whole tree, retrying in %.0fs",
                    self._ws,
                    exc,
                    backoff,
                )
                self._stop.wait(backoff)
                backoff = min(backoff * 2, 30.0)
                continue
            self.precise = repr(notify).startswith("RustNotify(Recommended")
            self._up("events" if self.precise else "polling")
            try:
                with notify:
                    while not self._stop.is_set():
                        res = notify.watch(DEBOUNCE_MS, STEP_MS, TIMEOUT_MS, self._stop)
                        if isinstance(res, str):
                            continue  # "timeout", "signal" or "stop" (the loop test)
                        self._handle(res)
                        backoff = 0.5
            except Exception as exc:
                backoff = self._failed(exc, backoff)
            finally:
                self._ready.clear()
        self.tracker.watching(False, "watcher stopped")
        self._tried.set()
        with self._cond:
            self._cond.notify_all()

    def _handle(self, batch: set[tuple[int, str]]) -> None:
        self.batches += 1
        dirty: set[str] = set()
        sessions: set[str] = set()
        checkpoints = False
        seen = 0
        ws_prefix = self._ws + os.sep
        store_prefix = self._store + os.sep
        lost = False
        for change, path in batch:
            if path == self._store:
                continue  # the store folder itself appearing: its files tell the rest
            if path.startswith(store_prefix):
                rel = path[len(store_prefix) :].replace(os.sep, "/")
                if rel.startswith(self._cookie):
                    if change == 1:
                        try:
                            seen = max(seen, int(rel[len(self._cookie) :]))
                        except ValueError:
                            pass
                    continue
                sid, cps = classify_store_path(rel)
                if sid is not None:
                    sessions.add(sid)
                checkpoints = checkpoints or cps
            elif path.startswith(ws_prefix):
                rel = path[len(ws_prefix) :].replace(os.sep, "/")
                if rel == ".git" or rel.startswith(".git/"):
                    continue  # never snapshotted; git touches it constantly
                dirty.add(rel)
            elif path == self._ws:
                lost = True  # the workspace folder itself moved or vanished
        if lost or len(batch) >= OVERFLOW_BATCH:
            self.tracker.invalidate(
                "the watched folder itself changed"
                if lost
                else f"{len(batch)} changes at once (the event queue may have overflowed)"
            )
            if self.on_reset is not None:  # the store's own events may be lost too
                self.on_reset()
        elif dirty:
            self.tracker.add(dirty)
        self._report(sessions, checkpoints)
        if seen:
            with self._cond:
                self._seen = max(self._seen, seen)
                self._cond.notify_all()
