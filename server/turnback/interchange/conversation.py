"""Whole-conversation snapshots (as seed 004 keeps them): save a session's
conversation as one JSON document and load it back as a session.

``SnapshotStore`` is the small interface; ``MemorySnapshotStore`` serves tests,
``JsonFileSnapshotStore`` keeps one file, rewritten atomically on every save.
The document is ``{"version": 1, "session": {header}, "messages": [...],
"pinned": [...]}``; each message is ``{"role", "content", "kind", "data", "id",
"ts"}``, so the ``snapshot-json`` importer reads it too.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, Protocol

from ..errors import InvalidInput, StoreDamaged
from ..events import JSON, Event, Kind, SessionHeader, new_id, now_iso
from ..fs.atomic import atomic_write
from ..fs.jsonl import dumps, loads
from ..store.facade import Store

VERSION = 1
USER_KINDS = frozenset({Kind.PROMPT, Kind.TOOL_RESULT, Kind.LOOP_STARTED})


def snapshot(store: Store, session_id: str) -> JSON:
    """The conversation root → head of a session as a snapshot document."""
    log = store.session(session_id)
    messages = []
    for e in store.conversation(session_id):
        text = e.data.get("text")
        messages.append({
            "role": "user" if e.kind in USER_KINDS else "assistant",
            "content": text if isinstance(text, str) else "",
            "kind": e.kind,
            "data": e.data,
            "id": e.id,
            "ts": e.ts,
        })
    return {"version": VERSION, "session": log.header.to_json(), "messages": messages,
            "pinned": [False] * len(messages)}


def restore(store: Store, doc: JSON, session_id: str | None = None) -> str:
    """Create a session from a snapshot document (or add its new messages to it)."""
    if not isinstance(doc, dict) or doc.get("version") != VERSION:
        raise InvalidInput(f"snapshot version must be {VERSION}")
    messages = doc.get("messages")
    if not isinstance(messages, list):
        raise InvalidInput("snapshot field 'messages' must be a list")
    raw_head = doc.get("session")
    head: JSON = raw_head if isinstance(raw_head, dict) else {}
    header = SessionHeader.from_json({"id": session_id or head.get("id") or new_id(), **{
        k: v for k, v in head.items() if k != "id"}})
    header.source = "snapshot"
    if not header.started:
        header.started = now_iso()
    store.ensure_session(header)
    events, parent = [], None
    for i, m in enumerate(messages):
        if not isinstance(m, dict):
            raise InvalidInput(f"snapshot message {i} must be an object")
        kind, data, eid, ts = m.get("kind"), m.get("data"), m.get("id"), m.get("ts")
        if not isinstance(kind, str):
            kind = Kind.PROMPT if m.get("role") == "user" else Kind.RESPONSE
        if not isinstance(data, dict):
            data = {"text": str(m.get("content") or "")}
        if not isinstance(eid, str):
            eid = f"{header.id}-m{i}"
        if not isinstance(ts, str):
            ts = header.started
        events.append(Event(eid, header.id, parent, ts, kind, dict(data)))
        parent = eid
    store.append_events(header.id, events)
    return header.id


class SnapshotStore(Protocol):
    def save(self, doc: JSON) -> None: ...
    def load(self) -> JSON | None: ...


class MemorySnapshotStore:
    def __init__(self) -> None:
        self._doc: JSON | None = None
        self._lock = threading.Lock()

    def save(self, doc: JSON) -> None:
        with self._lock:
            self._doc = loads(dumps(doc))  # a deep copy, as a file would hold

    def load(self) -> JSON | None:
        with self._lock:
            return None if self._doc is None else loads(dumps(self._doc))


class JsonFileSnapshotStore:
    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    def save(self, doc: JSON) -> None:
        atomic_write(self.path, dumps(doc))

    def load(self) -> JSON | None:
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return None
        try:
            value: Any = loads(raw)
        except ValueError as exc:
            raise StoreDamaged(f"snapshot {self.path} is not valid JSON ({exc})") from exc
        if not isinstance(value, dict):
            raise StoreDamaged(f"snapshot {self.path} must hold a JSON object")
        return value
