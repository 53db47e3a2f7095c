"""OpenCode (the TypeScript one): its JSON file storage.

From the documented layout (no real file was available: tests use fixtures written
to it, docs/IMPORT.md says so). Under ``$XDG_DATA_HOME/opencode/storage/``
(``~/.local/share/opencode/storage/``):

- ``session/<project id>/<session id>.json`` — ``{id, projectID, directory, title,
  parentID?, time: {created, updated}}`` (``directory``: where it ran);
- ``message/<session id>/<message id>.json`` — ``{id, sessionID, role, time,
  modelID?, tokens?: {input, output, reasoning, cache: {read, write}}}``;
- ``part/<message id>/<part id>.json`` — the content: ``text`` (``synthetic`` when
  OpenCode wrote it), ``reasoning``, ``tool`` (``{tool, callID, state: {status,
  input, output, error}}``), ``patch`` (``{hash, files}``: a snapshot of OpenCode's
  own, linked as ``sourceCheckpoint``), ``step-*``, ``file``, ….

A session file is one input (the messages and parts are found beside it). Ids
are OpenCode's own (``msg_…``, ``prt_…``, time-ordered), so a re-import adds
what is new; a tool's result is written once the tool's state is final. Newer
OpenCode versions moved to an SQLite database whose schema is not documented:
not read.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ...events import JSON, Kind, SessionHeader
from ...models import Problem
from ..base import (
    TITLE_SUMMARY,
    Context,
    DocumentParser,
    MetaRecord,
    Record,
    SessionRecord,
    as_dict,
    as_int,
    as_str,
    derive_id,
    iso_from_epoch,
    safe_id,
    short_title,
    sub_id,
)
from ..chain import Chain
from ..inputs import find
from ..matching import Matching, same_dir

MAX_FILES = 100_000  # messages of a session, parts of a message


def storage_root(ctx: Context) -> Path:
    data = ctx.env.get("XDG_DATA_HOME")
    return (Path(data) if data else ctx.home / ".local" / "share") / "opencode" / "storage"


def locate(ctx: Context, path: Path | None) -> list[Path]:
    """PATH (a session file, or a storage folder: its sessions of this workspace), or
    this workspace's sessions in the usual storage."""
    if path is not None and not path.is_dir():
        return [path]
    root = path if path is not None else storage_root(ctx)
    if (root / "storage").is_dir():
        root = root / "storage"
    return [f for f in _sessions(ctx, root) if _belongs(ctx, f)]


def _sessions(ctx: Context, storage: Path) -> list[Path]:
    return find(storage / "session", "*", "*.json", refused=ctx.refused)


def _belongs(ctx: Context, f: Path) -> bool:
    doc = DocumentParser(f, ctx).load(f)
    return same_dir(doc.get("directory") if isinstance(doc, dict) else None, ctx.workspace)


# every project's sessions share storage/session/<project>/; each names its directory
MATCHING = Matching(lambda ctx: _sessions(ctx, storage_root(ctx)), _belongs)


def _ts(time: Any, key: str = "created") -> str:
    v = as_dict(time).get(key)
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return ""
    return iso_from_epoch(v / 1000)


class OpenCodeParser(DocumentParser):
    def on_document(self, doc: JSON) -> Iterator[Record]:
        raw_id = doc.get("id")
        sid = safe_id(raw_id) or derive_id(self.path.name)
        storage = self.path.parent.parent.parent
        started = _ts(doc.get("time"))
        extra: JSON = {}
        if isinstance(doc.get("parentID"), str):
            extra["parentSession"] = doc["parentID"]
        if isinstance(doc.get("projectID"), str):
            extra["projectID"] = doc["projectID"]
        yield SessionRecord(SessionHeader(id=sid, agent="opencode", started=started,
                                          cwd=as_str(doc.get("directory")), source="opencode",
                                          extra=extra))
        if isinstance(doc.get("title"), str) and doc["title"].strip():
            yield MetaRecord(sid, {"title": short_title(doc["title"], 120)}, TITLE_SUMMARY)
        if not isinstance(raw_id, str) or "/" in raw_id or raw_id.startswith("."):
            yield self.problem(f"session id {raw_id!r} names no message folder; "
                               "messages skipped")
            return
        messages = []
        for f in find(storage / "message" / raw_id, "*.json", refused=self.ctx.refused)[:MAX_FILES]:
            m = self.load(f)
            if isinstance(m, Problem):
                yield m
                continue
            messages.append(m)
        messages.sort(key=lambda m: (as_int(as_dict(m.get("time")).get("created")),
                                     str(m.get("id"))))
        chain = Chain(sid, started)
        model = None
        for m in messages:
            mid = m.get("id")
            if not isinstance(mid, str) or "/" in mid or mid.startswith("."):
                yield self.problem(f"message id {mid!r} is not a name; message skipped")
                continue
            ts = _ts(m.get("time")) or chain.ts
            if isinstance(m.get("modelID"), str) and m["modelID"] != model:
                model = m["modelID"]
                yield MetaRecord(sid, {"model": model})
            parts = []
            for f in find(storage / "part" / mid, "*.json", refused=self.ctx.refused)[:MAX_FILES]:
                p = self.load(f)
                if isinstance(p, Problem):
                    yield p
                    continue
                parts.append(p)
            parts.sort(key=lambda p: str(p.get("id")))
            yield from self._message(chain, m, parts, ts)

    def _message(self, chain: Chain, m: JSON, parts: list[JSON], ts: str) -> Iterator[Record]:
        mid = str(m["id"])
        sid = chain.session_id
        base = safe_id(mid, sid) or derive_id(sid, mid)
        role = m.get("role")
        if role == "user":
            texts = [as_str(p.get("text")) or "" for p in parts
                     if p.get("type") == "text" and not p.get("synthetic")]
            if texts:
                yield chain.add(base, Kind.PROMPT, {"text": "\n".join(texts)}, ts)
            for p in parts:
                if p.get("type") == "text" and p.get("synthetic"):
                    yield chain.add(self._pid(p, base), Kind.NOTE,
                                    {"text": as_str(p.get("text")) or "", "synthetic": True}, ts)
                elif p.get("type") not in ("text",):
                    yield chain.add(self._pid(p, base), Kind.RAW,
                                    {"type": f"user/{p.get('type')}", "raw": p}, ts)
            return
        for p in parts:
            yield from self._part(chain, p, base, mid, ts)
        tokens = as_dict(m.get("tokens"))
        if tokens and as_dict(m.get("time")).get("completed") is not None:
            cache = as_dict(tokens.get("cache"))
            yield chain.add(sub_id(base, "usage"), Kind.USAGE, {
                "input": as_int(tokens.get("input")), "output": as_int(tokens.get("output")),
                "cacheRead": as_int(cache.get("read")), "cacheCreation": as_int(cache.get("write")),
                "reasoning": as_int(tokens.get("reasoning")), "messageId": mid,
                "model": m.get("modelID")}, _ts(m.get("time"), "completed") or ts)

    @staticmethod
    def _pid(p: JSON, base: str) -> str:
        return safe_id(p.get("id")) or sub_id(base, derive_id(p.get("id")))

    def _part(self, chain: Chain, p: JSON, base: str, mid: str, ts: str) -> Iterator[Record]:
        ptype = p.get("type")
        pid = self._pid(p, base)
        if ptype == "text":
            yield chain.add(pid, Kind.RESPONSE, {"text": as_str(p.get("text")) or "",
                                                 "messageId": mid}, ts)
        elif ptype == "reasoning":
            yield chain.add(pid, Kind.THINKING, {"text": as_str(p.get("text")) or "",
                                                 "messageId": mid}, ts)
        elif ptype == "tool":
            state = as_dict(p.get("state"))
            call = as_str(p.get("callID")) or pid
            yield chain.add(pid, Kind.TOOL_CALL, {"name": as_str(p.get("tool")) or "?",
                                                  "input": state.get("input"), "toolUseId": call,
                                                  "messageId": mid}, ts)
            status = state.get("status")
            if status in ("completed", "error"):
                yield chain.add(sub_id(pid, "result"), Kind.TOOL_RESULT, {
                    "toolUseId": call, "isError": status == "error",
                    "output": state.get("output") if status == "completed" else state.get("error"),
                }, _ts(state.get("time"), "end") or ts)
        elif ptype == "patch":
            yield chain.add(pid, Kind.NOTE, {
                "text": "files changed (OpenCode snapshot)",
                "sourceCheckpoint": {"tool": "opencode", "hash": p.get("hash")},
                "files": p.get("files")}, ts)
        elif ptype in ("step-start", "step-finish", "snapshot"):
            return  # bookkeeping of OpenCode's steps; usage comes from the message
        else:
            yield chain.add(pid, Kind.RAW, {"type": f"assistant/{ptype}", "raw": p}, ts)
