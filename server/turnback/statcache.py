"""Remembers each file's stat and hash so unchanged files are not read again.

An entry is trusted only when size, mtime, ctime, inode and mode all match and
the file's mtime is older than the scan that read it (git's "racily clean"
rule: a file written in the same instant as that read is hashed again).
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import orjson

from .atomic import atomic_write
from .jsonl import dumps, loads

# path -> [size, mtime_ns, ctime_ns, ino, mode, hash, scan_ns]
Row = list[int | str]
# File times come from a coarse kernel clock that can trail time.time_ns() by a
# tick; a margin keeps a write in the same tick as the read from being trusted.
RACY_MARGIN_NS = 50_000_000
INCREMENTAL_SAVE_S = 30.0


class StatCache:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.rows: dict[str, Row] = {}
        self.dirty = False
        self._loaded = False
        self._saved_at = time.monotonic()
        # folder -> signature of the ignore rules in force there at the last scan
        self.dirsigs: dict[str, str] = {}
        self.new_dirsigs: dict[str, str] = {}
        # folder -> [tree hash, files, bytes, entries] as the last scan built it
        self.dirtrees: dict[str, list[Any]] = {}
        self.new_dirtrees: dict[str, list[Any]] = {}

    def load(self) -> None:
        if self._loaded:
            return
        self._loaded = True
        try:
            data = loads(self.path.read_bytes())
            rows = data["rows"]
            dirsigs = data.get("dirsigs") or {}
            if not isinstance(rows, dict) or not isinstance(dirsigs, dict):
                raise TypeError("rows")
            self.rows = rows
            self.dirsigs = dirsigs
            self.dirtrees = data.get("dirtrees") or {}
        except (FileNotFoundError, orjson.JSONDecodeError, KeyError, TypeError, ValueError):
            self.rows = {}  # a cache: losing it only costs a re-read

    def discard(self) -> None:
        """Forget what is not saved: a checkpoint failed, so its rows may name objects that
        were never committed. The next ``load`` reads the file again."""
        self.rows, self.dirsigs, self.dirtrees = {}, {}, {}
        self.new_dirsigs, self.new_dirtrees = {}, {}
        self.dirty = False
        self._loaded = False
        self._saved_at = time.monotonic()

    def lookup(self, rel: str, st: os.stat_result) -> str | None:
        row = self.rows.get(rel)
        if (
            row is not None
            and len(row) == 7
            and row[0] == st.st_size
            and row[1] == st.st_mtime_ns
            and row[2] == st.st_ctime_ns
            and row[3] == st.st_ino
            and row[4] == st.st_mode
            and st.st_mtime_ns < int(row[6]) - RACY_MARGIN_NS
        ):
            return str(row[5])
        return None

    def record(self, rel: str, st: os.stat_result, digest: str, scan_ns: int) -> None:
        """Remember ``rel``'s hash as read by a scan that started at ``scan_ns``."""
        self.rows[rel] = [
            st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_mode, digest, scan_ns
        ]
        self.dirty = True

    def drop(self, rel: str) -> None:
        if self.rows.pop(rel, None) is not None:
            self.dirty = True

    def save(self, keep: set[str] | None = None) -> None:
        """Persist; ``keep`` (after a full scan) prunes paths that no longer exist."""
        if keep is not None:
            gone = self.rows.keys() - keep
            for rel in gone:
                del self.rows[rel]
            self.dirty = self.dirty or bool(gone)
            if self.new_dirsigs != self.dirsigs:
                self.dirsigs = self.new_dirsigs
                self.dirty = True
            if self.new_dirtrees != self.dirtrees:
                self.dirtrees = self.new_dirtrees
                self.dirty = True
        else:
            for k, v in self.new_dirsigs.items():
                if self.dirsigs.get(k) != v:
                    self.dirsigs[k] = v
                    self.dirty = True
            if self.dirtrees:
                self.dirtrees = {}  # only a full scan sees every folder
                self.dirty = True
        self.new_dirsigs = {}
        self.new_dirtrees = {}
        if not self.dirty:
            return
        if keep is None and time.monotonic() - self._saved_at < INCREMENTAL_SAVE_S:
            # incremental scans (a watching server) keep the cache in memory; rewriting
            # every row for a few changed files would cost more than the checkpoint
            return
        self._saved_at = time.monotonic()
        atomic_write(self.path, dumps({"rows": self.rows, "dirsigs": self.dirsigs,
                                       "dirtrees": self.dirtrees}), fsync=False)
        self.dirty = False

    def flush(self) -> None:
        """Write what throttled incremental saves held back (on close)."""
        if self.dirty and self._loaded:
            self._saved_at = 0.0
            self.save()
