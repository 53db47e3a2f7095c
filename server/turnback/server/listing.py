"""The session listing of one folder, kept in memory while the watcher runs.

``Store.sessions`` stats every session file on each call (milliseconds for a
thousand sessions). The watcher already reports every change to a session file,
by any process, so while it runs the server keeps the sorted listing and pages
through it; a change (or a watcher restart, when events may have been missed)
drops it and the next request lists again. Changes made through this server
drop it before their answer; other processes' changes are seen as soon as the
watcher reports them — before the ``turnback/didChange`` that announces them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from ..models import SessionSummary
from ..store.facade import Store


class ListingCache:
    def __init__(self, enabled: Callable[[], bool]) -> None:
        self._enabled = enabled  # only trustworthy while a precise watcher runs
        self._lock = threading.Lock()
        self._items: list[SessionSummary] | None = None
        self._generation = 0
        self.hits = 0

    def invalidate(self) -> None:
        with self._lock:
            self._generation += 1
            self._items = None

    def peek(self) -> list[SessionSummary] | None:
        """The listing if it is at hand (no I/O: safe on the event loop)."""
        with self._lock:
            if self._items is not None:
                self.hits += 1
            return self._items

    def sessions(self, store: Store) -> list[SessionSummary]:
        """Every session, newest first (the store's order)."""
        with self._lock:
            if self._items is not None:
                self.hits += 1
                return self._items
            generation = self._generation
        items, _total = store.sessions()
        with self._lock:
            # Kept only if nothing changed while listing (else the next call lists again).
            if generation == self._generation and self._enabled():
                self._items = items
        return items
