"""Open an agent's SQLite database read-only, as the hostile input it may be.

Crush and the older Go OpenCode keep sessions in SQLite inside the workspace
(``.crush/crush.db``), a file anyone who can write the workspace can craft. So:

- the database (and its ``-wal`` / ``-shm`` when present) must be regular files
  reached without a link (:func:`inputs.open_regular`), and at most
  ``MAX_DB_FACTOR`` × ``TURNBACK_MAX_LINE`` bytes;
- it is opened through a ``mode=ro`` URI (never created or written), with
  ``trusted_schema=OFF`` (no SQL functions from views or triggers of the file),
  ``query_only=ON``, and a progress handler that stops any query running past
  ``QUERY_SECONDS``;
- callers bound what one row may hold in SQL (``length(x) <= ?``) so a 2 GB
  cell is never read into memory.

sqlite itself opens the path by name: a file swapped for a link between the
check and the open would be followed; the window is that of one ``open``.
"""

from __future__ import annotations

import os
import sqlite3
import stat
import time
import urllib.parse
from pathlib import Path

from ..errors import InvalidInput, Unsafe
from .inputs import kind_of, open_regular, refusal, size_text

MAX_DB_FACTOR = 16
QUERY_SECONDS = 30.0
SQLITE_MAGIC = b"SQLite format 3\x00"


def open_db(path: Path, max_line: int) -> sqlite3.Connection:
    """A read-only connection to ``path``; :class:`Unsafe` / :class:`InvalidInput` if not fit."""
    with open_regular(path) as f:
        size = os.fstat(f.fileno()).st_size
        magic = f.read(len(SQLITE_MAGIC))
    if magic != SQLITE_MAGIC:
        raise InvalidInput(f"{path} is not an SQLite database")
    limit = max_line * MAX_DB_FACTOR
    if size > limit:
        raise InvalidInput(f"{path} holds {size:,} bytes, over the {size_text(limit)} read from "
                           f"a database ({MAX_DB_FACTOR} × TURNBACK_MAX_LINE); raise "
                           "TURNBACK_MAX_LINE to read it")
    for suffix in ("-wal", "-shm"):
        side = path.with_name(path.name + suffix)
        try:
            st = os.lstat(side)
        except FileNotFoundError:
            continue
        if not stat.S_ISREG(st.st_mode):
            raise refusal(side, kind_of(st.st_mode))
    uri = "file:" + urllib.parse.quote(str(path)) + "?mode=ro"
    try:
        conn = sqlite3.connect(uri, uri=True, timeout=1.0, check_same_thread=False)
    except sqlite3.Error as exc:
        raise InvalidInput(f"cannot open {path} as SQLite ({exc})") from exc
    try:
        conn.execute("PRAGMA trusted_schema=OFF")
        conn.execute("PRAGMA query_only=ON")
    except sqlite3.Error as exc:
        conn.close()
        raise InvalidInput(f"cannot read {path} as SQLite ({exc})") from exc
    deadline = time.monotonic() + QUERY_SECONDS
    conn.set_progress_handler(lambda: int(time.monotonic() > deadline), 10_000)
    return conn


def is_sqlite(path: Path) -> bool:
    try:
        with open_regular(path) as f:
            return f.read(len(SQLITE_MAGIC)) == SQLITE_MAGIC
    except (OSError, Unsafe):
        return False
