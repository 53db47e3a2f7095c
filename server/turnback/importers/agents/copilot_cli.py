"""GitHub Copilot CLI session state (the JSON document form).

Where: ``~/.copilot/history-session-state/session_*.json`` (``$COPILOT_HOME``
instead of ``~/.copilot``): ``{sessionId, startTime, chatMessages, timeline}``,
rewritten whole as the session goes. The ``timeline`` is what is read, in order:
``user`` → ``prompt``, ``copilot`` → ``response``, ``tool_call_completed`` →
``tool_call`` and its ``tool_result`` (``result.type`` other than ``success`` is a
failure), ``info`` / ``warning`` / ``error`` → ``note``, anything else → ``raw``.
Ids are the timeline items' own.

The file records no working folder: a session is this workspace's when a tool
call's ``path`` lies in it or a shell command ``cd``s into it. Newer versions
write ``~/.copilot/session-state/<id>/events.jsonl``; no real file of that form
was available to test against, so it is not read (docs/IMPORT.md).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

import orjson

from ...errors import InvalidInput, Unsafe
from ...events import JSON, Kind, SessionHeader
from ..base import (
    TITLE_FIRST_PROMPT,
    Context,
    DocumentParser,
    MetaRecord,
    Record,
    SessionRecord,
    as_dict,
    as_list,
    as_str,
    derive_id,
    norm_ts,
    safe_id,
    short_title,
    sub_id,
)
from ..chain import Chain
from ..given_path import file_or_folder
from ..inputs import find, read_regular
from ..matching import Matching

_CD_RE = re.compile(r"(?:^|&&|;)\s*cd\s+(\S+)")


def copilot_dir(ctx: Context) -> Path:
    override = ctx.env.get("COPILOT_HOME")
    return Path(override) if override else ctx.home / ".copilot"


def locate(ctx: Context, path: Path | None) -> list[Path]:
    """PATH (a session file or a folder of them), or this workspace's sessions."""
    if path is not None:
        return file_or_folder(ctx, path, "*.json")
    return MATCHING.locate(ctx)


def _belongs(ctx: Context, f: Path) -> bool:
    """A session worked here if one of its tool calls names a path in the workspace."""
    try:
        doc = orjson.loads(read_regular(f, ctx.max_line))
    except (OSError, Unsafe, InvalidInput, orjson.JSONDecodeError):
        return False
    return any(_inside(p, ctx.workspace) for p in session_paths(as_dict(doc)))


MATCHING = Matching(
    lambda ctx: find(copilot_dir(ctx) / "history-session-state", "*.json", refused=ctx.refused),
    _belongs)


def session_paths(doc: JSON) -> Iterator[str]:
    """Folders and files the session's tool calls name (where it worked)."""
    for item in as_list(doc.get("timeline")):
        args = as_dict(as_dict(item).get("arguments"))
        if isinstance(args.get("path"), str):
            yield args["path"]
        command = args.get("command")
        if isinstance(command, str):
            for m in _CD_RE.finditer(command):
                yield m.group(1)


def _inside(path: str, workspace: Path) -> bool:
    if not os.path.isabs(path):
        return False
    p, ws = os.path.normpath(path), os.path.normpath(str(workspace))
    return p == ws or p.startswith(ws.rstrip("/") + "/")


class CopilotCliParser(DocumentParser):
    agent = "copilot-cli"

    def on_document(self, doc: JSON) -> Iterator[Record]:
        sid = safe_id(doc.get("sessionId")) or derive_id(self.path.name)
        started = norm_ts(doc.get("startTime")) or ""
        yield SessionRecord(SessionHeader(id=sid, agent=self.agent, started=started,
                                          source=self.agent))
        chain = Chain(sid, started)
        titled = False
        for index, raw in enumerate(as_list(doc.get("timeline"))):
            item = as_dict(raw)
            if not item:
                continue
            eid = safe_id(item.get("id"), sid) or "p" + derive_id(sid, index)[1:]
            ts = norm_ts(item.get("timestamp")) or chain.ts
            kind = item.get("type")
            text = as_str(item.get("text")) or ""
            if kind == "user":
                if not titled and short_title(text):
                    titled = True
                    yield MetaRecord(sid, {"title": short_title(text)}, TITLE_FIRST_PROMPT)
                yield chain.add(eid, Kind.PROMPT, {"text": text}, ts)
            elif kind == "copilot":
                yield chain.add(eid, Kind.RESPONSE, {"text": text}, ts)
            elif kind in ("info", "warning", "error"):
                yield chain.add(eid, Kind.NOTE, {"text": text, "level": kind}, ts)
            elif kind == "tool_call_completed":
                yield from self._tool(chain, eid, item, ts)
            else:
                yield chain.add(eid, Kind.RAW, {"type": str(kind), "raw": item}, ts)

    def _tool(self, chain: Chain, eid: str, item: JSON, ts: str) -> Iterator[Record]:
        call_id = as_str(item.get("callId")) or eid
        data: JSON = {"name": as_str(item.get("name")) or "?", "input": item.get("arguments"),
                      "toolUseId": call_id}
        if isinstance(item.get("intentionSummary"), str):
            data["description"] = item["intentionSummary"]
        yield chain.add(eid, Kind.TOOL_CALL, data, ts)
        result = as_dict(item.get("result"))
        rtype = as_str(result.get("type"))
        yield chain.add(sub_id(eid, "result"), Kind.TOOL_RESULT, {
            "toolUseId": call_id, "isError": rtype not in (None, "success"),
            "output": result.get("log")}, ts)
