"""The set of workspace paths changed since the last checkpoint.

Fed by the file watcher, it lets a checkpoint re-read only those paths instead
of walking the whole tree. It is only *trusted* once a full walk has run while
the watcher was already established: until then (start-up) and after any moment
where events may have been lost (queue overflow, watcher error or restart) the
next checkpoint walks everything again.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Ticket:
    """What one checkpoint was told to read: ``paths`` or, when None, everything."""

    paths: frozenset[str] | None


class DirtyTracker:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._paths: set[str] = set()
        self._trusted = False
        self._watching = False  # a precise watcher is established right now
        self.reason = "start-up"  # why the next checkpoint walks (for the log)

    # -- fed by the watcher thread -------------------------------------------------
    def add(self, paths: set[str]) -> None:
        with self._lock:
            self._paths |= paths

    def watching(self, live: bool, reason: str = "") -> None:
        """The watcher came up (``live``) or went down; either way events may be missing."""
        with self._lock:
            self._watching = live
            self._trusted = False
            self._paths.clear()
            if reason:
                self.reason = reason

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
            if self._trusted and self._watching and not walk:
                ticket = Ticket(frozenset(self._paths))
            else:
                ticket = Ticket(None)
                self._trusted = self._watching
            self._paths = set()
            return ticket

    def give_back(self, ticket: Ticket) -> None:
        """The checkpoint failed: what it was to read is still unread."""
        with self._lock:
            if ticket.paths is None:
                self._trusted = False
            else:
                self._paths |= ticket.paths

    @property
    def trusted(self) -> bool:
        """Whether the next checkpoint may read only the dirty paths (after a flush)."""
        with self._lock:
            return self._trusted and self._watching

    @property
    def count(self) -> int | None:
        """Paths changed since the last checkpoint; None when unknown (untrusted)."""
        with self._lock:
            return len(self._paths) if self._trusted and self._watching else None
