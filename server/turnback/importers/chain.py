"""Events of a source that keeps no tree: each event is the child of the one before.

Several new sources (Gemini CLI, Cline, Crush, Copilot CLI) record a session as
a list; this keeps the "last event" bookkeeping in one place.
"""

from __future__ import annotations

from ..events import JSON, Event
from .base import EventRecord


class Chain:
    def __init__(self, session_id: str, ts: str = "") -> None:
        self.session_id = session_id
        self.last: str | None = None
        self.ts = ts

    def add(self, event_id: str, kind: str, data: JSON, ts: str | None = None) -> EventRecord:
        """The record of an event below the previous one (``ts`` kept when not given)."""
        if ts:
            self.ts = ts
        ev = Event(event_id, self.session_id, self.last, self.ts, kind, data)
        self.last = event_id
        return EventRecord(ev)
