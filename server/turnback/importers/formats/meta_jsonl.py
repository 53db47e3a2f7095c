"""JSONL with a meta header line (seed 003: a Lua agent's ``sessions/<ISO time>.jsonl``).

The first line is ``{"meta": {started, model, version, …}}`` (written only
when the file was new); every other line is a turn ``{"role", "content", …}``.
A file is a session (its id is the file name, unless the meta names one).
Turns carry no ids or times: an event's id hashes the session and the line
number (turns are only ever appended) and its time is the meta's ``started``.

role user → ``prompt``, assistant → ``response`` (OpenAI-style
``tool_calls`` → ``tool_call`` events below it), tool → ``tool_result``,
system and others → ``note``. A ``usage`` object on a turn → ``usage``.
Other lines are kept as ``raw``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

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
    as_list,
    as_str,
    derive_id,
    iso_from_epoch,
    norm_ts,
    safe_id,
    short_title,
)
from ..given_path import file_or_folder, required

AGENT = "meta-jsonl"


def locate(ctx: Context, path: Path | None) -> list[Path]:
    path = required(AGENT, path, "a session .jsonl file or its sessions/ folder")
    return file_or_folder(ctx, path, "*.jsonl")


def content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = []
    for part in as_list(content):
        if isinstance(part, str):
            parts.append(part)
        elif isinstance(as_dict(part).get("text"), str):
            parts.append(part["text"])
    if parts or not content:
        return "\n".join(parts)
    return orjson.dumps(content).decode()


def _mtime(path: Path) -> str:
    try:
        return iso_from_epoch(os.stat(path).st_mtime)
    except OSError:
        return ""


class MetaJsonlParser(JsonlParser):
    def __init__(self, path: Path, ctx: Context) -> None:
        super().__init__(path, ctx)
        self.session_id: str | None = None
        self.ts = ""
        self.last_event: str | None = None
        self.titled = False

    def on_object(self, obj: JSON, line: RawLine) -> Iterator[Record]:
        if self.session_id is None:
            yield from self._start(as_dict(obj.get("meta")) if "meta" in obj else {})
            if "meta" in obj:
                return
        sid = self.session_id
        assert sid is not None
        ts = norm_ts(obj.get("ts")) or norm_ts(obj.get("timestamp")) or self.ts
        base = "m" + derive_id(sid, line.number)[1:]
        role = obj.get("role")
        if "meta" in obj:
            parts: list[tuple[str, JSON]] = [(Kind.NOTE, {"text": "meta", "meta": obj["meta"]})]
        elif isinstance(role, str) and "content" in obj:
            parts = self._turn(role, obj)
        else:
            parts = [(Kind.RAW, {"type": None, "raw": obj})]
        parent = self.last_event
        for i, (kind, data) in enumerate(parts):
            eid = base if i == 0 else f"{base}:{i}"
            yield EventRecord(Event(eid, sid, parent, ts, kind, data))
            parent = eid
        self.last_event = parent
        prompt = parts[0][1].get("text") if parts[0][0] == Kind.PROMPT else None
        if isinstance(prompt, str) and not self.titled and short_title(prompt):
            self.titled = True
            yield MetaRecord(sid, {"title": short_title(prompt)}, TITLE_FIRST_PROMPT)

    def _start(self, meta: JSON) -> Iterator[Record]:
        sid = (
            safe_id(meta.get("id"))
            or safe_id(meta.get("session"))
            or safe_id(self.path.stem.replace(":", "-"))
            or "s" + derive_id(self.path.name)[1:]
        )
        self.session_id = sid
        started = norm_ts(meta.get("started"))
        if started is None and isinstance(meta.get("started"), (int, float)):
            started = iso_from_epoch(float(meta["started"]))
        if not started:
            started = norm_ts(self.path.stem) or _mtime(self.path)
        self.ts = started
        extra = {k: v for k, v in meta.items() if k not in ("started", "model")}
        yield SessionRecord(
            SessionHeader(id=sid, agent=AGENT, model=as_str(meta.get("model")), started=started,
                          source=AGENT, cwd=str(self.ctx.workspace), extra=extra)
        )

    def _turn(self, role: str, obj: JSON) -> list[tuple[str, JSON]]:
        text = content_text(obj.get("content"))
        extra = {k: v for k, v in obj.items() if k not in ("role", "content", "tool_calls",
                                                           "usage", "ts", "timestamp")}
        out: list[tuple[str, JSON]]
        if role == "user":
            out = [(Kind.PROMPT, {"text": text, **extra})]
        elif role == "assistant":
            out = [(Kind.RESPONSE, {"text": text, **extra})]
            for call in as_list(obj.get("tool_calls")):
                c = as_dict(call)
                fn = as_dict(c.get("function"))
                args = fn.get("arguments", c.get("input", c.get("arguments")))
                if isinstance(args, str):
                    try:
                        args = orjson.loads(args)
                    except orjson.JSONDecodeError:
                        pass
                out.append((Kind.TOOL_CALL, {
                    "name": as_str(fn.get("name")) or as_str(c.get("name")) or "?",
                    "input": args,
                    "toolUseId": as_str(c.get("id")),
                }))
        elif role == "tool":
            out = [(Kind.TOOL_RESULT, {
                "toolUseId": as_str(obj.get("tool_call_id")) or as_str(obj.get("id")),
                "isError": obj.get("is_error") is True or obj.get("error") is True,
                "output": text,
                **extra,
            })]
        else:
            out = [(Kind.NOTE, {"text": text, "role": role, **extra})]
        usage = obj.get("usage")
        if isinstance(usage, dict):
            out.append((Kind.USAGE, {
                "input": as_int(usage.get("input_tokens", usage.get("prompt_tokens"))),
                "output": as_int(usage.get("output_tokens", usage.get("completion_tokens"))),
                "cacheRead": as_int(usage.get("cache_read_input_tokens")),
                "cacheCreation": as_int(usage.get("cache_creation_input_tokens")),
            }))
        return out
