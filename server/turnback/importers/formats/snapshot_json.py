"""Whole-conversation snapshot JSON (seed 004: ailoop's ``JsonFileHistoryStore``).

The file is ``{"version": 1, "messages": [...], "pinned": [...]}``, rewritten
whole on every save. Messages are serde's externally tagged enums —
``{"User": {"blocks": [{"Text": …}, {"ToolResult": …}]}}``,
``{"Assistant": {"blocks": [{"Text": …}, {"ToolCall": …}, {"Reasoning": …}]}}``
— and the usual ``{"role", "content"}`` shape is read as well.

A file is a session. Messages have no ids or times: message *i*'s id hashes
the id of message *i-1* with its content, so a snapshot that grew adds only
its new messages, and one whose history was compacted (rewritten) starts a
new branch instead of being mistaken for the old one. Times are the file's
modification time. ``pinned`` is kept on each message's first event.
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
    DocumentParser,
    EventRecord,
    MetaRecord,
    Record,
    SessionRecord,
    as_dict,
    as_list,
    as_str,
    derive_id,
    iso_from_epoch,
    short_title,
)
from ..given_path import file_or_folder, required

AGENT = "snapshot-json"
SUPPORTED_VERSIONS = (1,)


def locate(ctx: Context, path: Path | None) -> list[Path]:
    path = required(AGENT, path, "a snapshot .json file or folder")
    return file_or_folder(ctx, path, "*.json")


def _variant(value: Any) -> tuple[str, Any]:
    """(name, body) of a serde externally tagged enum, or of an internally tagged object."""
    if isinstance(value, str):
        return value.lower(), None
    d = as_dict(value)
    for tag in ("type", "role", "kind"):
        if isinstance(d.get(tag), str):
            return d[tag].lower().replace("_", ""), d
    if len(d) == 1:
        (name, body), = d.items()
        return str(name).lower().replace("_", ""), body
    return "", d


def _text(body: Any) -> str:
    if isinstance(body, str):
        return body
    d = as_dict(body)
    for key in ("text", "content", "data"):
        if isinstance(d.get(key), str):
            return str(d[key])
    return ""


def _result(body: Any) -> JSON:
    d = as_dict(body)
    content = d.get("content")
    is_error = d.get("is_error") is True
    name, inner = _variant(content)
    if name in ("text", "error") and inner is not None:
        is_error = is_error or name == "error"
        content = inner if isinstance(inner, str) else _text(inner)
    return {
        "toolUseId": as_str(d.get("call_id")) or as_str(d.get("id")),
        "isError": is_error,
        "output": content,
    }


def message_parts(message: Any) -> tuple[str, list[tuple[str, JSON]]]:
    """The role of a message and its events (kind, data), one per block."""
    role, body = _variant(message)
    d = as_dict(body)
    blocks = d.get("blocks", d.get("content"))
    if isinstance(blocks, str) or (blocks is None and isinstance(body, str)):
        blocks = [{"Text": blocks if isinstance(blocks, str) else body}]
    parts: list[tuple[str, JSON]] = []
    texts: list[str] = []
    text_at: int | None = None
    for block in as_list(blocks):
        name, inner = _variant(block)
        if name == "text":
            text_at = len(parts) if text_at is None else text_at
            texts.append(_text(inner if inner is not None else block))
        elif name in ("toolcall", "tooluse"):
            b = as_dict(inner)
            parts.append((Kind.TOOL_CALL, {
                "name": as_str(b.get("name")) or "?",
                "input": b.get("args", b.get("arguments", b.get("input"))),
                "toolUseId": as_str(b.get("id")) or as_str(b.get("call_id")),
            }))
        elif name == "toolresult":
            parts.append((Kind.TOOL_RESULT, _result(inner)))
        elif name in ("reasoning", "thinking"):
            parts.append((Kind.THINKING, {"text": _text(inner)}))
        elif name == "redactedreasoning":
            parts.append((Kind.THINKING, {"text": "", "redacted": True}))
        else:
            parts.append((Kind.RAW, {"type": f"block/{name}", "raw": block}))
    if texts or not parts:
        text = "\n\n".join(texts)
        if role == "user":
            kind = Kind.PROMPT
        elif role == "assistant":
            kind = Kind.RESPONSE
        else:
            kind = Kind.NOTE
        data: JSON = {"text": text} if kind != Kind.NOTE else {"text": text, "role": role}
        parts.insert(text_at or 0, (kind, data))
    return role, parts


class SnapshotJsonParser(DocumentParser):
    def on_document(self, doc: JSON) -> Iterator[Record]:
        version = doc.get("version")
        if version not in SUPPORTED_VERSIONS:
            yield self.problem(f"unsupported snapshot version {version!r} (expected 1); skipped", 1)
            return
        messages = as_list(doc.get("messages"))
        pinned = as_list(doc.get("pinned"))
        if len(pinned) != len(messages):
            yield self.problem(
                f"messages/pinned length mismatch ({len(messages)} vs {len(pinned)}); "
                "pinned marks ignored", 1)
            pinned = [False] * len(messages)
        sid = "snap-" + derive_id(os.path.realpath(self.path))
        ts = iso_from_epoch(self.path.stat().st_mtime)
        yield SessionRecord(SessionHeader(id=sid, agent=AGENT, started=ts, source=AGENT,
                                          cwd=str(self.ctx.workspace),
                                          extra={"file": self.path.name}))
        prev: str | None = None  # id of the previous message: the chain of hashes
        last: str | None = None  # its last event: the parent of the next message
        titled = False
        for i, message in enumerate(messages):
            content = orjson.dumps(message, option=orjson.OPT_SORT_KEYS)
            mid = "n" + derive_id(prev or sid, content)[1:]
            _role, parts = message_parts(message)
            parent = last
            for k, (kind, data) in enumerate(parts):
                if k == 0 and pinned[i] is True:
                    data["pinned"] = True
                eid = mid if k == 0 else f"{mid}:{k}"
                yield EventRecord(Event(eid, sid, parent, ts, kind, data))
                parent = eid
            if not titled and parts[0][0] == Kind.PROMPT and short_title(parts[0][1]["text"]):
                titled = True
                yield MetaRecord(sid, {"title": short_title(parts[0][1]["text"])},
                                 TITLE_FIRST_PROMPT)
            prev, last = mid, parent
