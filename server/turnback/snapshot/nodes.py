"""What a scan builds (the folder nodes of the walk, files waiting to be hashed, the result)
and the state a ``Scanner`` keeps between scans. The walk (``scan``), the hashing pool
(``hashing``) and the tree building (``build``) share it."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from ..objects.objectstore import ObjectStore
from ..objects.trees import Entry, TreeReader
from ..record import record
from . import prescan
from .ignore import IgnoreRules
from .prescan import Verified
from .statcache import StatCache

if TYPE_CHECKING:
    from concurrent.futures import Future, ThreadPoolExecutor


Progress = Callable[[int, int], None]


class PastBound(Exception):
    """A bounded scan (``Scanner.scan(bound=...)``) would read more than its bound or list
    a folder whole: raised by the listing, before any file is read."""


# ``init=False``: each writes its own ``__init__``, compiled into the ``.pyc``, not by
# ``dataclass`` at every start (``record``'s docstring)
@record(init=False)
class ScanResult:
    """A scan's answer: the root tree and what it holds."""

    tree: str
    files: int
    bytes: int
    skipped: list[dict[str, object]] = field(default_factory=list)
    read: int = 0  # files actually read (not served by the stat cache)

    def __init__(self, tree: str, files: int, bytes: int,
                 skipped: list[dict[str, object]] | None = None, read: int = 0) -> None:
        self.tree = tree
        self.files = files
        self.bytes = bytes
        self.skipped = [] if skipped is None else skipped
        self.read = read


@record(init=False)
class Pending:
    """A file to read: its path and the size the listing saw. Nothing more is kept (no
    ``stat_result``, no absolute path: 0.6 KB a file less, which on a first checkpoint of
    500,000 files is 300 MB); the reader looks at the file again anyway."""

    rel: str
    size: int

    def __init__(self, rel: str, size: int) -> None:
        self.rel = rel
        self.size = size


@record(init=False)
class Looked(Pending):
    """A file an incremental scan of a few changed paths found changed, with the ``lstat``
    it took of it: the reader opens it without looking again (10 changed files: 10
    ``lstat``s fewer), and its row is made from this stat, taken before the read as any
    row's must be. Made only for a few (``hashing.INLINE_MAX`` changed paths at most): a
    ``stat_result`` is 0.6 KB."""

    st: os.stat_result

    def __init__(self, rel: str, size: int, st: os.stat_result) -> None:
        self.rel = rel
        self.size = size
        self.st = st


# What a scan keeps of a file it read, until its folder's tree is built:
# (hash, mode, size); None when it could not be read as a regular file.
Hashed = tuple[str, int, int]
# ... and what a hashing thread hands back: (path, hashed, its stat cache row or None)
HashedRow = tuple[str, Hashed | None, bytes | None]


class Built(NamedTuple):
    """A folder a streaming full scan has built already (its tree stored): all that its
    parent needs of it, in place of its ``DirNode``."""

    hash: str
    files: int
    nbytes: int
    clean: bool  # unchanged since the last scan (see ``DirNode.clean``)


@record(init=False)
class DirNode:
    """A folder of the walk, until its tree is built."""

    entries: dict[str, Entry | DirNode | Pending | Built] = field(default_factory=dict)
    hits: int = 0  # files served by the stat cache
    clean: bool = True  # nothing but stat-cache hits and clean subfolders
    base: str | None = None  # an incremental scan's folder: the tree it patches
    changed: frozenset[str] = frozenset()  # ... and the names in it looked at again
    # a full scan's folder whose listing matched its stat-cache record: its files (``hits``
    # of them, every one as the last full scan saw it) are not in ``entries``
    reused: bool = False
    futures: bool = False  # a streaming scan's: its files are being hashed (``Scanner._open``)

    def __init__(self, entries: dict[str, Entry | DirNode | Pending | Built] | None = None,
                 hits: int = 0, clean: bool = True, base: str | None = None,
                 changed: frozenset[str] = frozenset(), reused: bool = False,
                 futures: bool = False) -> None:
        self.entries = {} if entries is None else entries
        self.hits = hits
        self.clean = clean
        self.base = base
        self.changed = changed
        self.reused = reused
        self.futures = futures



class ScanState:
    """The scanner's components and what it keeps between scans."""

    def __init__(
        self,
        workspace: Path,
        objects: ObjectStore,
        trees: TreeReader,
        ignore: IgnoreRules,
        statcache: StatCache,
        size_cap: int,
    ) -> None:
        self.workspace = workspace
        self._root = str(workspace)  # and a folder's path is this prefix and its own
        self._prefix = self._root if self._root.endswith(os.sep) else self._root + os.sep
        self.objects = objects
        self.trees = trees
        self.ignore = ignore
        self.statcache = statcache
        self.size_cap = size_cap
        self.counts: dict[str, tuple[int, int]] = {}  # tree hash -> (files, bytes)
        # the tree the last checkpoint names, asked only when a scan would answer its
        # recorded root (``TreeBuilding._stored_root``); set by the store
        self.held_root: Callable[[], str | None] | None = None
        self._write = True
        self._started = 0
        self._keep_full = False  # the last scan was full (its save prunes the stat cache)
        self._results: dict[str, Hashed | None] = {}
        self._unreadable: list[dict[str, object]] = []  # files the last scan could not read
        # a bounded scan's bytes still to admit (None: unbounded): each changed file's own
        # ``lstat`` takes its size off, and the read stops at that size (``Looked``)
        self._bytes_left: int | None = None
        self._pool: ThreadPoolExecutor | None = None
        self._pool_lock = threading.Lock()
        # Full scans may check folder records in a forked child (see ``_preverify``); off
        # unless the caller, a one-shot process (the CLI), turns it on: never in the server
        self.fork_verify = False
        self._verified: dict[str, Verified] = {}
        self._recorded = 0  # how many folder records those checks were given
        # Told the path (relative, "" for the top) of each folder a walk is about to list,
        # before it lists it: a caller that watches folders (the server's inotify watcher)
        # lays its watch there, so one listing serves both and no change falls between
        # them. None: nobody asks. It answers True (else None) when the folder has changed
        # since a listing made before this walk began (the server's start child's, made
        # at the fork): the walk then lists it again instead of trusting that one.
        self.before_listing: Callable[[str], bool | None] | None = None
        # An idle child forked before the process had threads (``prescan.fork_worker``),
        # which calls in the child what ``before_listing`` calls here: the next full scan
        # that writes hands it the front of the folder records to check (then drops it)
        self.worker: prescan.Worker | None = None
        # A full scan streams: each folder is built (and its tree stored) as soon as its
        # files are hashed and its subfolders built, so the walk holds only the folders on
        # its path, never the whole workspace (see ``Scanner._list``)
        self._streaming = False
        self._open: list[list[Future[list[HashedRow]]]] = []  # futures of unbuilt folders
        self._submitted = 0
        self._done = 0
        self._progress: Progress | None = None
