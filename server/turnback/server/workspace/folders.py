"""Workspace folders: one store, one watcher and one write lock per folder.

Multi-root workspaces get one :class:`Folder` each. Requests name theirs with
``folder`` (a URI or a path); with a single folder it may be left out. A store is
opened without creating it — opening an editor on a folder must not litter it
with ``.turnback/`` — and created by the first write (a checkpoint, an import).

``with_dirty`` is here too: a checkpoint (a request's, a rewind's safety one, or
the agent follower's at a new turn) reads the paths the folder's watcher and
tracker say changed. The agent follower, the checkpoint preparer and the CLI
hand-off listener are started
by the server for a folder; the folder only keeps and stops them (``Background``),
so this module imports neither.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypeVar
from urllib.parse import unquote, urlparse

from ...errors import InvalidInput, NotFound
from ...fs.paths import expand_home
from ...models import RewindResult
from ...store.config import default_store_dir
from ...store.facade import Store
from ..watching.dirty import FLUSH_TIMEOUT_S, DirtyTracker, Ticket
from ..watching.watch import StoreChange, Watcher
from ..watching.watchers import make_watcher
from .listing import ListingCache
from .settings import Settings

if TYPE_CHECKING:
    from ...attribution.cache import BlameCache

log = logging.getLogger("turnback.server")

T = TypeVar("T")

# How long a walking checkpoint waits for a watcher that is still setting up its watches
# (the store's and the top's: the walk lays the rest; a watcher laying its own lists every
# folder, 1-3 s on 20,000 folders); past that it walks without it.
START_WAIT_S = 30.0


class Background(Protocol):
    """Work the server runs for a folder (``follow.AgentFollower``, ``prepare.Preparer``,
    ``handoff.HandoffListener``)."""

    def stop(self) -> None: ...


class Quiet(Background, Protocol):
    """The work a folder's server does when it is quiet (``prepare.Preparer``)."""

    def fold_soon(self) -> None: ...


def file_uri_path(uri: str, windows: bool = os.name == "nt") -> str:
    """The path a ``file:`` URI names, as that platform spells it.

    Windows: a drive (``file:///c%3A/work`` -> ``c:\\work``), a UNC share
    (``file://server/share/x`` -> ``\\\\server\\share\\x``), ``\\`` between folders.
    Elsewhere a URI naming another host is refused (no UNC), and a ``%5C`` stays a
    backslash inside a name."""
    parsed = urlparse(uri)
    raw = unquote(parsed.path)
    host = parsed.netloc if parsed.netloc != "localhost" else ""
    if not windows:
        if host:
            raise InvalidInput(f"folder {uri!r}: only local file: URIs are supported")
        return raw
    if host:
        return "\\\\" + host + raw.replace("/", "\\")
    if raw.startswith("/") and raw[2:3] == ":":
        raw = raw[1:]  # "/c:/work": VS Code's path of a drive
    return raw.replace("/", "\\")


def uri_to_path(uri: str) -> Path:
    """A ``file:`` URI (or a plain path) as an absolute path."""
    if uri.startswith("file:"):
        return Path(file_uri_path(uri))
    if "://" in uri:
        raise InvalidInput(f"folder {uri!r}: only file: URIs are supported")
    return expand_home(uri)


def path_to_uri(path: Path) -> str:
    return path.absolute().as_uri()


class Folder:
    """One workspace folder and everything the server keeps for it."""

    def __init__(self, uri: str, path: Path, settings: Settings) -> None:
        self.uri = uri
        self.path = path
        self.settings = settings
        self.store: Store | None = None
        self.tracker = DirtyTracker()
        self.listing = ListingCache(self._sees_store)
        self._blame: BlameCache | None = None
        self.watcher: Watcher | None = None
        self.follower: Background | None = None  # the AgentFollower, while followAgents is on
        self.preparer: Quiet | None = None  # the Preparer: prepares checkpoints while watching
        self.handoff: Background | None = None  # the HandoffListener: the store's CLI socket
        self.write_lock = asyncio.Lock()
        self.opened = asyncio.Event()  # the first look for the store is done
        self.settled = asyncio.Event()  # no settings change is being applied
        self.settled.set()
        self._unsettled = 0
        self.open_error: Exception | None = None
        self._open_lock = threading.Lock()

    @property
    def blame(self) -> BlameCache:
        """turnback/blame's kept walks (features/blame.py); made, and its modules imported
        (10 ms of the server's start), by the first blame asked."""
        if self._blame is None:
            from ...attribution.cache import BlameCache

            self._blame = BlameCache()
        return self._blame

    def unsettle(self) -> None:
        self._unsettled += 1
        self.settled.clear()

    def settle(self) -> None:
        self._unsettled -= 1
        if self._unsettled == 0:
            self.settled.set()

    async def ready(self) -> None:
        """Until requests may use this folder: opened, and its settings stable."""
        while not (self.opened.is_set() and self.settled.is_set()):
            await self.opened.wait()
            await self.settled.wait()

    @property
    def store_root(self) -> Path:
        if self.store is not None:
            return Path(self.store.root)
        return (self.settings.store_dir(self.path) or default_store_dir(self.path)).resolve()

    # -- blocking: run on a worker thread ------------------------------------------------
    def open_store(self, *, create: bool) -> Store | None:
        """Open the store (creating it if ``create``); None if there is none yet."""
        with self._open_lock:
            if self.store is not None:
                return self.store
            if not self.path.is_dir():
                raise NotFound(
                    f"workspace folder {self.path} does not exist or is not a folder; "
                    "reopen the editor on an existing folder"
                )
            try:
                # The editor's settings override the store's config.json for this
                # process only; the file stays as the CLI and other clients see it.
                self.store = Store.open(
                    self.path,
                    store_dir=self.settings.store_dir(self.path),
                    config=self.settings.store_overrides(),
                    create=create,
                )
            except NotFound:
                if create:
                    raise
                return None
            return self.store

    def close_store(self) -> None:
        handoff, self.handoff = self.handoff, None
        if handoff is not None:
            handoff.stop()
        kept = self.listing.peek()
        self.listing.invalidate()
        with self._open_lock:
            store, self.store = self.store, None
        if store is not None:
            if kept is not None:  # refreshed since the last full listing: the next server's
                store.save_first_sessions(kept)  # first answer starts from here
            store.close()

    # -- watcher ----------------------------------------------------------------------------
    def start_watcher(self, on_store_change: StoreChange) -> None:
        self.stop_watcher()
        if not self.settings.watch or not self.path.is_dir():
            self.tracker.watching(False, "watching is off")
            from ..watching import startwalk

            startwalk.drop()  # no watcher to hand the start child to
            return
        def on_change(sessions: set[str], checkpoints: bool) -> None:
            if sessions:  # the listing is the session files' alone: checkpoints.jsonl is not in it
                self.listing.changed(sessions)  # before the client hears of the change
            if self._blame is not None:
                self._blame.invalidate()
            on_store_change(sessions, checkpoints)

        self.listing.invalidate()
        store = self.store
        ignores = (store.config.ignores if store is not None
                   else self.settings.store_overrides().get("ignores", []))
        self.watcher = make_watcher(
            self.path, self.store_root, self.tracker, on_change, on_reset=self.listing.invalidate,
            ignores=tuple(ignores), walk_lays=True,
        )
        from ..watching import inotify_watch, startwalk

        if not isinstance(self.watcher, inotify_watch.InotifyWatcher):
            startwalk.drop()  # only the inotify watcher takes the start child
        self.watcher.start()

    def stop_watcher(self) -> None:
        if self.preparer is not None:
            self.preparer.stop()
        self.listing.invalidate()
        watcher, self.watcher = self.watcher, None
        if watcher is not None:
            watcher.stop()

    def _sees_store(self) -> bool:
        """Whether every change to the store's files reaches this server's watcher."""
        w = self.watcher
        return w is not None and w.ready and w.precise and w.covers_store()

    @property
    def watching(self) -> bool:
        return self.watcher is not None and self.watcher.ready


class WouldWalk(Exception):
    """``with_dirty(walk=False)`` found the whole workspace to read: nothing was done."""


def with_dirty(
    folder: Folder,
    fn: Callable[[frozenset[str] | None], T],
    scanned: Callable[[T], bool] = lambda _res: True,
    *,
    walk: bool = True,
) -> tuple[T, Ticket]:
    """Run ``fn(dirty)`` with the watcher's changed paths, or None when they are not trusted.

    ``fn`` checkpoints the workspace (directly, or as the safety checkpoint of a
    rewind). If it fails, or ``scanned(result)`` says it took no checkpoint after
    all, the paths go back to the tracker for the next one. Runs on a worker
    thread under the folder's write lock (or on the event loop: ``shortwrite.py``,
    with ``walk`` False: ``WouldWalk``, the ticket given back, where it would walk).
    """
    watcher = folder.watcher
    if not walk and not folder.tracker.trusted:
        raise WouldWalk  # nothing taken, no waiting for the watcher: the pool's write does
    if watcher is not None and not folder.tracker.trusted:
        # A watcher still setting up its watches (start-up): wait for it, so this walk is
        # the one that makes the watcher's set trusted. Otherwise the watcher coming up
        # after it would make the next checkpoint walk again (two walks at start).
        watcher.wait_started(START_WAIT_S)
    # Untrusted, the checkpoint walks anyway: no need to wait for the watcher.
    # Why it walks is read before take(), which makes the tracker trusted again.
    trusted, reason = folder.tracker.trusted, folder.tracker.reason
    with folder.tracker.taking():  # the paths are read now: the preparer need not know
        flushed = watcher is not None and trusted and watcher.flush(FLUSH_TIMEOUT_S)
    ticket = folder.tracker.take(walk=not flushed)
    if ticket.paths is None and not walk:
        folder.tracker.give_back(ticket)  # untrusted again: the pool's write walks
        raise WouldWalk
    # A watcher that waits for a walk to lay its watches (at start) gets this one's.
    hook = watcher.walk_hook() if watcher is not None and ticket.paths is None else None
    scanner = folder.store.scanner if hook is not None and folder.store is not None else None
    if ticket.paths is None:
        why = "the watcher did not confirm in time" if trusted else reason
        log.info("%s: reading the whole workspace (%s)", folder.path, why)
    worker = hook.worker if hook is not None else None
    if scanner is not None:
        scanner.before_listing = hook
        scanner.worker, worker = worker, None  # the start child checks half (startwalk.py)
    try:
        result = fn(ticket.paths)
    except BaseException:
        folder.tracker.give_back(ticket)
        raise
    finally:
        if scanner is not None:
            scanner.before_listing = None
            worker, scanner.worker = scanner.worker, None
        if worker is not None:
            worker.kill()  # no full scan took it
    if hook is not None and hook.worker is not None and hook.worker.laid():
        log.info("%s: the start child checked %d folders", folder.path,
                 len(hook.worker.laid()))
    if not scanned(result):
        folder.tracker.give_back(ticket)
    elif hook is not None and not (scanner is not None and hook.done()):
        # the walk laid no whole set of watches: the next checkpoint walks (and lays) again
        folder.tracker.invalidate("the watches are laid by the next walk")
    return result, ticket


def rewind_with_dirty(folder: Folder,
                      fn: Callable[[frozenset[str] | None], RewindResult]) -> RewindResult:
    """``with_dirty`` for a rewind or an undo (a request's, a hand-off's, a continue's):
    the paths go back to the tracker when it took no safety checkpoint (a rewind of the
    conversation only reads no file)."""
    return with_dirty(folder, fn, _took_safety)[0]


def _took_safety(res: RewindResult) -> bool:
    return res.safety_checkpoint is not None


class Folders:
    """The open workspace folders, by normalized URI."""

    def __init__(self) -> None:
        self._by_key: dict[str, Folder] = {}

    @staticmethod
    def key(uri_or_path: str) -> str:
        return os.path.normcase(str(uri_to_path(uri_or_path).resolve()))

    def add(self, uri: str, settings: Settings) -> Folder:
        # Resolved, as the store resolves it: the watcher matches event paths against
        # the workspace and the store by prefix, and a symlink in either would hide
        # every store change (and every flush marker) from it.
        path = uri_to_path(uri).resolve()
        folder = Folder(uri, path, settings)
        self._by_key[self.key(uri)] = folder
        return folder

    def remove(self, uri: str) -> Folder | None:
        return self._by_key.pop(self.key(uri), None)

    def all(self) -> list[Folder]:
        return list(self._by_key.values())

    def __len__(self) -> int:
        return len(self._by_key)

    def get(self, uri: str | None, method: str) -> Folder:
        """The folder a request names, or the only one."""
        if uri is None:
            if len(self._by_key) == 1:
                return next(iter(self._by_key.values()))
            if not self._by_key:
                raise NotFound(
                    f"{method}: the server has no workspace folder; the client must send "
                    "workspaceFolders (or rootUri) in initialize"
                )
            raise InvalidInput(
                f"{method}: param 'folder' is required when {len(self._by_key)} folders are "
                "open; use one of " + ", ".join(f.uri for f in self._by_key.values())
            )
        try:
            key = self.key(uri)
        except InvalidInput as exc:
            raise InvalidInput(f"{method}: param 'folder': {exc.message}") from None
        folder = self._by_key.get(key)
        if folder is None:
            raise NotFound(
                f"{method}: param 'folder' {uri!r} is not an open workspace folder; open: "
                + ", ".join(f.uri for f in self._by_key.values())
            )
        return folder

    def candidates(self, uri: str | None, method: str) -> list[Folder]:
        """The named folder, or every folder (for ids that say which folder they are in)."""
        if uri is not None or len(self._by_key) <= 1:
            return [self.get(uri, method)]
        return self.all()
