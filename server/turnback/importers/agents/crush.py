"""Crush (Charm) and the older Go OpenCode: sessions in the workspace's SQLite database.

Where: ``<workspace>/.crush/crush.db`` (Crush) and ``<workspace>/.opencode/opencode.db``
(OpenCode before it became the TypeScript one), with their ``-wal`` / ``-shm``
beside them. Tables read: ``sessions`` (one Turnback session each; a
``parent_session_id`` names the session that started it), ``messages`` (role
and a JSON list of ``parts``: text, reasoning, tool_call, tool_result, finish)
and ``files`` — the full content of each version of each file the agent touched
(version 0 is the file before the agent's first change).

Versions become partial checkpoints, so they can be compared and rewound to:
the files written at one moment (one ``created_at``) are one checkpoint
``after`` that change, hung below the last event at or before it; the version-0
rows of that moment also make a ``before`` checkpoint. Paths outside the
workspace are refused — except that a path under a folder named like the
workspace (``…/conecta4/src/a.ts`` for a workspace named ``conecta4``: the same
project checked out elsewhere) is taken relative to that folder.

The database is hostile input: see ``sqlite_input``. Times are Unix seconds
(Crush writes seconds though its schema says milliseconds; values past 1e11
are read as milliseconds). Ids are the rows' own, so a re-import adds what is
new; an assistant message with no ``finish`` part is still being written and
is left for the next import unless a later message follows it.
"""

from __future__ import annotations

import bisect
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from ...errors import InvalidInput, Unsafe
from ...events import JSON, Kind, SessionHeader
from ..base import (
    TITLE_SUMMARY,
    CheckpointRecord,
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
    unreadable,
    workspace_relpath,
)
from ..chain import Chain
from ..inputs import find, in_workspace
from ..sqlite_input import open_db

DB_NAMES = {"crush": (".crush", "crush.db"), "opencode-go": (".opencode", "opencode.db")}
MAX_ROWS = 1_000_000  # rows read from one table of one session


def make_locate(source: str) -> Any:
    folder, name = DB_NAMES[source]

    def locate(ctx: Context, path: Path | None) -> list[Path]:
        """PATH (the .db, or a folder holding it), or the workspace's own database."""
        if path is None:
            db = in_workspace(ctx.workspace, f"{folder}/{name}")
            return [db] if db is not None else []
        if path.is_dir():
            return find(path, "**", name, refused=ctx.refused)
        return [path]

    return locate


def _ts(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return ""
    return iso_from_epoch(value / 1000 if value > 1e11 else value)


def _loads(text: Any) -> Any:
    if not isinstance(text, (str, bytes)):
        return None
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return None


class CrushParser(DocumentParser):
    agent = "crush"

    def parse(self) -> Iterator[Record]:
        try:
            conn = open_db(self.path, self.ctx.max_line)
        except (InvalidInput, Unsafe, OSError) as exc:
            yield unreadable(self.path, exc, "database")
            return
        try:
            sessions = conn.execute(
                "SELECT id, parent_session_id, title, created_at, prompt_tokens, completion_tokens "
            "FROM sessions "
                "ORDER BY created_at, rowid LIMIT ?", (MAX_ROWS,)).fetchall()
            for row in sessions:
                yield from self._session(conn, row)
        except sqlite3.Error as exc:
            yield self.problem(f"not a {self.agent} database, or a damaged one ({exc}); "
                               "the rest of it skipped")
        finally:
            conn.close()

    def _root(self) -> Path | None:
        """The project the database belongs to, when it sits in ``<project>/.crush/``."""
        parent = self.path.parent
        return parent.parent if parent.name.startswith(".") else None

    def _rel(self, path: str) -> str | None:
        ws = self.ctx.workspace
        root = self._root()
        rel = workspace_relpath(path, str(root) if root else None, ws)
        if rel is not None:
            return rel
        parts = Path(path).parts
        if os.path.isabs(path) and ws.name in parts[:-1]:
            at = len(parts) - 1 - parts[::-1].index(ws.name)  # the innermost such folder
            return workspace_relpath("/".join(parts[at + 1:]), None, ws)
        return None

    def _session(self, conn: sqlite3.Connection, row: tuple[Any, ...]) -> Iterator[Record]:
        raw_id, parent, title, created, prompt_tokens, completion_tokens = row
        sid = safe_id(raw_id) or derive_id(self.path, raw_id)
        extra: JSON = {"database": str(self.path)}
        if isinstance(parent, str) and parent:
            extra["parentSession"] = safe_id(parent) or derive_id(self.path, parent)
        started = _ts(created)
        yield SessionRecord(SessionHeader(id=sid, agent=self.agent, started=started,
                                          cwd=str(self._root()) if self._root() else None,
                                          source=self.agent, extra=extra))
        if isinstance(title, str) and title.strip():
            yield MetaRecord(sid, {"title": short_title(title, 120)}, TITLE_SUMMARY)
        chain = Chain(sid, started)
        times: list[tuple[str, str]] = []  # (ts, event id) in order, to place checkpoints
        limit = self.ctx.max_line
        rows = conn.execute(
            "SELECT id, role, CASE WHEN length(parts) <= ? THEN parts END, model, created_at, "
            "finished_at FROM messages WHERE session_id = ? ORDER BY created_at, rowid LIMIT ?",
            (limit, raw_id, MAX_ROWS)).fetchall()
        model = None
        for i, (mid, role, parts_text, m, created_at, finished) in enumerate(rows):
            parts = _loads(parts_text)
            if parts_text is None or not isinstance(parts, list):
                yield self.problem(f"message {mid!r}: parts missing, over the bound or not a "
                                   "JSON list; skipped")
                continue
            last = i == len(rows) - 1
            done = finished is not None or any(as_dict(p).get("type") == "finish" for p in parts)
            if role == "assistant" and not done and last:
                continue  # still being written: the next import takes it whole
            if isinstance(m, str) and m and m != model:
                model = m
                yield MetaRecord(sid, {"model": m})
            base = safe_id(mid, sid) or derive_id(sid, mid)
            ts = _ts(created_at) or chain.ts
            for rec in self._parts(chain, base, str(role), parts, ts, str(mid)):
                times.append((chain.ts, chain.last or ""))
                yield rec
        if as_int(prompt_tokens) or as_int(completion_tokens):
            # The tool keeps only the session's totals: one usage, its figure the last one
            # (the same messageId each time, so the stats count the latest totals once).
            totals = (as_int(prompt_tokens), as_int(completion_tokens))
            yield chain.add(sub_id(sid, "usage-" + derive_id(*totals)), Kind.USAGE, {
                "input": totals[0], "output": totals[1], "cacheRead": 0, "cacheCreation": 0,
                "messageId": f"{sid}:totals", "sessionTotals": True})
        yield from self._files(conn, sid, raw_id, times)

    def _parts(self, chain: Chain, base: str, role: str, parts: list[Any], ts: str,
               mid: str) -> Iterator[Record]:
        n = 0

        def eid() -> str:
            nonlocal n
            n += 1
            return base if n == 1 else sub_id(base, n - 1)

        for part in parts:
            p = as_dict(part)
            ptype = p.get("type")
            d = as_dict(p.get("data"))
            if ptype == "text":
                text = as_str(d.get("text")) or ""
                if role == "user":
                    yield chain.add(eid(), Kind.PROMPT, {"text": text}, ts)
                else:
                    yield chain.add(eid(), Kind.RESPONSE, {"text": text, "messageId": mid}, ts)
            elif ptype == "reasoning":
                yield chain.add(eid(), Kind.THINKING,
                                {"text": as_str(d.get("thinking")) or "", "messageId": mid}, ts)
            elif ptype == "tool_call":
                raw_input = d.get("input")
                parsed = _loads(raw_input)
                yield chain.add(eid(), Kind.TOOL_CALL, {
                    "name": as_str(d.get("name")) or "?",
                    "input": parsed if parsed is not None else raw_input,
                    "toolUseId": as_str(d.get("id")), "messageId": mid}, ts)
            elif ptype == "tool_result":
                yield chain.add(eid(), Kind.TOOL_RESULT, {
                    "toolUseId": as_str(d.get("tool_call_id")),
                    "isError": d.get("is_error") is True,
                    "output": d.get("content")}, ts)
            elif ptype == "finish":
                reason = as_str(d.get("reason"))
                if reason not in (None, "end_turn", "tool_use", "stop"):
                    yield chain.add(eid(), Kind.NOTE, {"text": as_str(d.get("message")) or reason,
                                                       "finish": reason}, ts)
            elif ptype in ("image_url", "binary"):
                yield chain.add(eid(), Kind.NOTE, {"text": f"[{ptype}]", "image": True}, ts)
            else:
                yield chain.add(eid(), Kind.RAW, {"type": f"{role}/{ptype}", "raw": p}, ts)

    def _files(self, conn: sqlite3.Connection, sid: str, raw_id: Any,
               times: list[tuple[str, str]]) -> Iterator[Record]:
        rows = conn.execute(
            "SELECT id, path, version, CASE WHEN length(content) <= ? THEN content END, "
            "created_at FROM files WHERE session_id = ? ORDER BY created_at, version, rowid "
            "LIMIT ?", (self.ctx.max_line, raw_id, MAX_ROWS)).fetchall()
        groups: dict[Any, list[tuple[Any, ...]]] = {}
        for row in rows:
            groups.setdefault(row[4], []).append(row)
        stamps = [t for t, _ in times]
        for created, group in groups.items():
            ts = _ts(created)
            at = bisect.bisect_right(stamps, ts) - 1
            event = times[at][1] if at >= 0 else None
            before: dict[str, bytes | None] = {}
            after: dict[str, bytes | None] = {}
            ids: list[str] = []
            for fid, path, version, content, _c in group:
                rel = self._rel(path) if isinstance(path, str) else None
                if rel is None:
                    yield self.problem(f"file version {path!r} refused: it is outside the "
                                       f"workspace {self.ctx.workspace}")
                    continue
                if content is None:
                    yield self.problem(f"file version {path!r} v{version}: content missing or "
                                       "over the bound; left out")
                    continue
                data = content.encode("utf-8", "surrogatepass") if isinstance(content, str) \
                    else bytes(content)
                if version == 0:
                    before[rel] = data
                after[rel] = data  # the group's highest version wins (rows sorted)
                ids.append(str(fid))
            label = f"{self.agent} file versions"
            if before:
                yield CheckpointRecord(sid, event, "cr" + derive_id(sid, "before", *ids)[2:],
                                       f"before ({label})", ts, before, str(self.path))
            if after:
                yield CheckpointRecord(sid, event, "cr" + derive_id(sid, "after", *ids)[2:],
                                       f"after ({label})", ts, after, str(self.path))


class OpenCodeGoParser(CrushParser):
    agent = "opencode-go"
