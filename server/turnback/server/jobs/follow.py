"""Following agents live (setting ``followAgents``, on by default in a trusted folder).

Agents keep appending to transcripts outside the workspace
(``~/.claude/projects/…``, ``~/.codex/sessions/…``; every followable source of
``importers/registry.py``). For each folder the server runs one
:class:`AgentFollower`:

1. on open, the sessions already there are imported (``$/progress``, which the
   user may cancel: following stops for this folder until the settings change
   or the editor restarts). A folder with no agent session gets no store;
2. an :class:`~.agent_watch.AgentWatch` on the sources' folders wakes it when a
   file there changes; only those files are read (``Follower.poll(changed)``);
3. in the same write, with ``autoCheckpoint``, a session that got a new user
   prompt is checkpointed right then (from the workspace watcher's dirty paths,
   so it costs milliseconds) — before the agent's tools act — and a session
   whose turn ended (the source's end-of-turn record, or its file rested
   ``IDLE_FLUSH_S``) is checkpointed again. An agent whose own hooks are
   installed (``turnback hooks install``) makes those checkpoints itself at the
   exact moment, so the follower only imports its lines.

The follower needs of the server only its writes, announcements and progress
(``Host``), so this module does not import the server's class.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol, TypeVar

from ...errors import NotFound
from ...importers import Follower, ImportResult, registry
from ...importers.base import Context
from ...importers.follow import watch_roots
from ...importers.hooks import hooked_agents
from ...importers.live import WatchRoot
from ...store.facade import Store
from ..rpc.progress import Cancelled, WorkProgress
from ..waits import within
from ..watching.agent_watch import AgentWatch
from ..workspace.folders import Folder, with_dirty

log = logging.getLogger("turnback.server")

T = TypeVar("T")
IDLE_FLUSH_S = 5.0  # a source with no end-of-turn record: the turn ends when its file rests
RETRY_S = 1.0
WATCH_READY_S = 10.0  # the most the first read waits for the agents' folders to be watched

# How the status bar names an agent; a source not listed shows its registry name.
# the names people know the agents by, for the status bar's "following …" sentence
LABELS = {"claude-code": "Claude Code", "codex": "Codex", "aider": "aider",
          "gemini-cli": "Gemini CLI", "qwen-code": "Qwen Code", "cline": "Cline",
          "roo-code": "Roo Code", "kilo-code": "Kilo Code", "crush": "Crush",
          "opencode-go": "OpenCode (Go)", "copilot-cli": "Copilot CLI", "opencode": "OpenCode",
          "copilot-chat": "Copilot Chat", "continue": "Continue"}


class Host(Protocol):
    """What a follower uses of the server (:class:`~turnback.server.core.TurnbackServer`)."""

    async def write(
        self,
        folder: Folder,
        fn: Callable[[Store], T],
        *,
        cancel: Any = ...,
        create: bool = ...,
        sessions: set[str] | None = ...,
        checkpoints: bool = ...,
    ) -> T: ...

    def announce(self, folder: Folder, sessions: set[str], checkpoints: bool) -> None: ...

    def work_progress(self, title: str) -> WorkProgress: ...


def label(source: str) -> str:
    return LABELS.get(source, source)


class AgentFollower:
    """The follow loop of one folder, an asyncio task woken by its :class:`AgentWatch`."""

    def __init__(self, ls: Host, folder: Folder, sources: list[str],
                 home: Path | None = None) -> None:
        self.ls = ls
        self.folder = folder
        self.sources = sources
        self.ctx = Context(workspace=folder.path, home=home or Path.home())
        self.state = "starting"  # importing, following, cancelled
        self._follower: Follower | None = None
        self._task: asyncio.Task[None] | None = None
        self._watch: AgentWatch | None = None
        self._pending: set[Path] = set()
        self._wake = asyncio.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self.polls = 0
        self.checkpoints = 0
        self._fresh = False  # no session existed at open: everything found later is new
        self._roots: list[WatchRoot] = []

    # -- lifecycle -------------------------------------------------------------------------
    def start(self) -> None:
        if self._task is None:
            self._loop = asyncio.get_running_loop()
            self._task = self._loop.create_task(self._run())

    def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
        watch, self._watch = self._watch, None
        if watch is not None:
            watch.stop()

    def roots(self) -> list[tuple[str, WatchRoot]]:
        return watch_roots(self.ctx, self.sources)

    def describe(self) -> dict[str, Any]:
        """What the status answer says: the agents followed, their files, and in words."""
        files = self._follower.followed() if self._follower is not None else {}
        agents: list[dict[str, Any]] = [
            {"agent": s, "label": label(s), "files": files.get(s, 0)} for s in self.sources]
        names = ", ".join(label(s) for s in self.sources) or "no agent"
        words = {
            "starting": f"following {names}",
            "importing": f"importing the sessions of {names}",
            "following": f"following {names}",
            "cancelled": "following agents stopped (the import was cancelled)",
        }
        return {"state": self.state, "agents": agents, "summary": words[self.state]}

    # -- the watch's thread → the loop --------------------------------------------------------
    def _on_paths(self, paths: set[Path]) -> None:
        loop = self._loop
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(self._add, paths)

    def _add(self, paths: set[Path]) -> None:
        self._pending |= paths
        self._wake.set()

    async def _run(self) -> None:
        self._roots = [r for _, r in self.roots()]
        self._watch = AgentWatch(self._roots, self._on_paths, limit=self.ctx.home)
        self._watch.start()  # before the first read: nothing appended meanwhile is missed
        # ... once its watches are laid (the thread lays them): a folder made before that,
        # in a lookout above all, would be seen by neither the watch nor the first read
        await asyncio.get_running_loop().run_in_executor(None, self._watch.ready.wait,
                                                         WATCH_READY_S)
        self.state = "importing"
        if not await self._first():
            watch, self._watch = self._watch, None
            if watch is not None:
                watch.stop()
            return
        self.state = "following"
        failures = 0
        due: float | None = None
        while True:
            timeout = None if due is None else max(0.0, due - time.monotonic())
            await within(self._wake.wait(), timeout)  # woken, or the time came
            self._wake.clear()
            paths, self._pending = self._pending, set()
            if paths and not self._concerns(paths) and (due is None or time.monotonic() < due):
                continue  # nothing of ours changed (a workspace file beside aider's history)
            if any(r.lookout and r.holds(p) for r in self._roots for p in paths):
                await self._new_roots()
            try:
                due = await self._step(paths)
                failures = 0
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                failures += 1
                self._pending |= paths  # read them again next time
                log.warning("%s: following agents failed (%s); retrying",
                            self.folder.path, getattr(exc, "message", exc))
                due = time.monotonic() + RETRY_S * min(2**failures, 30)

    async def _new_roots(self) -> None:
        """A lookout saw a change: where this workspace's sessions go may have changed
        (a storage folder made for it): watch the roots as they are now."""
        roots = [r for _, r in await asyncio.get_running_loop().run_in_executor(
            None, self.roots)]
        if roots != self._roots:
            self._roots = roots
            if self._watch is not None:
                self._watch.set_roots(roots)  # new roots are reported with their files
        if self._follower is not None:
            self._follower.refresh_roots()

    def _concerns(self, paths: set[Path]) -> bool:
        follower = self._follower
        known = follower.files if follower is not None else {}
        return any(p in known or any(r.holds(p) for r in self._roots) for p in paths)

    async def _first(self) -> bool:
        """Import the sessions already there; False if the user cancelled it."""
        had_store = self.folder.store is not None
        found = had_store or await self._any_session()
        if not found:
            # Nothing yet: no store is made until an agent writes here, and what it
            # writes from now on is live, not history.
            self._fresh = True
            return True
        work = self.ls.work_progress("Turnback: importing agents' sessions")
        await work.begin(", ".join(label(s) for s in self.sources))
        try:
            try:
                # Found by its store alone, it makes none: a settings change may have moved
                # the store meanwhile (storePath) to where there is none yet, and opening
                # the editor never makes a store (the first checkpoint or a session does)
                await self._step(None, work, create=not had_store)
            except NotFound:
                if not await self._any_session():
                    self._fresh = True  # as with no store at the start
                    return True
                await self._step(None, work)  # this folder's sessions make the new store
        except Cancelled:
            self.state = "cancelled"
            log.info("%s: importing agents' sessions cancelled; not following", self.folder.path)
            return False
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.warning("%s: importing agents' sessions failed (%s)",
                        self.folder.path, getattr(exc, "message", exc))
        finally:
            work.end()
        return True

    async def _step(self, paths: set[Path] | None, work: WorkProgress | None = None,
                    *, create: bool = True) -> float | None:
        """One write: read what changed, checkpoint new and ended turns; the next flush due."""
        if self.folder.store is None and paths is not None and not await self._any_session():
            return None  # no store is made for files that are not this folder's sessions
        auto = self.folder.settings.auto_checkpoint
        out: dict[str, Any] = {}

        def job(store: Store) -> float | None:
            follower = self._get(store)
            self.polls += 1
            result = follower.poll(
                None if paths is None else paths,
                progress=work.report if work is not None else None,
                check=work.check if work is not None else None,
            )
            out["result"] = result
            if auto and (result.prompted or result.ended):
                out["checkpointed"] = self._checkpoint_turns(store, follower, result)
            due = follower.next_flush()
            return None if due is None else due - follower.clock() + time.monotonic()

        due = await self.ls.write(self.folder, job, create=create,
                                  cancel=work.cancel_event if work is not None else None)
        result: ImportResult | None = out.get("result")
        if result is not None and (result.sessions or out.get("checkpointed")) \
                and not self.folder.watching:
            self.ls.announce(self.folder, set(result.sessions), bool(out.get("checkpointed")))
        return due

    async def _any_session(self) -> bool:
        """Whether any source has a session of this folder (off the loop: it reads files)."""
        def look() -> bool:
            return any(registry.get(n).locate(self.ctx, None) for n in self.sources)

        return await asyncio.get_running_loop().run_in_executor(None, look)

    def _get(self, store: Store) -> Follower:
        if self._follower is None or self._follower.store is not store:
            self._follower = Follower(store, self.sources, home=self.ctx.home,
                                      idle_flush=IDLE_FLUSH_S, report_existing=self._fresh)
        return self._follower

    def _checkpoint_turns(self, store: Store, follower: Follower, result: ImportResult) -> int:
        """Checkpoint each new turn (and each ended one) in its session; how many were made."""
        hooked = hooked_agents(self.folder.path)
        turns = [(sid, "new turn") for sid in result.prompted]
        turns += [(sid, "end of turn") for sid in result.ended if sid not in result.prompted]
        made = 0
        for sid, what in turns:
            if follower.agent_of(sid) in hooked:
                continue  # the agent's own hook checkpoints at the exact moment

            def take(dirty: frozenset[str] | None, sid: str = sid, what: str = what) -> None:
                store.checkpoint(label=what, session_id=sid, auto=True, dirty=dirty)

            try:
                with_dirty(self.folder, take)
            except Exception as exc:
                log.warning("%s: no checkpoint at the %s of %s (%s)",
                            self.folder.path, what, sid, getattr(exc, "message", exc))
                continue
            made += 1
            self.checkpoints += 1
            log.info("%s: checkpoint at the %s of %s", self.folder.path, what, sid)
        return made
