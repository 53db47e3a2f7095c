"""Watches the folders agents write their sessions in, and says which paths changed.

The agent follower (``follow.py``) reads a transcript when this tells it the
file changed, so a new prompt is imported — and its checkpoint taken — within
milliseconds of its line reaching the disk, with nothing polled. It is not the
workspace watcher (``inotify_watch.py``/``watch.py``): those feed checkpoints
with the workspace's dirty paths; this one watches a few folders outside it
(``~/.claude/projects/<slug>``, ``~/.codex/sessions``), given as
:class:`~turnback.importers.live.WatchRoot`.

- Linux: one inotify descriptor, a thread blocked in ``poll`` on it and on a
  wake-up pipe (so ``stop`` is immediate). Recursive roots get a watch per
  folder, added as folders appear; links are never watched into
  (``IN_DONT_FOLLOW``).
- A root that does not exist yet (Claude Code makes the project folder at its
  first session here) is waited for by watching its nearest existing ancestor
  (not above ``limit``, the user's home or the root's grandparent); when a folder
  appears there, the watches are laid again and the root is reported, so the
  follower looks for files already in it.
- A lookout root (``WatchRoot.lookout``: the editors' ``workspaceStorage``,
  ``~/.gemini``) is watched with the folders that appear in it after the start,
  so the file that says where this workspace's sessions go (a new storage
  folder's ``workspace.json``) is reported even when it is written just after
  its folder is made. The follower then works its roots out again and hands them
  over (:meth:`AgentWatch.set_roots`); new roots are watched and reported with
  the files already in them.
- Elsewhere: watchfiles on the roots that exist, looking again for missing ones
  each time it yields (every ``WATCHFILES_TICK_MS`` when quiet).

Rotated, truncated or replaced files need nothing here: every change to the
folder's entries or a file's bytes is reported by path, and the follower
compares the file's inode and size with what it read.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Iterable
from pathlib import Path

from ...fs import ready
from ...importers.live import WatchRoot

log = logging.getLogger("turnback.server.agents")

OnPaths = Callable[[set[Path]], None]
RECHECK_S = 2.0  # the fallback's look for roots that appeared, while none exists
WATCHFILES_TICK_MS = 200  # ... and while some do (watchfiles yields this often when quiet)

# inotify masks (linux/inotify.h), as in inotify_watch.py
_MODIFY, _ATTRIB, _CLOSE_WRITE = 0x2, 0x4, 0x8
_MOVED_FROM, _MOVED_TO, _CREATE, _DELETE = 0x40, 0x80, 0x100, 0x200
_DELETE_SELF, _MOVE_SELF = 0x400, 0x800
_Q_OVERFLOW, _IGNORED, _ISDIR = 0x4000, 0x8000, 0x40000000
_ONLYDIR, _DONT_FOLLOW = 0x01000000, 0x02000000
_ROOT_MASK = (_MODIFY | _ATTRIB | _CLOSE_WRITE | _MOVED_FROM | _MOVED_TO | _CREATE | _DELETE
              | _DELETE_SELF | _MOVE_SELF | _ONLYDIR)
_WAIT_MASK = _MOVED_TO | _CREATE | _DELETE_SELF | _MOVE_SELF | _ONLYDIR  # an ancestor
_REARM = _CREATE | _MOVED_TO | _MOVED_FROM | _DELETE  # with _ISDIR: the folder tree changed
_LOOKOUT_MASK = _CLOSE_WRITE | _MOVED_TO | _CREATE | _DELETE_SELF | _MOVE_SELF | _ONLYDIR


class AgentWatch:
    """Calls ``on_paths`` (from its own thread) with the paths that changed under ``roots``."""

    def __init__(self, roots: Iterable[WatchRoot], on_paths: OnPaths,
                 limit: Path | None = None) -> None:
        self.roots = list(dict.fromkeys(roots))
        self.on_paths = on_paths
        self.limit = limit if limit is not None else Path.home()
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self.ready = threading.Event()  # the first watches are laid
        self.watched: set[Path] = set()  # folders watched now (for status and tests)
        self._fresh: set[Path] = set()  # folders made in a lookout since the start
        self._lock = threading.Lock()
        self._wake_w = -1

    def set_roots(self, roots: Iterable[WatchRoot]) -> None:
        """Watch these roots from now on (a lookout said where sessions go changed)."""
        with self._lock:
            self.roots = list(dict.fromkeys(roots))
        self._poke()

    def _poke(self) -> None:
        if self._wake_w >= 0:
            try:
                os.write(self._wake_w, b"x")
            except OSError:
                pass

    @staticmethod
    def inotify() -> bool:
        try:
            from inotify_simple import INotify  # noqa: F401
        except (ImportError, OSError):
            return False
        return True

    def start(self) -> None:
        target = self._run_inotify if self.inotify() else self._run_watchfiles
        self._thread = threading.Thread(target=target, name="turnback-agents", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._poke()
        thread, self._thread = self._thread, None
        if thread is not None and thread is not threading.current_thread():
            thread.join(5)

    # -- what to watch ---------------------------------------------------------------------
    def _ceiling(self, root: Path) -> Path:
        """The highest folder watched while waiting for ``root`` to appear."""
        if root == self.limit or self.limit in root.parents:
            return self.limit
        return root.parent.parent if len(root.parents) >= 2 else root.parent

    def _wanted(self) -> dict[Path, int]:
        """Folder → mask: the roots (and their subfolders), or the ancestors waited on."""
        out: dict[Path, int] = {}
        for root in self._roots_now():
            if root.path.is_dir() and root.lookout:
                out[root.path] = out.get(root.path, 0) | _LOOKOUT_MASK
                for sub in self._fresh:
                    if sub.parent == root.path and sub.is_dir():
                        out[sub] = out.get(sub, 0) | _LOOKOUT_MASK | _DONT_FOLLOW
                continue
            if root.path.is_dir():
                out[root.path] = out.get(root.path, 0) | _ROOT_MASK
                if root.recursive:
                    for sub in _subfolders(root.path):
                        out[sub] = _ROOT_MASK | _DONT_FOLLOW
                continue
            ceiling = self._ceiling(root.path)
            for up in root.path.parents:
                if up.is_dir():
                    if up == ceiling or ceiling in up.parents:
                        out.setdefault(up, _WAIT_MASK)
                    break
                if up == ceiling:
                    break
        return out

    # -- Linux ---------------------------------------------------------------------------------
    def _run_inotify(self) -> None:
        from inotify_simple import INotify

        ino = INotify()
        wake_r, self._wake_w = os.pipe()
        wds: dict[int, Path] = {}
        by_path: dict[Path, int] = {}

        def arm() -> set[Path]:
            """Lay the watches wanted now; the folders newly watched.

            Again until what is wanted stays the same: a folder made between looking
            and watching (``mkdir -p`` of a whole path) would otherwise be missed.
            """
            new: set[Path] = set()
            for _ in range(16):
                new |= arm_once()
                if set(self._wanted()) == set(by_path):
                    break
            return new

        def arm_once() -> set[Path]:
            wanted = self._wanted()
            for path in [p for p in by_path if p not in wanted]:
                wd = by_path.pop(path)
                wds.pop(wd, None)
                try:
                    ino.rm_watch(wd)
                except OSError:
                    pass
            new: set[Path] = set()
            for path, mask in wanted.items():
                try:
                    wd = ino.add_watch(path, mask)
                except OSError as exc:
                    log.debug("cannot watch %s: %s", path, exc)
                    continue
                if path not in by_path:
                    new.add(path)
                old = wds.get(wd)
                if old is not None and old != path:
                    by_path.pop(old, None)
                wds[wd] = path
                by_path[path] = wd
            self.watched = set(by_path)
            return new

        try:
            arm()
            self.ready.set()
            while not self._stop.is_set():
                readable = ready.readable([ino.fileno(), wake_r], None)
                if self._stop.is_set():
                    break
                changed: set[Path] = set()
                rearm = False
                if wake_r in readable:  # new roots (set_roots)
                    os.read(wake_r, 512)
                    rearm = True
                for ev in ino.read(timeout=0):
                    if ev.mask & _Q_OVERFLOW:
                        rearm = True
                        changed.update(r.path for r in self._roots_now())
                        continue
                    folder = wds.get(ev.wd)
                    if folder is None:
                        continue
                    if ev.mask & (_IGNORED | _DELETE_SELF | _MOVE_SELF):
                        rearm = True
                        continue
                    path = folder / ev.name if ev.name else folder
                    lookout = self._lookout_root(folder)
                    if lookout and ev.mask & _ISDIR and ev.mask & (_CREATE | _MOVED_TO):
                        self._fresh.add(path)  # what is written in it is reported too
                    if (ev.mask & _ISDIR and ev.mask & _REARM) or not (
                            lookout or folder in self._fresh or self._inside(folder)):
                        rearm = True  # the tree changed, or something appeared where we wait
                    changed.add(path)
                if rearm:
                    # a new folder is watched first, then listed: a file written into it
                    # before its watch was laid (``mkdir -p`` then a write) is reported here
                    for folder in arm():
                        changed.add(folder)
                        changed.update(_files_in(folder))
                if changed and not self._stop.is_set():
                    try:
                        self.on_paths(changed)
                    except Exception:
                        log.exception("agent watch callback failed")
        except Exception:
            log.exception("watching agents' folders failed; following falls back to re-reads")
        finally:
            self.ready.set()
            wake_w, self._wake_w = self._wake_w, -1
            os.close(wake_r)
            os.close(wake_w)
            ino.close()

    def _roots_now(self) -> list[WatchRoot]:
        with self._lock:
            return list(self.roots)

    def _lookout_root(self, folder: Path) -> bool:
        return any(r.lookout and folder == r.path for r in self._roots_now())

    def _inside(self, folder: Path) -> bool:
        """Whether ``folder`` is a root or below a recursive one (not an ancestor waited on)."""
        return any(folder == r.path or (r.recursive and r.path in folder.parents)
                   for r in self._roots_now())

    # -- elsewhere -----------------------------------------------------------------------------
    def _run_watchfiles(self) -> None:
        import watchfiles

        before: set[Path] = set()
        try:
            while not self._stop.is_set():
                present = [r for r in self._roots_now() if r.path.is_dir()]
                self.watched = {r.path for r in present}
                appeared = self.watched - before
                before = self.watched
                if appeared and self.ready.is_set():
                    self.on_paths(appeared)  # files made with it were not watched: look
                if not present:
                    self.ready.set()
                    self._stop.wait(RECHECK_S)
                    continue
                recursive = any(r.recursive or r.lookout for r in present)
                # The first (empty) yield comes once the watch is laid: then it is ready.
                for batch in watchfiles.watch(*(r.path for r in present),
                                              stop_event=self._stop, debounce=0, step=5,
                                              rust_timeout=WATCHFILES_TICK_MS,
                                              yield_on_timeout=True, recursive=recursive,
                                              watch_filter=None):
                    self.ready.set()
                    if batch:
                        self.on_paths({Path(p) for _, p in batch})
                    if [r for r in self._roots_now() if r.path.is_dir()] != present:
                        break
        except Exception:
            log.exception("watching agents' folders failed")
        finally:
            self.ready.set()


def _files_in(folder: Path) -> list[Path]:
    """The files directly in ``folder`` (not links, not folders: those are watched apart)."""
    try:
        with os.scandir(folder) as it:
            return [Path(e.path) for e in it if e.is_file(follow_symlinks=False)]
    except OSError:
        return []


def _subfolders(root: Path) -> list[Path]:
    """Every folder below ``root``, never through a link."""
    out: list[Path] = []
    stack = [root]
    while stack:
        try:
            with os.scandir(stack.pop()) as it:
                for e in it:
                    if e.is_dir(follow_symlinks=False):
                        out.append(Path(e.path))
                        stack.append(Path(e.path))
        except OSError:
            continue
    return out
