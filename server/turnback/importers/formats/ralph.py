"""Loop history JSONL (seed 000, ralph-orchestrator's ``.ralph/history.jsonl``).

Each line is ``{"ts", "type": {"kind": …, <fields>}, "data"?}``. The kinds
(loop_started, iteration_started, event_published, iteration_completed,
loop_completed, loop_resumed, loop_terminated, merge_*, loop_discarded) are
Turnback kinds already, so an event keeps its kind and fields as they are.

A file holds many loops: each ``loop_started`` opens a session (a
``loop_resumed`` continues the current one). Lines before the first start go
to a session of their own. The loop's prompt is its title; the end of a loop
(completed, terminated, discarded) ends the session.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from ...events import JSON, KNOWN_KINDS, Event, Kind, SessionHeader
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
    as_str,
    derive_id,
    norm_ts,
    short_title,
)
from ..given_path import file_or_folder
from ..inputs import in_workspace

AGENT = "ralph"
DEFAULT_FILE = Path(".ralph") / "history.jsonl"
ENDING = frozenset({Kind.LOOP_COMPLETED, Kind.LOOP_TERMINATED, Kind.LOOP_DISCARDED})


def locate(ctx: Context, path: Path | None) -> list[Path]:
    """PATH, a folder's ``history.jsonl`` files, or the workspace's ``.ralph/history.jsonl``."""
    if path is None:
        default = in_workspace(ctx.workspace, DEFAULT_FILE)
        return [default] if default is not None else []
    return file_or_folder(ctx, path, "**", "history.jsonl")


class RalphParser(JsonlParser):
    def __init__(self, path: Path, ctx: Context) -> None:
        super().__init__(path, ctx)
        self.session_id: str | None = None
        self.last_event: str | None = None
        self.last_ts = ""

    def on_object(self, obj: JSON, line: RawLine) -> Iterator[Record]:
        ts = norm_ts(obj.get("ts")) or self.last_ts
        self.last_ts = ts
        etype = obj.get("type")
        fields = dict(etype) if isinstance(etype, dict) else {}
        kind = fields.pop("kind", None)
        if not isinstance(kind, str) or kind not in KNOWN_KINDS or kind == Kind.RAW:
            kind, data = Kind.RAW, {"type": kind if isinstance(kind, str) else None, "raw": obj}
        else:
            data = fields
            if "data" in obj:
                data["data"] = obj["data"]
        if kind == Kind.LOOP_STARTED or self.session_id is None:
            yield from self._start(ts, line, as_str(as_dict(etype).get("prompt")))
        sid = self.session_id
        assert sid is not None
        if kind == Kind.LOOP_STARTED and isinstance(data.get("prompt"), str):
            data["text"] = data["prompt"]
        event_id = "r" + derive_id(sid, line.data)[1:]
        yield EventRecord(Event(event_id, sid, self.last_event, ts, kind, data))
        self.last_event = event_id
        if kind in ENDING:
            yield MetaRecord(sid, {"ended": ts})

    def _start(self, ts: str, line: RawLine, prompt: str | None) -> Iterator[Record]:
        stamp = "".join(c for c in ts[:19] if c.isdigit())
        sid = f"ralph-{stamp[:8]}T{stamp[8:]}-{derive_id(line.data)[:6]}"
        self.session_id = sid
        self.last_event = None
        yield SessionRecord(SessionHeader(id=sid, agent=AGENT, started=ts, source=AGENT,
                                          cwd=str(self.ctx.workspace)))
        if prompt and short_title(prompt):
            yield MetaRecord(sid, {"title": short_title(prompt)}, TITLE_FIRST_PROMPT)
