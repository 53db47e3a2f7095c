"""Event-record session JSONL (seed 002: arcan's ``<session>.jsonl``).

Each line is ``{"id", "session_id", "parent_id", "timestamp", "event"}`` where
``event`` is an agent event tagged by ``part_type`` (``type``, ``kind`` or an
outer ``{"RunFinished": {…}}`` are read too). Ids and parents are kept as they
are, so the tree is the source's own. Mapping:

| part_type | kind |
|---|---|
| run_started | loop_started |
| iteration_started | iteration_started |
| model_output | response (one per model turn; its usage → usage) |
| text_delta | response (same ``messageId`` as its model turn) |
| tool_call_requested | tool_call |
| tool_call_completed / tool_call_failed | tool_result (failed: isError) |
| state_patched | note |
| run_errored | loop_terminated (signal ``error``) |
| run_finished | loop_completed (reason) |
| anything else | raw |
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ...events import JSON, Event, Kind, SessionHeader
from ..base import (
    TITLE_FIRST_PROMPT,
    Context,
    EventRecord,
    JsonlParser,
    MetaRecord,
    RawLine,
    Record,
    SessionRecord,
    as_dict,
    as_int,
    as_str,
    derive_id,
    norm_ts,
    safe_id,
    short_title,
    sub_id,
)
from ..given_path import file_or_folder, required

AGENT = "event-records"
_CAMEL_RE = re.compile(r"(?<!^)(?=[A-Z])")


def locate(ctx: Context, path: Path | None) -> list[Path]:
    path = required(AGENT, path, "a session .jsonl file or a folder of them")
    return file_or_folder(ctx, path, "*.jsonl")


def _tagged(event: Any) -> tuple[str | None, JSON]:
    """The event's variant name (snake_case) and its fields."""
    ev = as_dict(event)
    for tag in ("part_type", "type", "kind"):
        if isinstance(ev.get(tag), str):
            fields = {k: v for k, v in ev.items() if k != tag}
            return ev[tag], fields
    if len(ev) == 1:
        (name, fields), = ev.items()
        return _CAMEL_RE.sub("_", name).lower(), as_dict(fields)
    return None, ev


def _usage(u: Any) -> JSON | None:
    if not isinstance(u, dict):
        return None
    return {
        "input": as_int(u.get("input_tokens")),
        "output": as_int(u.get("output_tokens")),
        "cacheRead": as_int(u.get("cache_read_tokens")),
        "cacheCreation": as_int(u.get("cache_creation_tokens")),
    }


class EventRecordsParser(JsonlParser):
    def __init__(self, path: Path, ctx: Context) -> None:
        super().__init__(path, ctx)
        self.sessions: set[str] = set()
        self.titled: set[str] = set()
        self.last_ts = ""

    def on_object(self, obj: JSON, line: RawLine) -> Iterator[Record]:
        sid = safe_id(obj.get("session_id")) or safe_id(self.path.stem) or derive_id(self.path)
        ts = norm_ts(obj.get("timestamp")) or self.last_ts
        self.last_ts = ts
        if sid not in self.sessions:
            self.sessions.add(sid)
            yield SessionRecord(SessionHeader(id=sid, agent=AGENT, started=ts, source=AGENT,
                                              cwd=str(self.ctx.workspace)))
        event_id = safe_id(obj.get("id"), sid) or "e" + derive_id(sid, line.data)[1:]
        parent = safe_id(obj.get("parent_id"), sid)
        name, f = _tagged(obj.get("event"))
        run = as_str(f.get("run_id")) or ""
        turn = f"{run}:{f.get('iteration')}"
        kind, data = self._map(name, f, turn, obj)
        yield EventRecord(Event(event_id, sid, parent, ts, kind, data))
        if name == "model_output":
            usage = _usage(f.get("usage"))
            if usage is not None:
                usage["messageId"] = turn
                yield EventRecord(Event(sub_id(event_id, "usage"), sid, event_id, ts, Kind.USAGE,
                                        usage))
        if name == "run_started" and sid not in self.titled:
            self.titled.add(sid)
            title = short_title(f"{f.get('provider', 'run')} run {run}".strip())
            yield MetaRecord(sid, {"title": title}, TITLE_FIRST_PROMPT - 1)

    def _map(self, name: str | None, f: JSON, turn: str, obj: JSON) -> tuple[str, JSON]:
        keep = {k: v for k, v in f.items() if k not in ("session_id",)}
        if name == "run_started":
            return Kind.LOOP_STARTED, keep
        if name == "iteration_started":
            return Kind.ITERATION_STARTED, keep
        if name == "model_output":
            return Kind.RESPONSE, {"text": "", "messageId": turn, **keep}
        if name == "text_delta":
            return Kind.RESPONSE, {"text": as_str(f.get("delta")) or "", "messageId": turn, **keep}
        if name == "tool_call_requested":
            call = as_dict(f.get("call"))
            return Kind.TOOL_CALL, {
                "name": as_str(call.get("tool_name")) or "?",
                "input": call.get("input"),
                "toolUseId": as_str(call.get("call_id")),
                "iteration": f.get("iteration"),
            }
        if name == "tool_call_completed":
            result = as_dict(f.get("result"))
            return Kind.TOOL_RESULT, {
                "toolUseId": as_str(result.get("call_id")),
                "isError": False,
                "output": result.get("output"),
                "name": result.get("tool_name"),
            }
        if name == "tool_call_failed":
            return Kind.TOOL_RESULT, {
                "toolUseId": as_str(f.get("call_id")),
                "isError": True,
                "output": f.get("error"),
                "name": f.get("tool_name"),
            }
        if name == "state_patched":
            return Kind.NOTE, {"text": f"state patched (revision {f.get('revision')})", **keep}
        if name == "run_errored":
            return Kind.LOOP_TERMINATED, {"signal": "error", "reason": f.get("error"), **keep}
        if name == "run_finished":
            data: JSON = {"reason": f.get("reason") or "finished", **keep}
            if isinstance(f.get("final_answer"), str):
                data["text"] = f["final_answer"]
            return Kind.LOOP_COMPLETED, data
        return Kind.RAW, {"type": name, "raw": obj}
