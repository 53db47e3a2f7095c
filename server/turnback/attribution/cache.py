"""Kept walks, so that asking again is cheap: what the language server holds per folder.

The history (who made each step) is kept until ``invalidate`` — the server calls it when
the store changes, as it tells the client (``turnback/didChange``); without a watcher to
say so, ``trusted=False`` checks the history's key on every call. A file's walk is kept
and continued over the checkpoints added since; it is started again only when the steps
it already walked changed (a turn's end found later, a session imported, a new rewind).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass

from ..store.facade import Store
from . import saved
from .blame import Blame, Walker, blame_at, blame_now
from .history import History, Rewind, history_key, load_history
from .origins import Origin

MAX_FILES = 64  # walks kept (least recently asked for dropped first)


@dataclass(slots=True)
class _Kept:
    walker: Walker
    ids: list[str]  # the checkpoints the walk went over, and who made each step
    authors: list[Origin]
    rewinds: dict[str, list[Rewind]]

    def still_holds(self, history: History) -> bool:
        n = len(self.ids)
        if n > len(history.checkpoints):
            return False
        if [c.id for c in history.checkpoints[:n]] != self.ids:
            return False
        if history.authors[:n] != self.authors:
            return False
        seen = set(self.ids)
        return {k: v for k, v in history.rewinds.items() if k in seen} == self.rewinds


class BlameCache:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._history: History | None = None
        self._stale = True
        self._files: OrderedDict[str, _Kept] = OrderedDict()

    def invalidate(self) -> None:
        """The store changed: check the history again before the next answer."""
        self._stale = True

    def history(self, store: Store, trusted: bool = True) -> History:
        with self._lock:
            h = self._history
            if h is not None and not self._stale and trusted:
                return h
            self._stale = False
            if h is None or h.key != history_key(store):
                h = self._history = load_history(store)
            return h

    def blame(self, store: Store, path: str, at: str | None = None, text: bytes | None = None,
              trusted: bool = True, save: bool = True) -> Blame:
        """``save``: write the walk to the store's cache for the next process (not in a
        read-only server)."""
        history = self.history(store, trusted)
        with self._lock:
            kept = self._files.pop(path, None)
        if kept is None or not kept.still_holds(history):
            kept = _Kept(saved.load(store, history, path) or Walker(store, path), [], [], {})
        if at is not None:
            return blame_at(store, history, path, at, kept.walker)  # kept as it was
        before = kept.walker.state.position
        result = blame_now(store, history, path, kept.walker, text)
        if save and kept.walker.state.position != before:
            saved.save(store, history, kept.walker)
        ids = [c.id for c in history.checkpoints]
        seen = set(ids)
        kept = _Kept(kept.walker, ids, list(history.authors),
                     {k: v for k, v in history.rewinds.items() if k in seen})
        with self._lock:
            self._files[path] = kept
            while len(self._files) > MAX_FILES:
                self._files.popitem(last=False)
        return result
