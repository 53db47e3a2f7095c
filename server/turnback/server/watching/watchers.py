"""Picks the watcher of a workspace folder.

On Linux the on-demand inotify reader of ``inotify_watch.py`` (faster flushes, no
wake-up per event), elsewhere the watchfiles thread of ``watch.py`` (FSEvents,
ReadDirectoryChanges, or polling). ``TURNBACK_WATCHER=watchfiles`` forces the
latter. Both build on ``watch.py``'s :class:`~turnback.server.watching.watch.Watcher`;
the choice lives here, above both, so neither imports the other's sibling.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from .dirty import DirtyTracker
from .watch import FolderWatcher, StoreChange, Watcher


def make_watcher(
    workspace: Path,
    store_root: Path,
    tracker: DirtyTracker,
    on_store_change: StoreChange,
    on_reset: Callable[[], None] | None = None,
    ignores: tuple[str, ...] = (),
    walk_lays: bool = False,
) -> Watcher:
    """The best watcher this system offers for one workspace folder. ``ignores`` are the
    store's extra ignore patterns (the inotify watcher leaves matching folders unwatched);
    ``walk_lays``: the inotify watcher's workspace watches are laid by the next walk of
    the whole workspace (``Watcher.walk_hook``), not by a listing of its own."""
    if os.environ.get("TURNBACK_WATCHER", "") != "watchfiles":
        from . import inotify_watch

        if inotify_watch.available():
            watcher = inotify_watch.InotifyWatcher(
                workspace, store_root, tracker, on_store_change, on_reset)
            watcher.ignores = ignores
            watcher.walk_lays = walk_lays
            return watcher
    return FolderWatcher(workspace, store_root, tracker, on_store_change, on_reset)
