"""The session and event model: what one line of a session file holds.

An event is ``{id, session, parent, ts, kind, data}``. ``parent`` links events
into a tree; kinds are open strings so that kinds Turnback does not know (from a
newer version or another tool) round-trip untouched.
"""

from __future__ import annotations

import os
import re
import time
import uuid
from dataclasses import field
from datetime import datetime, timezone
from typing import Any

from .errors import InvalidInput
from .record import record

UTC = timezone.utc  # datetime.UTC is 3.11+; Turnback runs on 3.10

JSON = dict[str, Any]


class Kind:
    """Event kinds Turnback interprets. Any other string is kept as is."""

    PROMPT = "prompt"
    RESPONSE = "response"
    THINKING = "thinking"
    TOOL_CALL = "tool_call"
    TOOL_RESULT = "tool_result"
    ITERATION_STARTED = "iteration_started"
    ITERATION_COMPLETED = "iteration_completed"
    EVENT_PUBLISHED = "event_published"
    LOOP_STARTED = "loop_started"
    LOOP_COMPLETED = "loop_completed"
    LOOP_TERMINATED = "loop_terminated"
    LOOP_RESUMED = "loop_resumed"
    LOOP_DISCARDED = "loop_discarded"
    MERGE_QUEUED = "merge_queued"
    MERGE_STARTED = "merge_started"
    MERGE_COMPLETED = "merge_completed"
    MERGE_FAILED = "merge_failed"
    USAGE = "usage"
    CHECKPOINT = "checkpoint"
    REWIND = "rewind"
    NOTE = "note"
    RAW = "raw"


KNOWN_KINDS = frozenset(v for k, v in vars(Kind).items() if k.isupper())

_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$")


def now_iso() -> str:
    """Current UTC time as ISO 8601 with milliseconds and a ``Z``."""
    return iso_from_ns(time.time_ns())


def iso_from_ns(ns: int) -> str:
    dt = datetime.fromtimestamp(ns / 1e9, tz=UTC)
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond // 1000:03d}Z"


def parse_iso(ts: str) -> float | None:
    """Seconds since the epoch for an ISO 8601 string, or None if unparsable."""
    try:
        return datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp()
    except (ValueError, AttributeError):
        return None


def new_id() -> str:
    """A fresh event id: 16 hex digits of a random UUID (collision odds ~2^-64 per pair)."""
    return uuid.uuid4().hex[:16]


def new_session_id() -> str:
    """A session id that sorts by creation time and is safe as a file name."""
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    return f"{stamp}-{os.urandom(3).hex()}"


def is_id(value: object) -> bool:
    """True for a string ``check_id`` accepts (and no trailing newline: it names files)."""
    return isinstance(value, str) and _ID_RE.fullmatch(value) is not None


def check_id(value: object, what: str) -> str:
    """Validate an id used in file names and lookups; name the field when it is bad."""
    # fullmatch: re's "$" also matches before a final newline, and "x\n" named a session
    # file no listing (is_id) would find again
    if not isinstance(value, str) or not _ID_RE.fullmatch(value):
        raise InvalidInput(
            f"{what} {value!r} is not a valid id: use 1-128 letters, digits, '.', '_', ':', '@' "
            "or '-', starting with a letter or digit"
        )
    return value


@record
class Event:
    """One node of a session's event tree."""

    id: str
    session: str
    parent: str | None
    ts: str
    kind: str
    data: JSON = field(default_factory=dict)

    def to_json(self) -> JSON:
        return {
            "id": self.id,
            "session": self.session,
            "parent": self.parent,
            "ts": self.ts,
            "kind": self.kind,
            "data": self.data,
        }

    @classmethod
    def from_json(cls, obj: JSON) -> Event:
        """Build from a parsed line; raises InvalidInput naming the missing field."""
        for key in ("id", "session", "ts", "kind"):
            if not isinstance(obj.get(key), str):
                raise InvalidInput(f"event field {key!r} is missing or not a string")
        parent = obj.get("parent")
        if parent is not None and not isinstance(parent, str):
            raise InvalidInput("event field 'parent' must be a string or null")
        data = obj.get("data")
        if data is None:
            data = {}
        if not isinstance(data, dict):
            raise InvalidInput("event field 'data' must be an object")
        return cls(obj["id"], obj["session"], parent, obj["ts"], obj["kind"], data)


@record
class SessionHeader:
    """The first line of a session file, plus later ``meta`` updates folded in."""

    id: str
    title: str = ""
    agent: str = "unknown"
    model: str | None = None
    started: str = ""
    cwd: str | None = None
    source: str = "turnback"
    ended: str | None = None
    extra: JSON = field(default_factory=dict)

    def to_json(self) -> JSON:
        out: JSON = {
            "id": self.id,
            "title": self.title,
            "agent": self.agent,
            "model": self.model,
            "started": self.started,
            "cwd": self.cwd,
            "source": self.source,
        }
        if self.ended is not None:
            out["ended"] = self.ended
        if self.extra:
            out["extra"] = self.extra
        return out

    @classmethod
    def from_json(cls, obj: JSON) -> SessionHeader:
        sid = obj.get("id")
        if not isinstance(sid, str):
            raise InvalidInput("session header field 'id' is missing or not a string")

        def opt(key: str) -> str | None:
            v = obj.get(key)
            return v if isinstance(v, str) else None

        extra = obj.get("extra")
        return cls(
            id=sid,
            title=opt("title") or "",
            agent=opt("agent") or "unknown",
            model=opt("model"),
            started=opt("started") or "",
            cwd=opt("cwd"),
            source=opt("source") or "turnback",
            ended=opt("ended"),
            extra=extra if isinstance(extra, dict) else {},
        )

    def apply_meta(self, meta: JSON) -> None:
        """Fold a ``meta`` line (title change, end of session) into the header."""
        for key in ("title", "agent", "model", "cwd", "ended"):
            if isinstance(meta.get(key), str):
                setattr(self, key, meta[key])
