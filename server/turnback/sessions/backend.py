"""The one small interface session storage sits behind, and its in-memory backend.

``FileSessions`` (``session_files.py``) is the real one; ``MemorySessions`` serves
tests of code that uses the API, as the seed systems' in-memory stores did.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable
from typing import Protocol

from ..errors import Conflict, NotFound, TurnbackError
from ..events import Event, SessionHeader
from ..fs.folders import Folder
from ..fs.junk_tail import Budget, SetAside
from .stats import StatsAccumulator

TYPE_CHECKING = False  # not typing's: see turnback/__init__.py
if TYPE_CHECKING:  # imported where one is made: a checkpoint makes none (cold28)
    from ..results import SessionLog, SessionPage, SessionSummary

# Given the current head, build the events to append (so "parent = head" is
# decided under the backend's lock, safe with concurrent writers).
EventFactory = Callable[[str | None, set[str] | None], list[Event]]


class SessionBackend(Protocol):
    def create(self, header: SessionHeader) -> None: ...
    def exists(self, session_id: str) -> bool: ...
    def missing(self, session_id: str, hint: str = "") -> TurnbackError: ...
    def ids(self) -> list[str]: ...
    def sessions_in(self, store_root: Folder, session_id: str) -> Folder | None: ...
    def append(self, session_id: str, make: EventFactory, *, need_ids: bool = False,
               fsync: bool = False, sessions: Folder | None = None) -> list[Event]: ...
    def append_free_now(self, session_id: str, sessions: Folder | None = None) -> bool: ...
    def set_head(self, session_id: str, event_id: str) -> None: ...
    def update_meta(self, session_id: str, meta: dict[str, str]) -> None: ...
    def load(self, session_id: str) -> SessionLog: ...
    def page(self, session_id: str, offset: int, limit: int) -> SessionPage: ...
    def summary(self, session_id: str) -> SessionSummary: ...
    def head(self, session_id: str) -> str | None: ...
    def set_aside_junk(self, session_id: str, budget: Budget | None = None) -> SetAside | None: ...
    def has_event(self, session_id: str, event_id: str) -> bool: ...
    def summaries(self) -> list[SessionSummary]: ...


class MemorySessions:
    """Sessions kept in a dict; thread-safe; same semantics as the file backend."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._logs: dict[str, SessionLog] = {}

    def _get(self, session_id: str) -> SessionLog:
        log = self._logs.get(session_id)
        if log is None:
            raise NotFound(f"no session {session_id!r}")
        return log

    def create(self, header: SessionHeader) -> None:
        from ..results import SessionLog

        with self._lock:
            if header.id in self._logs:
                raise Conflict(f"session {header.id!r} already exists")
            self._logs[header.id] = SessionLog(copy.deepcopy(header), [], None)

    def exists(self, session_id: str) -> bool:
        return session_id in self._logs

    def missing(self, session_id: str, hint: str = "") -> TurnbackError:
        return NotFound(f"no session {session_id!r}{hint}")

    def ids(self) -> list[str]:
        with self._lock:
            return list(self._logs)

    def sessions_in(self, store_root: Folder, session_id: str) -> Folder | None:
        """None: no folder holds a memory session."""
        return None

    def append(self, session_id: str, make: EventFactory, *, need_ids: bool = False,
               fsync: bool = False, sessions: Folder | None = None) -> list[Event]:
        with self._lock:  # ``sessions``: no folder holds a memory session
            log = self._get(session_id)
            ids = {e.id for e in log.events} if need_ids else None
            events = make(log.head, ids)
            log.events.extend(copy.deepcopy(events))
            if events:
                log.head = events[-1].id
            return events

    def append_free_now(self, session_id: str, sessions: Folder | None = None) -> bool:
        """Always: nothing outside this process holds a memory session."""
        return True

    def set_head(self, session_id: str, event_id: str) -> None:
        with self._lock:
            self._get(session_id).head = event_id

    def update_meta(self, session_id: str, meta: dict[str, str]) -> None:
        with self._lock:
            self._get(session_id).header.apply_meta(meta)

    def set_aside_junk(self, session_id: str, budget: Budget | None = None) -> SetAside | None:
        self._get(session_id)
        return None  # no file: no junk

    def head(self, session_id: str) -> str | None:
        return self._get(session_id).head

    def has_event(self, session_id: str, event_id: str) -> bool:
        with self._lock:
            return any(e.id == event_id for e in self._get(session_id).events)

    def load(self, session_id: str) -> SessionLog:
        with self._lock:
            return copy.deepcopy(self._get(session_id))

    def page(self, session_id: str, offset: int, limit: int) -> SessionPage:
        from ..results import SessionPage

        log = self.load(session_id)
        return SessionPage(log.events[offset : offset + limit], len(log.events), log.head,
                           log.problems)

    def summaries(self) -> list[SessionSummary]:
        return [self.summary(sid) for sid in self.ids()]

    def summary(self, session_id: str) -> SessionSummary:
        from ..results import SessionSummary

        with self._lock:
            log = self._get(session_id)
            acc = StatsAccumulator()
            for e in log.events:
                acc.add(e)
            return SessionSummary(
                copy.deepcopy(log.header),
                acc.result(log.header.started, log.header.ended),
                len(log.events),
                log.head,
            )
