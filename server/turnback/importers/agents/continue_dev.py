"""Continue sessions: ``~/.continue/sessions/<session id>.json``.

From the documented layout (no real file was available: tests use fixtures
written to it, docs/IMPORT.md says so). A session is ``{sessionId, title,
workspaceDirectory, history: [{message: {role, content, toolCalls?,
toolCallId?}, toolCallState?}]}`` (``$CONTINUE_GLOBAL_DIR`` instead of
``~/.continue``); ``sessions.json`` beside it lists them with their
``dateCreated``.

Roles: user → ``prompt``; assistant → ``response`` and a ``tool_call`` per
``toolCalls`` entry; thinking → ``thinking``; tool → ``tool_result``; system →
``note``. A tool call with no tool message whose ``toolCallState`` is done or
errored gets its result from the state. Messages carry no ids nor times: message
*i*'s id hashes message *i-1*'s id with its content (Continue rewrites the file
and lets a person edit an earlier message, which then starts a new branch), and
times are the session's creation time.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from ...events import JSON, Kind, SessionHeader
from ..base import (
    TITLE_SUMMARY,
    Context,
    DocumentParser,
    MetaRecord,
    Record,
    SessionRecord,
    as_dict,
    as_list,
    as_str,
    derive_id,
    iso_from_epoch,
    norm_ts,
    safe_id,
    short_title,
    sub_id,
)
from ..chain import Chain
from ..inputs import find
from ..matching import Matching, same_dir
from .copilot_chat import folder_of

INDEX = "sessions.json"


def continue_dir(ctx: Context) -> Path:
    override = ctx.env.get("CONTINUE_GLOBAL_DIR")
    return Path(override) if override else ctx.home / ".continue"


def locate(ctx: Context, path: Path | None) -> list[Path]:
    """PATH (a session file or a folder of them), or this workspace's sessions."""
    if path is not None:
        if path.is_dir():
            return [f for f in find(path, "*.json", refused=ctx.refused) if f.name != INDEX]
        return [path]
    return MATCHING.locate(ctx)


def _belongs(ctx: Context, f: Path) -> bool:
    if f.name == INDEX:
        return False
    doc = DocumentParser(f, ctx).load(f)
    value = doc.get("workspaceDirectory") if isinstance(doc, dict) else None
    return same_dir(folder_of(value) or value, ctx.workspace)


# every project's sessions share ~/.continue/sessions; each names its workspaceDirectory
MATCHING = Matching(
    lambda ctx: find(continue_dir(ctx) / "sessions", "*.json", refused=ctx.refused), _belongs)


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(as_str(as_dict(p).get("text")) or "" for p in as_list(content))


class ContinueParser(DocumentParser):
    def on_document(self, doc: JSON) -> Iterator[Record]:
        sid = safe_id(doc.get("sessionId")) or derive_id(self.path.name)
        started = norm_ts(doc.get("dateCreated")) or self._mtime()
        cwd = doc.get("workspaceDirectory")
        yield SessionRecord(SessionHeader(id=sid, agent="continue", started=started,
                                          cwd=folder_of(cwd) or as_str(cwd), source="continue"))
        if isinstance(doc.get("title"), str) and doc["title"].strip():
            yield MetaRecord(sid, {"title": short_title(doc["title"], 120)}, TITLE_SUMMARY)
        chain = Chain(sid, started)
        previous = ""
        answered: set[str] = set()
        items = [as_dict(i) for i in as_list(doc.get("history"))]
        for item in items:
            if as_dict(item.get("message")).get("role") == "tool":
                answered.add(str(as_dict(item.get("message")).get("toolCallId")))
        for item in items:
            message = as_dict(item.get("message"))
            eid = "n" + derive_id(sid, previous, orjson.dumps(message,
                                                             option=orjson.OPT_SORT_KEYS))[1:]
            previous = eid
            yield from self._message(chain, eid, message, item, answered)

    def _mtime(self) -> str:
        try:
            return iso_from_epoch(self.path.stat().st_mtime)
        except OSError:
            return ""

    def _message(self, chain: Chain, eid: str, message: JSON, item: JSON,
                 answered: set[str]) -> Iterator[Record]:
        role = message.get("role")
        text = _text(message.get("content"))
        if role == "user":
            yield chain.add(eid, Kind.PROMPT, {"text": text})
        elif role == "assistant":
            n = 0
            if text.strip() or not message.get("toolCalls"):
                n += 1
                yield chain.add(eid, Kind.RESPONSE, {"text": text, "messageId": eid})
            state = as_dict(item.get("toolCallState"))
            for call in as_list(message.get("toolCalls")):
                c = as_dict(call)
                fn = as_dict(c.get("function"))
                args = fn.get("arguments")
                try:
                    parsed = orjson.loads(args) if isinstance(args, str) else args
                except orjson.JSONDecodeError:
                    parsed = args
                call_id = as_str(c.get("id")) or sub_id(eid, n)
                cid = eid if n == 0 else sub_id(eid, n)
                n += 1
                yield chain.add(cid, Kind.TOOL_CALL, {"name": as_str(fn.get("name")) or "?",
                                                      "input": parsed, "toolUseId": call_id})
                status = state.get("status")
                if (call_id not in answered and as_str(state.get("toolCallId")) == call_id
                        and status in ("done", "errored")):
                    output = "\n".join(_text(as_dict(o).get("content"))
                                       for o in as_list(state.get("output")))
                    yield chain.add(sub_id(cid, "result"), Kind.TOOL_RESULT, {
                        "toolUseId": call_id, "isError": status == "errored", "output": output})
        elif role == "thinking":
            yield chain.add(eid, Kind.THINKING, {"text": text})
        elif role == "tool":
            yield chain.add(eid, Kind.TOOL_RESULT, {
                "toolUseId": as_str(message.get("toolCallId")), "isError": False,
                "output": text})
        else:
            yield chain.add(eid, Kind.NOTE, {"text": text, "role": str(role)})
