"""Following agents live (setting ``followAgents``).

Claude Code and Codex keep appending to transcripts outside the workspace
(``~/.claude/projects/…``, ``~/.codex/sessions/…``). Every ``POLL_S`` the
folder's :class:`~turnback.importers.Follower` imports what was appended; a
session that got a new user prompt starts a new agent turn, and with
``autoCheckpoint`` the server checkpoints the workspace right then (from the
watcher's dirty paths, so it costs milliseconds), in that session, so every turn
can be rewound — shell-command and hand edits included.

The server starts a follower per folder; the follower needs of the server only
its writes and announcements (``Host``), so this module does not import the
server's class (``core.py`` imports this one).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Protocol, TypeVar

from ..importers import Follower, ImportResult
from ..store.facade import Store
from .folders import Folder, with_dirty

log = logging.getLogger("turnback.server")

T = TypeVar("T")


class Host(Protocol):
    """What a follower uses of the server (:class:`~turnback.server.core.TurnbackServer`)."""

    async def write(
        self,
        folder: Folder,
        fn: Callable[[Store], T],
        *,
        create: bool = ...,
        sessions: set[str] | None = ...,
        checkpoints: bool = ...,
    ) -> T: ...

    def announce(self, folder: Folder, sessions: set[str], checkpoints: bool) -> None: ...


POLL_S = 1.0


class AgentFollower:
    """The follow loop of one folder, an asyncio task."""

    def __init__(self, ls: Host, folder: Folder) -> None:
        self.ls = ls
        self.folder = folder
        self._follower: Follower | None = None
        self._task: asyncio.Task[None] | None = None
        self.polls = 0

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run())

    def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()

    async def _run(self) -> None:
        failures = 0
        while True:
            await asyncio.sleep(POLL_S * min(2**failures, 30))
            try:
                result = await self.ls.write(self.folder, self._poll, create=True)
                failures = 0
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                failures += 1
                log.warning("%s: following agents failed (%s); retrying",
                            self.folder.path, getattr(exc, "message", exc))
                continue
            if result.sessions and not self.folder.watching:
                self.ls.announce(self.folder, set(result.sessions), result.checkpoints > 0)
            if result.prompted and self.folder.settings.auto_checkpoint:
                await self._checkpoint_turns(result)

    def _poll(self, store: Store) -> ImportResult:
        if self._follower is None or self._follower.store is not store:
            self._follower = Follower(store)
        self.polls += 1
        return self._follower.poll()

    async def _checkpoint_turns(self, result: ImportResult) -> None:
        for sid in result.prompted:

            def job(store: Store, sid: str = sid) -> None:
                with_dirty(
                    self.folder,
                    lambda dirty: store.checkpoint(
                        label="new turn", session_id=sid, auto=True, dirty=dirty
                    ),
                )

            try:
                await self.ls.write(self.folder, job, checkpoints=True, sessions={sid})
            except Exception as exc:
                log.warning("%s: no checkpoint at the new turn of %s (%s)",
                            self.folder.path, sid, getattr(exc, "message", exc))
            else:
                log.info("%s: checkpoint at the new turn of %s", self.folder.path, sid)
