"""``turnback/didChange``: one notification per folder per burst of store changes.

Watcher threads report changes; they are merged here on the event loop and sent
after ``COALESCE_S`` so that a checkpoint (objects, index, session line) or an
import of many sessions reaches the client as one notification.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from ..rpc.methods import DID_CHANGE
from ..watching.watch import StoreChange

if TYPE_CHECKING:
    from pygls.lsp.server import LanguageServer

log = logging.getLogger("turnback.server")

COALESCE_S = 0.02


class ChangeNotifier:
    def __init__(self, ls: LanguageServer, loop: asyncio.AbstractEventLoop) -> None:
        self.ls = ls
        self.loop = loop
        self._pending: dict[str, tuple[set[str], bool]] = {}
        self._scheduled: asyncio.TimerHandle | None = None
        self.sent = 0

    def callback(self, folder_uri: str) -> StoreChange:
        """A thread-safe callback for one folder's watcher."""

        def on_change(sessions: set[str], checkpoints: bool) -> None:
            if self.loop.is_closed():
                return
            self.loop.call_soon_threadsafe(self.add, folder_uri, set(sessions), checkpoints)

        return on_change

    def add(self, folder_uri: str, sessions: set[str], checkpoints: bool) -> None:
        """Queue a change (event loop thread)."""
        got = self._pending.get(folder_uri)
        if got is None:
            self._pending[folder_uri] = (sessions, checkpoints)
        else:
            got[0].update(sessions)
            self._pending[folder_uri] = (got[0], got[1] or checkpoints)
        if self._scheduled is None:
            self._scheduled = self.loop.call_later(COALESCE_S, self.flush)

    def flush(self) -> None:
        self._scheduled = None
        pending, self._pending = self._pending, {}
        if getattr(self.ls, "closing", False):
            return
        for uri, (sessions, checkpoints) in pending.items():
            params: dict[str, Any] = {
                "folder": uri,
                "sessions": sorted(sessions),
                "checkpoints": checkpoints,
            }
            try:
                self.ls.protocol.notify(DID_CHANGE, params)
                self.sent += 1
            except Exception:
                log.exception("could not send %s", DID_CHANGE)


class Unheard(ChangeNotifier):
    """A server with no client (``background.py``): store changes have nobody to hear them."""

    def flush(self) -> None:
        self._scheduled = None
        self._pending = {}
