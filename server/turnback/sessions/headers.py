"""A session file's first line read alone: what a listing can show before counting.

A store that was never listed (no summary index: written by another version, just
pulled, or ``index/`` deleted) must count every event before it knows a session's
stats: 47-95 s for 10,000,000 events. The title, agent and start time are on each
file's first line, one small read. Input like every file: a first line longer than
``MAX_HEADER``, one that is not a session header, or a file that is not a regular one
(a link, a FIFO) gives None, and the session shows once it is counted.
"""

from __future__ import annotations

import os
from pathlib import Path

import orjson

from ..errors import InvalidInput, StoreDamaged
from ..events import SessionHeader
from ..fs.folders import Folder
from ..fs.jsonl import loads
from ..fs.reading import open_regular

FIRST_READ = 4096  # a header line is a few hundred bytes; most files need one read
MAX_HEADER = 1 << 16  # longer is a damaged or planted line: not read further
_ADVISE: int | None = getattr(os, "POSIX_FADV_RANDOM", None)  # not on macOS, Windows


def read_header(path: Path | str, folder: Folder | None = None) -> SessionHeader | None:
    """The session header on the first line of ``path`` (a name in ``folder``, if given:
    10,000 opens relative to one open folder skip resolving its path each time); None if
    there is none to read."""
    try:
        fd = open_regular(path, folder=folder)  # no link followed; a FIFO or device refused
    except (OSError, StoreDamaged):
        return None
    try:
        if _ADVISE is not None:  # no read-ahead: 10,000 cold files read 4 KiB each, not 128
            os.posix_fadvise(fd, 0, 0, _ADVISE)
        data, size = b"", FIRST_READ
        while True:
            data = os.pread(fd, size, 0)
            end = data.find(b"\n")
            if end >= 0 or len(data) < size or size >= MAX_HEADER:
                break
            size = min(size * 4, MAX_HEADER)
    except OSError:
        return None
    finally:
        os.close(fd)
    if end < 0:
        return None  # no whole first line (too long, empty, or still being written)
    try:
        value = loads(data[:end])
    except (orjson.JSONDecodeError, ValueError):
        return None
    if not isinstance(value, dict) or value.get("type") != "session":
        return None
    try:
        return SessionHeader.from_json(value)
    except (InvalidInput, TypeError, ValueError, AttributeError):
        return None
