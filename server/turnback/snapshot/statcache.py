"""Remembers each file's stat and hash so unchanged files are not read again.

An entry is trusted only when size, mtime, ctime, inode and mode all match and
the file's mtime is older than the scan that read it (git's "racily clean"
rule: a file written in the same instant as that read is hashed again).
"""

from __future__ import annotations

import os
import struct
import time
from collections.abc import Iterable, Iterator
from itertools import chain
from operator import itemgetter
from pathlib import Path
from typing import Any

import orjson

from ..errors import StoreDamaged
from ..fs.atomic import atomic_write_chunks
from ..fs.jsonl import dumps, loads
from ..fs.reading import open_regular
from .prescan import HEADER_MAX, MAGIC, Identity, header_fits
from .prescan import U32 as _U32

# path -> packed (size, mtime_ns, ctime_ns, ino, mode, scan_ns, 32-byte hash). Rows stay
# packed in memory: loading 50,000 of them makes 50,000 small objects instead of 400,000.
ROW = struct.Struct("<QqqQIq32s")
_RAW_ROW = struct.Struct(f"{ROW.size}s")


def pack_row(st: os.stat_result, scan_ns: int, digest: str) -> bytes | None:
    """``st``'s row, or None if a time does not fit it (past 2262: a file's times are its
    owner's to set). Such a file gets no row and is read at every scan, as a file changed
    within the last tick is; it never stops a checkpoint."""
    try:
        return ROW.pack(st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_mode,
                        scan_ns, bytes.fromhex(digest))
    except struct.error:
        return None


# File times come from a coarse kernel clock that can trail time.time_ns() by a
# tick; a margin keeps a write in the same tick as the read from being trusted.
RACY_MARGIN_NS = 50_000_000
# A filesystem that keeps whole seconds (ext3, ext4 with 128-byte inodes, HFS+; FAT two)
# gives every edit within that second the same mtime and ctime: an edit of the same size
# after the read kept every field of the row. Such an mtime is trusted only once its
# seconds ended before the scan began; on a nanosecond filesystem a whole-second mtime is a
# set one (a tar's, ``touch -d``), old: no file more is read (tests/snapshot/test_coarse_times.py)
SECOND_NS = 1_000_000_000
COARSE_MARGIN_NS = 2 * SECOND_NS + RACY_MARGIN_NS


def settled_before(mtime_ns: int, scan_ns: int) -> bool:
    """Whether a file of this mtime could no longer change unseen when a scan that began
    at ``scan_ns`` read it (the racy rule, with coarse filesystems' whole seconds)."""
    return mtime_ns < scan_ns - COARSE_MARGIN_NS or (
        mtime_ns % SECOND_NS != 0 and mtime_ns < scan_ns - RACY_MARGIN_NS)
INCREMENTAL_SAVE_S = 30.0
_CHUNK = 1 << 20  # the loaded file is copied into a new one this much at a time


# A folder's rows as kept in memory between its uses: its paths joined by NUL (UTF-8) and its
# rows packed, in the same order; or, untouched since the file was loaded, where they lie in
# it: (offset of its paths in the file, their length, index of its first row, row count).
Packed = tuple[bytes, bytes] | tuple[int, int, int, int]


_U32_2 = struct.Struct("<II")
_PREAD = hasattr(os, "pread")
_told: set[tuple[str, Identity]] = set()  # stat cache files said in the log not to be read


class _HeaderTooLong(ValueError):
    """A header said to be longer than its file or ``HEADER_MAX`` (planted, or a
    workspace of more folders than any measured): not read, said in the log once."""


class _Held:
    """A descriptor closed with its last reference, as a mapping is: a cache dropped
    without ``close`` (a store let go of) must not keep its file's disk space."""

    __slots__ = ("fd",)

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def close(self) -> None:
        if self.fd >= 0:
            fd, self.fd = self.fd, -1
            os.close(fd)

    def __del__(self) -> None:
        self.close()


def _buffered(chunks: Iterable[bytes]) -> Iterator[bytes]:
    """``chunks`` gathered into writes of about ``_CHUNK`` (a folder's paths are a few
    hundred bytes: one write each would be 40,000 system calls at 500,000 files)."""
    buf: list[bytes] = []
    held = 0
    for c in chunks:
        if len(c) >= _CHUNK:
            if buf:
                yield b"".join(buf)
                buf, held = [], 0
            yield c
            continue
        buf.append(c)
        held += len(c)
        if held >= _CHUNK:
            yield b"".join(buf)
            buf, held = [], 0
    if buf:
        yield b"".join(buf)


def _folder(rel: str) -> str:
    return rel.rpartition("/")[0]


class StatCache:
    """The stat cache, kept folder by folder in packed form (git's index is one flat file,
    not an object per file): 500,000 rows as a dict of path -> row cost about 250 bytes
    each; packed, about 100. A folder's rows become a dict (name -> row) only while a scan
    looks at that folder, and go back to packed bytes once it is built."""

    def __init__(self, path: Path) -> None:
        self.path = path
        # the loaded file, which spans point into: held open and read where needed (POSIX),
        # or its bytes (where there is no ``pread``)
        self._file: _Held | None = None
        self._data = b""
        self._keys_at = 0  # where its paths start in it
        self._rows_at = 0  # ... and its rows
        self._packed: dict[str, Packed] = {}
        self._live: dict[str, dict[str, bytes]] = {}  # folder -> {path: row}, being looked at
        # ... and the packed form each came from, while unchanged: it goes back as it was
        # (a span of the mapped file costs nothing; a copy would cost 100 bytes a row)
        self._was: dict[str, Packed] = {}
        # rows recorded in folders not being looked at (an incremental scan's changed files),
        # merged into their folder's rows when it is next unpacked or saved: 10,000 changed
        # files spread over a 200,000-file workspace unpacked every folder (40 MB) to add a row
        self._added: dict[str, dict[str, bytes]] = {}
        self._settled: set[str] | None = None  # a full scan's folders with their rows pruned
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
        fd: int | None = None
        try:
            # held open and read with ``pread``, not read whole nor mapped: a no-op full
            # scan with folder records reads only the header, and the scan after a first
            # checkpoint, which looks at every row once, does not keep the whole file
            # resident (a mapping's touched pages count in the resident set: 70 MB at
            # 500,000 files); the descriptor keeps this file's bytes even if a new cache
            # file is renamed over it (POSIX; Windows cannot rename over an open file)
            fd = open_regular(self.path)
            st = os.fstat(fd)
            # the length is read from disk: checked against the file before anything is
            # allocated from it (a pread of 4 GiB allocates 4 GiB first)
            head = os.read(fd, len(MAGIC) + 4)
            if head[:len(MAGIC)] != MAGIC or len(head) != len(MAGIC) + 4:
                raise ValueError("not a stat cache")
            pos = len(MAGIC)
            (hlen,) = _U32.unpack_from(head, pos)
            if not header_fits(hlen, st.st_size):
                raise _HeaderTooLong(hlen, st.st_size, (st.st_ino, st.st_size, st.st_mtime_ns))
            if _PREAD:
                self._file, fd = _Held(fd), None
            else:  # read whole, once its size is the one its counts say (no sparse GiBs)
                os.lseek(fd, pos + 4 + hlen, os.SEEK_SET)
                count, klen = _U32_2.unpack(os.read(fd, 8))
                if st.st_size != pos + 12 + hlen + klen + count * ROW.size:
                    raise ValueError("truncated")
                with os.fdopen(fd, "rb") as f:
                    fd = None
                    f.seek(0)
                    self._data = f.read(st.st_size)
            header = loads(self._read(pos + 4, hlen))
            pos += 4 + hlen
            count, klen = _U32_2.unpack(self._read(pos, 8))
            pos += 8
            if st.st_size != pos + klen + count * ROW.size:
                raise ValueError("truncated")
            self._keys_at, self._rows_at = pos, pos + klen
            spans = header.get("rowspans")
            self._packed = (self._check_spans(spans, count, klen) if spans is not None
                            else self._group(count, klen))
            self.dirsigs = dict(header.get("dirsigs") or {})
            self.dirtrees = self._check_trees(header.get("dirtrees") or {})
            self.dirrecs = dict(header.get("dirrecs") or {})  # absent before: none trusted
            self.identity = (st.st_ino, st.st_size, st.st_mtime_ns)
        except _HeaderTooLong as e:
            self._forget_rows()
            self._tell(*e.args)
        except (FileNotFoundError, StoreDamaged, orjson.JSONDecodeError, struct.error, TypeError,
                ValueError, AttributeError):
            self._forget_rows()  # a cache: losing it only costs a re-read
        finally:
            if fd is not None:
                os.close(fd)

    def _tell(self, hlen: int, size: int, identity: Identity) -> None:
        """Say once a process (per file as it is) that this cache is not read, and why."""
        key = (str(self.path), identity)
        if key in _told:
            return
        _told.add(key)
        import logging  # here: a checkpoint that logs nothing does not import it (~3 ms)

        logging.getLogger("turnback.store").warning(
            "the stat cache %s is not read: its header says %d bytes, more than its file "
            "(%d bytes) or %d MiB can hold. This checkpoint reads every file and writes "
            "the cache anew; nothing is lost. If this comes back, something else writes "
            "%s: find what and stop it.", self.path, hlen, size, HEADER_MAX >> 20, self.path)

    def _read(self, at: int, n: int) -> bytes:
        """``n`` bytes of the loaded file from ``at`` (ValueError if it is shorter)."""
        if self._file is not None:
            got = os.pread(self._file.fd, n, at)
        else:
            got = self._data[at: at + n]
        if len(got) != n:
            raise ValueError("the stat cache file is shorter than it said")
        return got

    def _forget_rows(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
        self._data, self._keys_at, self._rows_at = b"", 0, 0
        self._packed, self._live, self._was, self._added = {}, {}, {}, {}

    def close(self) -> None:
        """Let go of the loaded file, once done with this cache (after ``flush``)."""
        self.discard()

    @staticmethod
    def _check_spans(spans: object, count: int, klen: int) -> dict[str, Packed]:
        """The header's ``rowspans`` (folder -> [paths offset, length, first row, rows]), if
        they tile the file's paths and rows exactly, in order; else ValueError."""
        if not isinstance(spans, dict):
            raise ValueError("rowspans")
        out: dict[str, Packed] = {}
        kat = rat = 0
        for folder, span in spans.items():
            if (not isinstance(span, list) or len(span) != 4
                    or not all(type(v) is int for v in span)):
                raise ValueError("rowspans")
            koff, kl, r0, n = span
            if koff != kat or r0 != rat or kl < 0 or n <= 0:
                raise ValueError("rowspans")
            kat, rat = koff + kl + 1, r0 + n  # each folder's paths end with a NUL
            out[folder] = (koff, kl, r0, n)
        if rat != count or max(kat - 1, 0) != klen:
            raise ValueError("rowspans")
        return out

    @staticmethod
    def _check_trees(trees: object) -> dict[str, list[Any]]:
        """The header's ``dirtrees`` (folder -> [tree hash, files, bytes, entries]), if every
        entry has those types; else ValueError. The build indexes and adds them: a planted
        ``{"d": 5}`` failed every checkpoint (TypeError), and none saved the cache anew."""
        if not isinstance(trees, dict):
            raise ValueError("dirtrees")
        for tree in trees.values():
            if (type(tree) is not list or len(tree) != 4 or type(tree[0]) is not str
                    or type(tree[1]) is not int or type(tree[2]) is not int
                    or type(tree[3]) is not int):
                raise ValueError("dirtrees")
        return trees

    def _group(self, count: int, klen: int) -> dict[str, Packed]:
        """A file written before ``rowspans`` (rows in any order): its rows grouped by
        folder, once (the next save writes them grouped)."""
        if count == 0:
            return {}
        kat, rat = self._keys_at, self._rows_at
        keys = self._read(kat, klen).split(b"\0")
        data = self._read(rat, count * ROW.size)
        if len(keys) != count:
            raise ValueError("row count")
        groups: dict[str, list[int]] = {}
        for i, k in enumerate(keys):
            groups.setdefault(_folder(k.decode("utf-8", "surrogateescape")), []).append(i)
        size = ROW.size
        out: dict[str, Packed] = {}
        for folder, idx in groups.items():
            out[folder] = (b"\0".join([keys[i] for i in idx]),
                           b"".join([data[i * size: (i + 1) * size] for i in idx]))
        return out

    @property
    def files(self) -> int:
        """How many files the cache knows (without unpacking a row)."""
        n = 0
        for folder, packed in self._packed.items():
            if folder not in self._live:
                n += packed[3] if isinstance(packed[0], int) else len(packed[1]) // ROW.size
        return (n + sum(len(rows) for rows in self._live.values())
                + sum(len(rows) for rows in self._added.values()))  # (a few counted twice)

    def folder_rows(self, folder: str) -> dict[str, bytes]:
        """``folder``'s rows, path -> packed row (``ROW``), to look at and change."""
        rows = self._live.get(folder)
        if rows is None:
            rows = self._live[folder] = self._unpack(folder)
            added = self._added.pop(folder, None)
            if added:
                rows.update(added)
                self._was.pop(folder, None)
        return rows

    def _unpack(self, folder: str) -> dict[str, bytes]:
        packed = self._packed.pop(folder, None)
        if packed is None:
            return {}
        self._was[folder] = packed
        paths: list[str] = []
        raw = b""
        try:
            if isinstance(packed[0], int):
                koff, kl, r0, n = packed
                keys = self._read(self._keys_at + koff, kl)
                raw = self._read(self._rows_at + r0 * ROW.size, n * ROW.size)
            else:
                keys, raw = packed
            paths = keys.decode("utf-8", "surrogateescape").split("\0")
            sound = (len(paths) * ROW.size == len(raw)
                     and all(_folder(p) == folder for p in paths))
        except (OSError, ValueError):
            sound = False
        if not sound:
            self.dirty = True
            self._was.pop(folder, None)
            return {}  # damaged: a cache, losing a folder's rows only costs a re-read
        return dict(zip(paths, map(itemgetter(0), _RAW_ROW.iter_unpack(raw)), strict=True))

    def settle(self, folder: str, names: Iterable[str] | None) -> None:
        """A full scan has built ``folder``: its rows go back to packed form, only those of
        ``names`` kept (the files the scan found there; None: all, the folder was taken
        whole from its record). Folders a full scan does not settle are dropped at save."""
        if self._settled is not None:
            self._settled.add(folder)
        if folder in self._added:
            self.folder_rows(folder)
        rows = self._live.pop(folder, None)
        if rows is None:
            return
        if names is not None:
            prefix = f"{folder}/" if folder else ""
            keep = {prefix + n for n in names}
            if len(keep) != len(rows) or not keep.issuperset(rows):
                gone = rows.keys() - keep
                if gone:
                    rows = {p: r for p, r in rows.items() if p not in gone}
                    self.dirty = True
                    self._was.pop(folder, None)
        self._repack(folder, rows)

    def settle_whole(self, folders: Iterable[str]) -> None:
        """``settle(folder, None)`` of each of ``folders`` (taken whole from their records);
        in one step where none has rows unpacked or added (a no-op's: nothing to repack)."""
        if self._live or self._added or self._settled is None:
            for folder in folders:
                self.settle(folder, None)
            return
        self._settled.update(folders)

    def _repack(self, folder: str, rows: dict[str, bytes]) -> None:
        was = self._was.pop(folder, None)
        if was is not None:
            self._packed[folder] = was  # unchanged since unpacked
        elif rows:
            self._packed[folder] = (
                "\0".join(rows).encode("utf-8", "surrogateescape"), b"".join(rows.values()))

    def forget_unsaved_trees(self) -> None:
        """Called as a scan starts. A scan left unsaved (a refused rewind's, a prepare's)
        put its files' rows here, in memory, but its folders' trees only in
        ``new_dirtrees``: where such a tree is not the one recorded, the next scan found
        every file matching its (newer) row and took the folder's recorded, older tree
        whole, the files' old contents (a rewind then left a changed file as it was). Those
        folders' trees and records are forgotten: the scan builds them from their rows."""
        for rel, tree in self.new_dirtrees.items():
            old = self.dirtrees.get(rel)
            if old is not None and old[0] != tree[0]:
                del self.dirtrees[rel]
                self.dirrecs.pop(rel, None)

    def begin_full(self) -> None:
        """A full scan starts: it settles every folder it walks (``settle``)."""
        self._settled = set()

    def get(self, rel: str) -> bytes | None:
        """``rel``'s packed row, if any."""
        return self.folder_rows(_folder(rel)).get(rel)

    def discard(self) -> None:
        """Forget what is not saved: a checkpoint failed, so its rows may name objects that
        were never committed. The next ``load`` reads the file again."""
        self._forget_rows()
        self.dirsigs, self.dirtrees, self.dirrecs = {}, {}, {}
        self.new_dirsigs, self.new_dirtrees, self.new_dirrecs = {}, {}, {}
        self._settled = None
        self.dirty = False
        self._loaded = False
        self.identity = None
        self._saved_at = time.monotonic()

    def lookup(self, rel: str, st: os.stat_result) -> str | None:
        raw = self.get(rel)
        if raw is None:
            return None
        size, mtime, ctime, ino, mode, scan_ns, digest = ROW.unpack(raw)
        if (size == st.st_size and mtime == st.st_mtime_ns and ctime == st.st_ctime_ns
                and ino == st.st_ino and mode == st.st_mode
                and settled_before(st.st_mtime_ns, scan_ns)):
            return str(digest.hex())
        return None

    def record(self, rel: str, st: os.stat_result, digest: str, scan_ns: int) -> None:
        """Remember ``rel``'s hash as read by a scan that started at ``scan_ns``."""
        row = pack_row(st, scan_ns, digest)
        if row is not None:
            self.record_row(rel, row)

    def record_row(self, rel: str, row: bytes) -> None:
        """``record`` with the row packed already (``ROW``, by a hashing thread)."""
        folder = _folder(rel)
        live = self._live.get(folder)
        if live is not None:
            live[rel] = row
            self._was.pop(folder, None)
        else:
            self._added.setdefault(folder, {})[rel] = row
        self.dirty = True
        if self.dirrecs:
            self.dirrecs.pop(folder, None)

    def drop(self, rel: str) -> None:
        folder = _folder(rel)
        if self.folder_rows(folder).pop(rel, None) is not None:
            self._was.pop(folder, None)
            self.dirty = True
            self.dirrecs.pop(folder, None)

    def save(self, full: bool = False) -> None:
        """Persist; after a full scan (``full``), without the rows of folders it did not
        settle (gone, or ignored now): each folder it did was pruned as it was built."""
        if full:
            settled = self._settled or set()
            for folder in [f for f in (*self._packed, *self._live, *self._added)
                           if f not in settled]:
                self._packed.pop(folder, None)
                self._live.pop(folder, None)
                self._added.pop(folder, None)
                self.dirty = True
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
        self._settled = None
        self.new_dirsigs = {}
        self.new_dirtrees = {}
        self.new_dirrecs = {}
        self._pack_live()
        if not self.dirty:
            return
        if not full and time.monotonic() - self._saved_at < INCREMENTAL_SAVE_S:
            # incremental scans (a watching server) keep the cache in memory; rewriting
            # every row for a few changed files would cost more than the checkpoint
            return
        self._saved_at = time.monotonic()
        self._write()

    def _pack_live(self) -> None:
        """The folders an incremental scan looked at, back to packed form: a server's scans
        over hours touch every folder in turn (a rewind of 10,000 files spread over a
        200,000-file workspace touched all 4,000 and held 50 MB more in dicts)."""
        for folder, rows in self._live.items():
            self._repack(folder, rows)
        self._live = {}
        added, self._added = self._added, {}
        for folder, more in added.items():  # one folder unpacked at a time
            rows = self._unpack(folder)
            rows.update(more)
            self._was.pop(folder, None)
            self._repack(folder, rows)

    def _write(self) -> None:
        """The file, folder by folder: each folder's paths (NUL between them and between
        folders: the layout readers of the ungrouped file know) and rows, and where they
        lie (``rowspans``). What is unchanged since the load is copied from it as it is,
        and the file is written as it is made: never whole in memory (at 500,000 files,
        joining it held two copies of 70 MB, most of the peak of the checkpoint after the
        first)."""
        size = ROW.size
        parts: list[tuple[str, Packed]] = [*self._packed.items(), *(
            (f, ("\0".join(r).encode("utf-8", "surrogateescape"), b"".join(r.values())))
            for f, r in self._live.items() if r)]
        spans: dict[str, list[int]] = {}
        koff = r0 = 0
        for folder, packed in parts:
            if isinstance(packed[0], int):
                kl, n = packed[1], packed[3]
            else:
                kl, n = len(packed[0]), len(packed[1]) // size
            spans[folder] = [koff, kl, r0, n]
            koff += kl + 1
            r0 += n
        header = dumps({"dirsigs": self.dirsigs, "dirtrees": self.dirtrees,
                        "dirrecs": self.dirrecs, "rowspans": spans})
        klen = max(koff - 1, 0)
        head = [MAGIC, _U32.pack(len(header)), header, _U32_2.pack(r0, klen)]
        # after the write, the rows are read from the new file, not kept in memory (a
        # server's checkpoint of 10,000 files spread over the workspace left every row
        # packed in memory: 100 bytes a file); where the rows live (_live, _added) it cannot be
        keep = _PREAD and not self._live and not self._added
        try:
            fd = atomic_write_chunks(self.path, _buffered(
                chain(head, self._parts(parts, 0), self._parts(parts, 1))), fsync=False,
                keep_open=keep)
        except ValueError:  # the loaded file changed under us: a cache, start again
            self.discard()
            return
        if fd is not None:
            if self._file is not None:
                self._file.close()
            self._file, self._data = _Held(fd), b""
            self._keys_at = sum(len(h) for h in head)
            self._rows_at = self._keys_at + klen
            self._packed = {folder: (a, b, c, d) for folder, (a, b, c, d) in spans.items()}
            self._was = {}
        self.identity = None  # no longer the file on disk
        self.dirty = False

    def _parts(self, parts: list[tuple[str, Packed]], which: int) -> Iterator[bytes]:
        """The paths (``which`` 0, NUL between folders) or the rows (1) of ``parts``: the
        spans of the loaded file that follow each other there copied as one."""
        at = end = -1  # a run of the loaded file not copied yet
        gap = 1 - which  # the NUL between two folders' paths, in the file too
        for i, (_, packed) in enumerate(parts):
            if isinstance(packed[0], int):
                if which == 0:
                    start, n = self._keys_at + packed[0], packed[1]
                else:
                    start, n = self._rows_at + packed[2] * ROW.size, packed[3] * ROW.size
                if at >= 0 and start == end + gap:
                    end = start + n
                    continue
                if at >= 0:
                    yield from self._copy(at, end)
                if i and gap:
                    yield b"\0"
                at, end = start, start + n
                continue
            if at >= 0:
                yield from self._copy(at, end)
                at = end = -1
            if i and gap:
                yield b"\0"
            yield packed[which]
        if at >= 0:
            yield from self._copy(at, end)

    def _copy(self, at: int, end: int) -> Iterator[bytes]:
        while at < end:
            n = min(_CHUNK, end - at)
            yield self._read(at, n)
            at += n

    @property
    def unsaved(self) -> bool:
        """Whether ``flush`` would write: rows changed since the last save."""
        return self.dirty and self._loaded

    def flush(self) -> None:
        """Write what throttled incremental saves held back (on close)."""
        if self.unsaved:
            self._saved_at = 0.0
            self.save()
