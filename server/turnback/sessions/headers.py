"""Session files' header lines read without counting: what a listing can show before.

A store that was never listed (no summary index: written by another version, just
pulled, or ``index/`` deleted) must count every event before it knows a session's
stats: 33-65 s for 10,000,000 events. The title, agent and start time are on each
file's first line, one small read (``read_headers``, every session: they order the
listing). A later title or end is on a ``meta`` line, which a session's last write
usually is: ``read_latest_meta`` reads a file's last ``TAIL`` bytes, for the sessions
shown only (a page of 200, not 10,000: read for every session it cost 150-300 ms more
with a cold page cache, bench/RESULTS.md).

Input like every file: a first line longer than ``MAX_HEADER``, one that is not a
session header, or a file that is not a regular one (a link, a FIFO) gives no header,
and the session shows once it is counted. At most ``MAX_HEADER`` bytes are read from a
file for its header and ``TAIL + 1`` for its meta lines.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import orjson

from ..errors import InvalidInput
from ..events import SessionHeader
from ..fs.folders import Folder
from ..fs.jsonl import loads
from .ahead import read_ahead

FIRST_READ = 4096  # a header line is a few hundred bytes; most files need one read
MAX_HEADER = 1 << 16  # longer is a damaged or planted line: not read further
TAIL = 4096  # the last bytes read for meta lines: a meta line is about 150 bytes


@dataclass(frozen=True, slots=True)
class HeaderRead:
    """One session file's header line as read (None: nothing to show before counting)
    and the file's inode then: a header line never changes under one inode."""

    ino: int
    header: SessionHeader | None


def read_headers(names: Iterable[str], folder: Folder) -> list[HeaderRead | None]:
    """The session header on the first line of each name in ``folder`` (None in it:
    none to read), with the file's inode, in the order given (None: no regular file
    there to read)."""
    return read_ahead(names, folder, _head_range, _read_head)


def read_latest_meta(names: Iterable[str], folder: Folder) -> list[list[dict[str, Any]]]:
    """The meta lines among each named file's last ``TAIL`` bytes, in the file's order
    (empty where there is none, or no file to read): what a count would apply to the
    header last. A meta line further back, or one not yet ended by its newline, is not
    among them."""
    return [got or [] for got in read_ahead(names, folder, _tail_range, _read_meta)]


def _head_range(_size: int) -> list[tuple[int, int]]:
    return [(0, FIRST_READ)]


def _tail_range(size: int) -> list[tuple[int, int]]:
    start = max(0, size - TAIL - 1)
    return [(start, size - start)]


def _read_head(fd: int, st: os.stat_result) -> HeaderRead:
    data, size = b"", FIRST_READ
    while True:
        data = os.pread(fd, size, 0)
        end = data.find(b"\n")
        if end >= 0 or len(data) < size or size >= MAX_HEADER:
            break
        size = min(size * 4, MAX_HEADER)
    # no whole first line: too long, empty, or still being written
    return HeaderRead(st.st_ino, _header(data[:end]) if end >= 0 else None)


def _header(line: bytes) -> SessionHeader | None:
    try:
        value = loads(line)
    except (orjson.JSONDecodeError, ValueError):
        return None
    if not isinstance(value, dict) or value.get("type") != "session":
        return None
    try:
        return SessionHeader.from_json(value)
    except (InvalidInput, TypeError, ValueError, AttributeError):
        return None


def _read_meta(fd: int, st: os.stat_result) -> list[dict[str, Any]]:
    """The meta lines among the whole lines of the file's last ``TAIL`` bytes. Read from
    the byte before them: the first piece is then the end of a line begun earlier (or
    empty), never a whole line; a last piece with no newline is a line not yet ended."""
    start = max(0, st.st_size - TAIL - 1)
    tail = os.pread(fd, st.st_size - start, start)
    if b'"meta"' not in tail:  # most sessions' last lines are events: nothing split
        return []
    pieces = tail.split(b"\n")[:-1]
    out: list[dict[str, Any]] = []
    for raw in pieces if start == 0 else pieces[1:]:
        if b'"meta"' not in raw:
            continue
        try:
            value = loads(raw)
        except (orjson.JSONDecodeError, ValueError):
            continue
        if isinstance(value, dict) and value.get("type") == "meta":
            out.append(value)
    return out
