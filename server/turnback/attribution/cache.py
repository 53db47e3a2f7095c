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

from ..events import JSON
from ..store.facade import Store
from . import saved
from .blame import Blame, Walker, blame_at, blame_now
from .history import History, Rewind, history_key, load_history
from .origins import Origin

MAX_FILES = 64  # walks kept (least recently asked for dropped first)
MAX_JSON = 20_000  # origins' JSON kept for the next answers (all let go past it)


@dataclass(slots=True)
class _Kept:
    walker: Walker
    history: History | None  # the history the walk went over (None: not walked yet)

    def still_holds(self, history: History) -> bool:
        """Whether the steps walked are still the history's first ones, made by the same
        authors, with the same rewinds among them. A history loaded from the one before
        (``load_history``'s ``previous``) keeps the objects of what did not change, so
        this compares references, not values, in the usual case."""
        old = self.history
        if old is None or old is history:
            return True
        n = len(old.checkpoints)
        if n > len(history.checkpoints):
            return False
        if history.checkpoints[:n] != old.checkpoints or history.authors[:n] != old.authors:
            return False
        def among(rewinds: dict[str, list[Rewind]]) -> dict[str, list[Rewind]]:
            return {k: v for k, v in rewinds.items() if k in old.position}

        return among(history.rewinds) == among(old.rewinds)


class BlameCache:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._history: History | None = None
        self._stale = True
        self._files: OrderedDict[str, _Kept] = OrderedDict()
        self._unsaved: dict[str, tuple[History, Walker]] = {}
        self._json: dict[int, tuple[Origin, JSON]] = {}

    def origins_json(self) -> dict[int, tuple[Origin, JSON]]:
        """The origins' JSON made for earlier answers (``Blame.ranges_json``'s ``made``):
        after a new turn, most of a file's origins are the same objects as before."""
        if len(self._json) > MAX_JSON:
            self._json = {}
        return self._json

    def save_pending(self, store: Store) -> None:
        """Write the walks that went further since they were last saved."""
        with self._lock:
            todo, self._unsaved = self._unsaved, {}
        for history, walker in todo.values():
            saved.save(store, history, walker)

    def invalidate(self) -> None:
        """The store changed: check the history again before the next answer."""
        self._stale = True

    def history(self, store: Store, trusted: bool = True) -> History:
        with self._lock:
            h = self._history
            if h is not None and not self._stale and trusted:
                return h
            self._stale = False
            key = history_key(store, h)
            if h is None or h.key != key:
                h = self._history = load_history(store, h, key)
            return h

    def blame(self, store: Store, path: str, at: str | None = None, text: bytes | None = None,
              trusted: bool = True, save: bool = True) -> Blame:
        """``save``: the walk is to be written to the store's cache for the next process
        (not by a read-only server), by ``save_pending``: after the answer, off its path."""
        history = self.history(store, trusted)
        with self._lock:
            kept = self._files.pop(path, None)
        if kept is None or not kept.still_holds(history):
            kept = _Kept(saved.load(store, history, path) or Walker(store, path), None)
        before = kept.walker.state.position
        if at is not None:
            # a walk already past ``at`` is left as it is (an older one is walked for it)
            result = blame_at(store, history, path, at, kept.walker)
        else:
            result = blame_now(store, history, path, kept.walker, text)
            if save and kept.walker.state.position != before:
                with self._lock:
                    self._unsaved[path] = (history, kept.walker)
        kept = _Kept(kept.walker, history)
        with self._lock:
            self._files[path] = kept
            while len(self._files) > MAX_FILES:
                self._files.popitem(last=False)
        return result
