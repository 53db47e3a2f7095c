"""Agent Trace records (the open specification of cursor/agent-trace, version 0.1.0): the
attribution of the lines a git commit added, per file and per conversation.

A turn's lines are contributor ``ai`` with the session's model id; a person's ``human``;
lines of turns of several sessions at once ``mixed``; lines no checkpoint before the
commit holds (written after the last one) and the first checkpoint's lines ``unknown``.
The session and turn of each conversation are under ``metadata["dev.turnback"]`` (the
specification puts vendor data there, in reverse-domain keys).
"""

from __future__ import annotations

import bisect
import uuid
from typing import Any

from ..errors import InvalidInput
from ..events import JSON, now_iso
from ..store.facade import Store
from .blame import blame_text
from .gitcommit import Commit, file_at
from .history import History
from .origins import PERSON, SHARED, TURN, Origin

VERSION = "0.1.0"
META_KEY = "dev.turnback"


def _contributor(o: Origin) -> JSON:
    if o.kind == TURN:
        model = o.turns[0].model
        return {"type": "ai", **({"model_id": model[:250]} if model else {})}
    if o.kind == SHARED:
        return {"type": "mixed"}
    if o.kind == PERSON:
        return {"type": "human"}
    return {"type": "unknown"}


def _key(o: Origin) -> tuple[str, ...]:
    """One conversation per turn (or set of turns); one for people, one for the unknown."""
    if o.kind in (TURN, SHARED):
        return (o.kind, *(f"{t.session_id}/{t.turn_id}" for t in o.turns))
    return (_contributor(o)["type"],)


def _ranges(lines: list[int]) -> list[JSON]:
    out: list[JSON] = []
    for n in sorted(lines):
        if out and out[-1]["end_line"] == n - 1:
            out[-1]["end_line"] = n
        else:
            out.append({"start_line": n, "end_line": n})
    return out


def _stop(history: History, when: str) -> int:
    """The last checkpoint taken at or before ``when``, git's committer time: whole
    seconds (with an offset), so a checkpoint counts when taken within the commit's second."""
    from datetime import datetime

    def t(s: str) -> int:
        return int(datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp())

    times = [t(c.ts) for c in history.checkpoints]
    return bisect.bisect_right(times, t(when)) - 1  # -1: none before it


def trace_record(store: Store, history: History, commit: Commit, version: str) -> JSON:
    """The Agent Trace record of ``commit``'s added lines."""
    stop = _stop(history, commit.time)
    files: list[JSON] = []
    meta: list[JSON] = []
    for cf in commit.files:
        data = file_at(store.workspace, commit.sha, cf.path)
        try:
            blame = blame_text(store, history, cf.path, data, stop)
        except InvalidInput:
            continue  # a binary file: no lines
        groups: dict[tuple[str, ...], tuple[Origin, list[int]]] = {}
        for n in cf.added:
            if 1 <= n <= len(blame.origins):
                o = blame.origins[n - 1]
                groups.setdefault(_key(o), (o, []))[1].append(n)
        conversations = []
        for o, lines in groups.values():
            conversations.append({"contributor": _contributor(o), "ranges": _ranges(lines)})
            if o.turns:
                meta.append({"path": cf.path, "conversation": len(conversations) - 1,
                             "turns": [{"sessionId": t.session_id, "turnId": t.turn_id,
                                        "index": t.index, "prompt": t.prompt, "agent": t.agent}
                                       for t in o.turns]})
        if conversations:
            files.append({"path": cf.path, "conversations": conversations})
    record: dict[str, Any] = {
        "version": VERSION,
        "id": str(uuid.uuid4()),
        "timestamp": now_iso(),
        "vcs": {"type": "git", "revision": commit.sha},
        "tool": {"name": "turnback", "version": version},
        "files": files,
        "metadata": {META_KEY: {"conversations": meta,
                                "checkpoint": history.checkpoints[stop].id if stop >= 0
                                else None}},
    }
    return record

