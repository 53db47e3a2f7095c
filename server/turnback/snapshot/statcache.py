"""Remembers each file's stat and hash so unchanged files are not read again.

An entry is trusted only when size, mtime, ctime, inode and mode all match and
the file's mtime is older than the scan that read it (git's "racily clean"
rule: a file written in the same instant as that read is hashed again).
"""

from __future__ import annotations

import mmap
import os
import struct
import time
from operator import itemgetter
from pathlib import Path
from typing import Any

import orjson

from ..errors import StoreDamaged
from ..fs.atomic import atomic_write
from ..fs.jsonl import dumps, loads
from ..fs.reading import open_regular
from .prescan import MAGIC, Identity
from .prescan import U32 as _U32

# path -> packed (size, mtime_ns, ctime_ns, ino, mode, scan_ns, 32-byte hash). Rows stay
# packed in memory: loading 50,000 of them makes 50,000 small objects instead of 400,000.
ROW = struct.Struct("<QqqQIq32s")
_RAW_ROW = struct.Struct(f"{ROW.size}s")
# File times come from a coarse kernel clock that can trail time.time_ns() by a
# tick; a margin keeps a write in the same tick as the read from being trusted.
RACY_MARGIN_NS = 50_000_000
INCREMENTAL_SAVE_S = 30.0


class StatCache:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._rows: dict[str, bytes] | None = {}
        # the loaded file and where its paths and rows are, until ``rows`` is first used: a
        # no-op full scan with folder records never looks at a row, nor pays for the dict
        self._raw: tuple[bytes | mmap.mmap, int, int, int] | None = None
        self.dirty = False
        self._loaded = False
        self._saved_at = time.monotonic()
        self.identity: Identity | None = None  # the loaded file's (inode, size, mtime_ns)
        # folder -> signature of the ignore rules in force there at the last scan
        self.dirsigs: dict[str, str] = {}
        self.new_dirsigs: dict[str, str] = {}
        # folder -> [tree hash, files, bytes, entries] as the last scan built it
        self.dirtrees: dict[str, list[Any]] = {}
        self.new_dirtrees: dict[str, list[Any]] = {}
        # folder -> digest of its listing (names and the stat of every non-folder entry) as
        # a full scan saw it when every file in it matched its row: the same digest again
        # means the same files, and the folder's files need no look-up one by one
        self.dirrecs: dict[str, str] = {}
        self.new_dirrecs: dict[str, str] = {}

    def load(self) -> None:
        if self._loaded:
            return
        self._loaded = True
        try:
            # mapped, not read: a no-op full scan with folder records reads only the header
            # (the rows are most of the file, 3.4 MB for 50,000 files); the mapping keeps
            # this file's bytes even if a new cache file is renamed over it
            # (POSIX only: Windows cannot rename over a mapped file)
            data: bytes | mmap.mmap
            with os.fdopen(open_regular(self.path), "rb") as f:
                st = os.fstat(f.fileno())
                if os.name == "posix":
                    data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
                else:
                    data = f.read()
            self.identity = (st.st_ino, st.st_size, st.st_mtime_ns)
            if data[:len(MAGIC)] != MAGIC:
                raise ValueError("not a stat cache")
            pos = len(MAGIC)
            (hlen,) = _U32.unpack_from(data, pos)
            header = loads(data[pos + 4: pos + 4 + hlen])
            pos += 4 + hlen
            count, klen = _U32.unpack_from(data, pos)[0], _U32.unpack_from(data, pos + 4)[0]
            pos += 8
            if len(data) != pos + klen + count * ROW.size:
                raise ValueError("truncated")
            self._rows, self._raw = None, (data, pos, klen, count)
            self.dirsigs = dict(header.get("dirsigs") or {})
            self.dirtrees = dict(header.get("dirtrees") or {})
            self.dirrecs = dict(header.get("dirrecs") or {})  # absent before: none trusted
        except (FileNotFoundError, StoreDamaged, orjson.JSONDecodeError, struct.error, TypeError,
                ValueError, AttributeError):
            self.rows = {}  # a cache: losing it only costs a re-read

    @property
    def files(self) -> int:
        """How many files the cache knows (without making the rows' dict)."""
        if self._rows is None and self._raw is not None:
            return self._raw[3]
        return len(self.rows)

    @property
    def rows(self) -> dict[str, bytes]:
        """path -> packed row (made from the loaded file on first use)."""
        rows = self._rows
        if rows is None:
            rows = self._rows = self._unpack_rows()
        return rows

    @rows.setter
    def rows(self, value: dict[str, bytes]) -> None:
        self._rows, self._raw = value, None

    def _unpack_rows(self) -> dict[str, bytes]:
        if self._raw is None:
            return {}
        data, pos, klen, count = self._raw
        self._raw = None
        keys = data[pos: pos + klen].decode("utf-8", "surrogateescape").split("\0")
        if count == 0:
            return {}
        if len(keys) != count:
            return {}  # damaged: a cache, losing it only costs a re-read
        # one C-level pass: each row's bytes as they are, keyed by path
        return dict(zip(keys, map(itemgetter(0), _RAW_ROW.iter_unpack(
            memoryview(data)[pos + klen:])), strict=True))

    def discard(self) -> None:
        """Forget what is not saved: a checkpoint failed, so its rows may name objects that
        were never committed. The next ``load`` reads the file again."""
        self.rows, self.dirsigs, self.dirtrees, self.dirrecs = {}, {}, {}, {}
        self.new_dirsigs, self.new_dirtrees, self.new_dirrecs = {}, {}, {}
        self.dirty = False
        self._loaded = False
        self.identity = None
        self._saved_at = time.monotonic()

    def lookup(self, rel: str, st: os.stat_result) -> str | None:
        raw = self.rows.get(rel)
        if raw is None:
            return None
        size, mtime, ctime, ino, mode, scan_ns, digest = ROW.unpack(raw)
        if (size == st.st_size and mtime == st.st_mtime_ns and ctime == st.st_ctime_ns
                and ino == st.st_ino and mode == st.st_mode
                and st.st_mtime_ns < scan_ns - RACY_MARGIN_NS):
            return str(digest.hex())
        return None

    def record(self, rel: str, st: os.stat_result, digest: str, scan_ns: int) -> None:
        """Remember ``rel``'s hash as read by a scan that started at ``scan_ns``."""
        self.rows[rel] = ROW.pack(st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino,
                                  st.st_mode, scan_ns, bytes.fromhex(digest))
        self.dirty = True
        if self.dirrecs:
            self.dirrecs.pop(rel.rpartition("/")[0], None)

    def record_row(self, rel: str, row: bytes) -> None:
        """``record`` with the row packed already (``ROW``, by a hashing thread)."""
        self.rows[rel] = row
        self.dirty = True
        if self.dirrecs:
            self.dirrecs.pop(rel.rpartition("/")[0], None)

    def drop(self, rel: str) -> None:
        if self.rows.pop(rel, None) is not None:
            self.dirty = True
            self.dirrecs.pop(rel.rpartition("/")[0], None)

    def save(self, keep: set[str] | None = None,
             keep_in: list[tuple[str, list[str]]] | None = None) -> None:
        """Persist; ``keep`` (after a full scan) prunes paths that no longer exist.

        ``keep_in`` adds to ``keep`` the names of folders a full scan took whole from
        their records. When no row was looked at, no folder's listing changed since
        the last full scan: nothing to prune.
        """
        if keep is not None:
            if self._rows is not None:
                for prefix, names in keep_in or ():
                    keep.update([prefix + n for n in names])
                gone = self._rows.keys() - keep
                for rel in gone:
                    del self._rows[rel]
                self.dirty = self.dirty or bool(gone)
            if self.new_dirsigs != self.dirsigs:
                self.dirsigs = self.new_dirsigs
                self.dirty = True
            if self.new_dirtrees != self.dirtrees:
                self.dirtrees = self.new_dirtrees
                self.dirty = True
            if self.new_dirrecs != self.dirrecs:
                self.dirrecs = self.new_dirrecs
                self.dirty = True
        else:
            for k, v in self.new_dirsigs.items():
                if self.dirsigs.get(k) != v:
                    self.dirsigs[k] = v
                    self.dirty = True
            # An incremental scan rebuilt only the folders on its paths, without the listing
            # digests a full scan records: forget those folders' records. Every other
            # folder's record stays true: a record is trusted only while its listing and each
            # file's stat are unchanged, and a folder's tree only while every folder below is.
            for rel in self.new_dirtrees:
                if self.dirtrees.pop(rel, None) is not None:
                    self.dirty = True
                if self.dirrecs.pop(rel, None) is not None:
                    self.dirty = True
        self.new_dirsigs = {}
        self.new_dirtrees = {}
        self.new_dirrecs = {}
        if not self.dirty:
            return
        if keep is None and time.monotonic() - self._saved_at < INCREMENTAL_SAVE_S:
            # incremental scans (a watching server) keep the cache in memory; rewriting
            # every row for a few changed files would cost more than the checkpoint
            return
        self._saved_at = time.monotonic()
        header = dumps({"dirsigs": self.dirsigs, "dirtrees": self.dirtrees,
                        "dirrecs": self.dirrecs})
        if self._rows is None and self._raw is not None:
            data, pos, klen, count = self._raw  # rows untouched: the same bytes again
            body = [_U32.pack(count), _U32.pack(klen), data[pos:]]
        else:
            keys = "\0".join(self.rows).encode("utf-8", "surrogateescape")
            body = [_U32.pack(len(self.rows)), _U32.pack(len(keys)), keys, *self.rows.values()]
        atomic_write(self.path, b"".join([MAGIC, _U32.pack(len(header)), header, *body]),
                     fsync=False)
        self.identity = None  # no longer the file on disk
        self.dirty = False

    def flush(self) -> None:
        """Write what throttled incremental saves held back (on close)."""
        if self.dirty and self._loaded:
            self._saved_at = 0.0
            self.save()
