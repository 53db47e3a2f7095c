"""The session listing of one folder, kept in memory while the watcher runs.

``Store.sessions`` stats every session file on each call (50 ms of CPU for
10,000 sessions, and rewriting the summary index after a change). The watcher
already reports every change to a session file, by any process, so while it
runs the server keeps the sorted listing and pages through it. A change the
watcher reports names its sessions: only those are summarized again (counting
what was appended) and put back in order, so a live agent's session does not
cost a listing of every session at each change; the refreshed sessions' counts
go to ``index/acc/`` at once, so a server killed later leaves its successor
nothing to count again. A watcher restart (events may have been missed) drops
the listing and the next request lists again. This server's own writes name the
sessions they wrote (``Store.sessions_written``) before their answer; other
processes' changes are seen as soon as the watcher reports them — before the
``turnback/didChange`` that announces them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from ...errors import InvalidInput, NotFound, StoreDamaged
from ...models import SessionSummary
from ...store.facade import Store, listing_order


class ListingCache:
    def __init__(self, enabled: Callable[[], bool]) -> None:
        self._enabled = enabled  # only trustworthy while a precise watcher runs
        self._lock = threading.Lock()
        self._items: list[SessionSummary] | None = None
        self._stale: set[str] = set()  # sessions changed since ``_items`` was made
        self._generation = 0
        self.hits = 0
        self.refreshes = 0  # listings brought up to date by summarizing only what changed
        # a listing of every session was made, or the first one ended (it may have failed),
        # since the server started: the saved first page is not answered any more
        self.listed = False
        self._first_claimed = False
        # sessions this server wrote before its first full listing: an answer made before
        # it counts these, so they show as written (read-your-writes)
        self._named: set[str] = set()

    def invalidate(self) -> None:
        with self._lock:
            self._generation += 1
            self._items = None
            self._stale = set()

    def changed(self, sessions: set[str], *, own: bool = False) -> None:
        """These sessions changed (the watcher saw it, or ``own``: this server wrote them):
        the next listing summarizes them again.

        An empty set (a change it could not name) drops the whole listing.
        """
        if not sessions:
            self.invalidate()
            return
        with self._lock:
            if own and not self.listed:
                self._named |= sessions
            self._generation += 1
            if self._items is not None:
                self._stale |= sessions

    def after_write(self, written: set[str] | None) -> None:
        """Read-your-writes for this server's clients once one of its writes ended:
        ``written`` the sessions the store says it wrote (``Store.sessions_written``; none,
        nothing to do), or None where that is unknown (the write opened the store, or
        failed before it said): the whole listing dropped."""
        if written is None:
            self.invalidate()
        elif written:
            self.changed(written, own=True)

    def claim_first_listing(self) -> bool:
        """True once: the caller starts the first full listing (answering meanwhile from
        ``Store.first_sessions``)."""
        with self._lock:
            claimed, self._first_claimed = self._first_claimed, True
        return not claimed

    @property
    def behind(self) -> bool:
        """The first full listing is running: answers are made from what is at hand
        (one listing counting, not a second one beside it)."""
        with self._lock:
            return self._first_claimed and not self.listed

    def named(self) -> set[str]:
        """The sessions this server wrote since it started, while not yet listed."""
        with self._lock:
            return set(self._named)

    def first_listing_ended(self) -> None:
        """The first full listing ended, listed or not: a failed one leaves the next
        request to list (and report why), not the saved page answered again for ever."""
        with self._lock:
            self.listed = True
            self._named = set()

    def peek(self) -> list[SessionSummary] | None:
        """The listing if it is at hand and up to date (no I/O: safe on the event loop)."""
        with self._lock:
            if self._items is None or self._stale:
                return None
            self.hits += 1
            return self._items

    def sessions(self, store: Store) -> list[SessionSummary]:
        """Every session, newest first (the store's order)."""
        with self._lock:
            if self._items is not None and not self._stale:
                self.hits += 1
                return self._items
            generation, kept, stale = self._generation, self._items, set(self._stale)
        items = _refreshed(store, kept, stale) if kept is not None else None
        if items is None:
            items, _total = store.sessions()
        else:
            self.refreshes += 1
        with self._lock:
            self.listed = True
            self._named = set()
            # Kept only if nothing changed while listing (else the next call lists again).
            if generation == self._generation and self._enabled():
                self._items = items
                self._stale = set()
        return items


def _refreshed(store: Store, kept: list[SessionSummary], stale: set[str]
               ) -> list[SessionSummary] | None:
    """``kept`` with the ``stale`` sessions summarized again, in order (a new list: the kept
    one may be in a reader's hands). A removed session leaves the listing and one that
    cannot be summarized is left out, as ``Store.sessions`` does; None: list in full."""
    fresh: list[SessionSummary] = []
    for sid in stale:
        try:
            fresh.append(store.session_summary(sid))
        except (NotFound, StoreDamaged, InvalidInput):
            continue
        except OSError:
            return None
    store.save_session_counts(stale)  # a killed server's successor counts on from here
    items = [s for s in kept if s.header.id not in stale]
    for summary in fresh:
        key = listing_order(summary)
        lo, hi = 0, len(items)
        while lo < hi:  # newest first: the first place whose key is not greater
            mid = (lo + hi) // 2
            if listing_order(items[mid]) > key:
                lo = mid + 1
            else:
                hi = mid
        items.insert(lo, summary)
    return items
