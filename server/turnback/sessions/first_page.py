"""The newest sessions' summaries in listing order, saved: ``index/first.json``.

A full listing parses the whole summary index (7.7 MB for 10,000 sessions) and stats
every session file before its first page can be sorted and cut: 120–260 ms of a
server's start that grow with the number of sessions, and 94 s when the index is
missing. A server that has just started answers its first ``turnback/sessions`` from
this file instead (marked partial: the listing as the last full listing or the last
server left it, not checked against the files) while the full listing runs. Only a
cache, and input like every file: anything not well formed and it is not used.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from ..errors import InvalidInput, StoreDamaged
from ..events import SessionHeader, is_id
from ..fs.instore import store_folder
from ..fs.jsonl import dumps, loads
from ..fs.reading import read_regular
from ..fs.replacing import replace_file
from .stats import stats_ok

TYPE_CHECKING = False  # not typing's: see turnback/__init__.py
if TYPE_CHECKING:
    from ..results import (
        SessionSummary,  # imported where one is made: a checkpoint makes none (cold28)
    )

FORMAT = 1
COUNT = 500  # the extension's first page is 200 (``turnback.pageSize``); room for more
MAX_BYTES = 1 << 24  # about 1 KB a summary; more is a damaged or planted file


def encode(first: list[SessionSummary], total: int) -> bytes:
    """The file's bytes for the first ``COUNT`` of a listing of ``total`` sessions."""
    return dumps({"format": FORMAT, "total": total, "sessions": [
        {"header": s.header.to_json(), "stats": s.stats, "events": s.events, "head": s.head}
        for s in first[:COUNT]]})


def save(path: Path, data: bytes) -> None:
    """Write ``encode``'s bytes unless the file holds them already (a fresh CLI process
    listing an unchanged store: 1.6-2.2 ms of writing spared). Best effort: a cache."""
    try:
        if read_regular(path, limit=MAX_BYTES) == data:
            return
    except (OSError, StoreDamaged):
        pass
    try:  # ``index/`` of the store, through no link swapped in since it was opened
        with store_folder(path.parent.parent, [path.parent.name]) as folder:
            replace_file(folder, path.name, data)
    except OSError:
        pass


def load(path: Path) -> tuple[list[SessionSummary], int] | None:
    """The saved summaries and the total they were the first of; None when the file is
    missing or anything in it is not what ``encode`` writes."""
    try:
        data = loads(read_regular(path, limit=MAX_BYTES))
    except (OSError, StoreDamaged, orjson.JSONDecodeError):
        return None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        return None
    total, entries = data.get("total"), data.get("sessions")
    if (type(total) is not int or not isinstance(entries, list)
            or not len(entries) <= min(total, COUNT)):
        return None
    out: list[SessionSummary] = []
    seen: set[str] = set()
    for e in entries:
        summary = _summary(e)
        if summary is None or summary.header.id in seen:
            return None
        seen.add(summary.header.id)
        out.append(summary)
    return out, total


def _summary(e: Any) -> SessionSummary | None:
    if not isinstance(e, dict):
        return None
    header, stats, events, head = e.get("header"), e.get("stats"), e.get("events"), e.get("head")
    if not (isinstance(header, dict) and is_id(header.get("id")) and isinstance(stats, dict)
            and "filesEdited" in stats and stats_ok(stats) and type(events) is int
            and events >= 0 and isinstance(head, (str, type(None)))):
        return None
    from ..results import SessionSummary  # where one is made: a checkpoint makes none

    try:
        return SessionSummary(SessionHeader.from_json(header), stats, events, head)
    except (InvalidInput, TypeError, ValueError, KeyError, AttributeError):
        return None
