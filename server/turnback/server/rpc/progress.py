"""``$/progress`` for long work, and cancellation of it.

A request may carry the client's own ``workDoneToken``; otherwise the server
creates one (``window/workDoneProgress/create``) when the client says it can show
progress. The work itself runs on a worker thread: ``report`` is called from
there, throttled, and raises :class:`Cancelled` once the client has cancelled —
through ``window/workDoneProgress/cancel`` or ``$/cancelRequest`` — so the store
stops at its next progress call and commits nothing.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
import uuid
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

from lsprotocol import types

if TYPE_CHECKING:
    from pygls.lsp.server import LanguageServer

log = logging.getLogger("turnback.server")

REPORT_EVERY_S = 0.1  # at most ten progress notifications a second


class Cancelled(Exception):
    """The client cancelled the work; raised inside the worker to stop it."""


class WorkProgress:
    """Progress of one request; also usable (as a no-op reporter) with no client support."""

    def __init__(self, ls: LanguageServer, title: str, token: object = None) -> None:
        self.ls = ls
        self.title = title
        self.token: str | int | None = token if isinstance(token, (str, int)) else None
        self.cancel_event = threading.Event()
        self._loop = asyncio.get_running_loop()
        self._last = 0.0
        self._active = False
        self._begun: asyncio.Future[None] | None = None
        self._finished = False  # no bar is begun once the work is over

    def _supported(self) -> bool:
        caps = self.ls.client_capabilities
        window = caps.window if caps is not None else None
        return bool(window and window.work_done_progress)

    async def begin(self, message: str | None = None) -> None:
        if self.token is None:
            if not self._supported():
                return
            token = f"turnback-{uuid.uuid4().hex[:12]}"
            try:
                await self.ls.work_done_progress.create_async(token)
            except Exception as exc:  # the client refused: work on without a bar
                log.info("client declined progress token: %s", exc)
                return
            self.token = token
        if self._finished:  # begun soon, and the work was over before this ran: no bar,
            # and pygls's entry for the token (made on the client's answer) dropped, else
            # kept for the server's life, one a walking checkpoint answered first
            self.ls.work_done_progress.tokens.pop(self.token, None)
            return
        self.ls.work_done_progress.begin(
            self.token,
            types.WorkDoneProgressBegin(
                title=self.title, cancellable=True, message=message, percentage=0
            ),
        )
        self._active = True
        fut: Future[Any] | None = self.ls.work_done_progress.tokens.get(self.token)
        if fut is not None:
            fut.add_done_callback(self._on_token_done)

    def begin_soon(self, message: str | None = None) -> None:
        """``begin`` without waiting for it: the work starts while the client is asked for a
        token (one round trip, to an extension host that is busy activating extensions when a
        server has just started). Reports made before the bar exists are dropped. If the work
        is over before the client answers, no bar is begun (``finish``): the answer never
        waits for the client."""
        self._begun = asyncio.ensure_future(self.begin(message))
        self._begun.add_done_callback(_log_failure)

    def finish(self, message: str | None = None) -> None:
        """End the work: ``end`` of a bar begun, and none begun after this."""
        self._finished = True
        self.end(message)

    def _on_token_done(self, fut: Future[Any]) -> None:
        if fut.cancelled():
            log.info("%s: cancelled by the client", self.title)
            self.cancel_event.set()

    def check(self) -> None:
        """Raise :class:`Cancelled` if the client cancelled (call from the worker)."""
        if self.cancel_event.is_set():
            raise Cancelled(f"{self.title}: cancelled")

    def report(self, done: int, total: int) -> None:
        """Progress callback for the store (worker thread); throttled."""
        self.check()
        if not self._active:
            return
        now = time.monotonic()
        if now - self._last < REPORT_EVERY_S and done < total:
            return
        self._last = now
        pct = int(done * 100 / total) if total > 0 else None
        value = types.WorkDoneProgressReport(
            message=f"{done:,} / {total:,}", percentage=pct, cancellable=True
        )
        token = self.token
        assert token is not None
        self._loop.call_soon_threadsafe(self.ls.work_done_progress.report, token, value)

    def end(self, message: str | None = None) -> None:
        if not self._active or self.token is None:
            return
        self._active = False
        self.ls.work_done_progress.end(self.token, types.WorkDoneProgressEnd(message=message))
        self.ls.work_done_progress.tokens.pop(self.token, None)


def _log_failure(fut: asyncio.Future[None]) -> None:
    """A progress bar that could not be begun only goes unseen: said in the log."""
    if not fut.cancelled() and fut.exception() is not None:
        log.info("progress not shown: %s", fut.exception())
