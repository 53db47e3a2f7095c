"""The set of workspace paths changed since the last checkpoint.

Fed by the file watcher, it lets a checkpoint re-read only those paths instead
of walking the whole tree. It is only *trusted* once a full walk has run while
the watcher was already established: until then (start-up) and after any moment
where events may have been lost (queue overflow, watcher error or restart) the
next checkpoint walks everything again.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

# How long a checkpoint (or a preparation) waits for the watcher to confirm that every
# change made before it is in the set; past that, a checkpoint walks the tree.
FLUSH_TIMEOUT_S = 1.0


@dataclass(frozen=True, slots=True)
class Ticket:
    """What one checkpoint was told to read: ``paths`` or, when None, everything.

    ``ahead`` are the paths changed since the last checkpoint that a preparation has
    read already (see ``prepare.py``): the checkpoint covers them without reading.
    """

    paths: frozenset[str] | None
    ahead: frozenset[str] = frozenset()


class DirtyTracker:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._paths: set[str] = set()
        self._ahead: set[str] = set()  # read by a preparation since the last checkpoint
        self._trusted = False
        self._watching = False  # a precise watcher is established right now
        # folders the watcher could not watch (the kernel's limit): every checkpoint walks
        # them, as if they had just changed
        self._unwatched: frozenset[str] = frozenset()
        self.reason = "start-up"  # why the next checkpoint walks (for the log)
        self.on_add: Callable[[], None] | None = None  # called (unlocked) after paths are added
        self._taking = threading.local()  # ``on``: this thread's adds go to its own take

    @contextmanager
    def taking(self) -> Iterator[None]:
        """Paths this thread adds meanwhile (its flush of the watcher) call no ``on_add``.

        A checkpoint or a preparation flushes the watcher and then takes the set: the
        paths are read at once, so the preparer's quiet period (``prepare.py``) would
        only wake the event loop in the middle of the checkpoint, and again when it
        found nothing to prepare (bench/RESULTS.md, branch ``atonce16e``). Paths added
        by another thread (the watcher's own drain) still call it.
        """
        self._taking.on = True
        try:
            yield
        finally:
            self._taking.on = False

    # -- fed by the watcher thread -------------------------------------------------
    def add(self, paths: set[str]) -> None:
        with self._lock:
            self._paths |= paths
        hook = self.on_add
        if hook is not None and paths and not getattr(self._taking, "on", False):
            hook()

    def watching(self, live: bool, reason: str = "") -> None:
        """The watcher came up (``live``) or went down; either way events may be missing."""
        with self._lock:
            self._watching = live
            self._trusted = False
            self._unwatched = frozenset()
            self._paths.clear()
            if reason:
                self.reason = reason

    def unwatched(self, folders: frozenset[str]) -> None:
        """The folders (each with everything below it) no watch covers: part of every
        checkpoint's paths from now on, so a change in them is never missed."""
        with self._lock:
            self._unwatched = folders

    @property
    def walked(self) -> frozenset[str]:
        """The folders every checkpoint walks (see ``unwatched``)."""
        with self._lock:
            return self._unwatched

    def invalidate(self, reason: str) -> None:
        """Events may have been missed: the next checkpoint walks the tree."""
        with self._lock:
            self._trusted = False
            self._paths.clear()
            self.reason = reason

    # -- used by checkpoints ---------------------------------------------------------
    def take(self, *, walk: bool = False) -> Ticket:
        """Hand the current set to a checkpoint and start a new one.

        An untrusted tracker (or ``walk``: the caller could not flush the watcher)
        hands out None, walk everything; if the watcher is up, that walk makes the
        set trustworthy from now on.
        """
        with self._lock:
            ahead = frozenset(self._ahead)
            if self._trusted and self._watching and not walk:
                ticket = Ticket(frozenset(self._paths | self._unwatched), ahead)
            else:
                ticket = Ticket(None, ahead)
                self._trusted = self._watching
            self._paths = set()
            self._ahead = set()
            return ticket

    def take_to_prepare(self) -> frozenset[str] | None:
        """Hand the current set to a preparation; None (nothing taken) when untrusted.

        The paths then count as read ahead for the next checkpoint's ticket.
        """
        with self._lock:
            if not (self._trusted and self._watching):
                return None
            paths, self._paths = frozenset(self._paths), set()
            self._ahead |= paths
            return paths

    def give_back(self, ticket: Ticket) -> None:
        """The checkpoint failed: what it was to read is still unread."""
        with self._lock:
            self._ahead |= ticket.ahead
            if ticket.paths is None:
                self._trusted = False
            else:
                self._paths |= ticket.paths

    def give_back_prepared(self, paths: frozenset[str]) -> None:
        """The preparation failed or did nothing: its paths are still unread."""
        with self._lock:
            self._paths |= paths

    @property
    def trusted(self) -> bool:
        """Whether the next checkpoint may read only the dirty paths (after a flush)."""
        with self._lock:
            return self._trusted and self._watching

    @property
    def ahead(self) -> int:
        """Changed paths already read by a preparation, since the last checkpoint."""
        with self._lock:
            return len(self._ahead)

    @property
    def changed(self) -> int | None:
        """Paths changed since the last checkpoint, read ahead or not; None when unknown."""
        with self._lock:
            if not (self._trusted and self._watching):
                return None
            return len(self._paths | self._ahead)

    @property
    def count(self) -> int | None:
        """Paths changed since the last checkpoint; None when unknown (untrusted)."""
        with self._lock:
            return len(self._paths) if self._trusted and self._watching else None
