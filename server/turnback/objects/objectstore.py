"""Content-addressed, immutable, compressed objects (git's object model).

An object's name is the BLAKE3 hash of ``<type>\\0<content>``; its file,
``objects/<2 hex>/<62 hex>``, holds the same bytes zstd-compressed. Identical
content is stored once however many checkpoints share it, and any object can be
verified by decompressing and re-hashing it. Writes are atomic (temp + rename).
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

import blake3

from ..errors import NotFound, StoreDamaged, TurnbackError
from ..fs.atomic import fsync_all, syncfs
from ..fs.reading import open_regular, read_regular
from ..fs.tempnames import TMP_PREFIX, temp_name
from . import merging, packlog
from .objfolder import create_in, object_folder, unlink_object_file
from .packlog import FRAME_MAX, FRAME_OVERHEAD, LOG_ID, LogFile, log_names
from .packlog import frames as log_frames
from .packlog import verify as verify_frame
from .packs import Loc, PackReader, PackWriter, read_index
from .recentblobs import RecentBlobs

TYPE_CHECKING = False  # not typing's: see turnback/__init__.py
if TYPE_CHECKING:
    import zstandard

BLOB = b"blob"
TREE = b"tree"
STREAM_THRESHOLD = 8 * 1024 * 1024  # larger files are hashed and compressed in chunks
LOOSE_THRESHOLD = 512 * 1024  # objects this large stay loose files even inside a batch
CHUNK = 1024 * 1024
HASH_LEN = 64
SYNC_FILES_MAX = 16  # more new object files than this: one syncfs (see ObjectStore.sync)
# The most one loose object may inflate to: far above any size cap a store is likely to have
# had, and a bound on what a damaged (or crafted) frame can make a reader allocate or write.
MAX_LOOSE = 4 << 30
# a read that finds its object's pack removed before it reads it lists the packs again, at
# most this many times in a row (each one a whole gc, merge or fold meanwhile)
MOVES_MAX = 8
INFLATE_AT_ONCE = STREAM_THRESHOLD  # frames saying they hold more are inflated chunk by chunk
_NAME = re.compile(r"[0-9a-f]{64}")
_JOIN_MAX = 64 << 10  # hash_bytes: objects up to this size are copied once, not updated into


def hash_bytes(kind: bytes, data: bytes) -> str:
    if len(data) <= _JOIN_MAX:
        # one call: a separate ``update`` costs ~1.5 us more than copying a small object
        # (a 4 KB tree: 4.7 against 6.5 us), and a small checkpoint names ~60 objects
        return blake3.blake3(kind + b"\0" + data).hexdigest()
    h = blake3.blake3(kind + b"\0")
    h.update(data)
    return h.hexdigest()


def _read_seen(fd: int, size: int) -> bytes:
    """``fd``'s first ``size`` bytes (fewer if it shrank), in one ``os.read`` unless the
    system returns less. Never past ``size``: the stat that saw it makes the file's stat
    cache row (so a file grown since is read again by the next scan) and held it under the
    size cap; read to its end, a small file made a sparse 100 GB between the look and the
    read was read whole into memory (tests/objects, tests/snapshot). A file object's
    ``read()`` would first ``fstat`` it twice and seek: 3 system calls more."""
    if size <= 0:
        return b""
    chunk = os.read(fd, size)
    if len(chunk) == size or not chunk:
        return chunk
    chunks = [chunk]
    got = len(chunk)
    while got < size and (chunk := os.read(fd, size - got)):
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def seen_chunks(f: BinaryIO, size: int) -> Iterator[bytes]:
    """``f``'s first ``size`` bytes (fewer if it shrank) in ``CHUNK``s: a large file read
    as far as the stat that saw it, as ``_read_seen`` reads a small one. Both passes of a
    stream then agree on a log appended to meanwhile (read to its end, each saw another
    length and the file was read again, and again while the appending went on)."""
    left = size
    while left > 0 and (chunk := f.read(min(CHUNK, left))):
        left -= len(chunk)
        yield chunk


def is_hash(value: object) -> bool:
    """True for an object name: 64 lowercase hex digits (what may become a path)."""
    return isinstance(value, str) and _NAME.fullmatch(value) is not None


def damaged_name(name: object, where: str) -> StoreDamaged:
    """The error for a record (``where``) naming an object by something that is not a name."""
    return StoreDamaged(f"{where} names object {str(name)[:80]!r}, which is not 64 lowercase "
                        "hex digits; the store is damaged: run 'turnback fsck'")


class ObjectStore:
    """The ``objects/`` folder of a store."""

    def __init__(self, root: Path, level: int = 3) -> None:
        self.root = root
        self.level = level
        self._local = threading.local()  # zstd contexts are not thread-safe
        self.written = 0  # objects or packs written by this process since the last sync()
        self._unsynced: list[Path] = []  # their files, for sync()
        self._unsynced_lock = threading.Lock()
        self.packs = PackReader(root / "pack", root / "log")
        self._refreshed = False
        self._writer: PackWriter | None = None
        # a finished batch's objects kept for the record that names them (``commit``):
        # written with it as one log frame, one disk wait
        self._held: PackWriter | None = None
        self._log: LogFile | None = None  # this process's object log (packlog.py)
        # the blobs this process's small batches stored, read back without a block's
        # decode (a rewind's or an undo's targets; recentblobs.py)
        self.recent = RecentBlobs()
        # a server's: held batches written as raw frames, folded at the configured level by
        # ``Store.fold_held`` in its quiet time (``packs.RAW_BLOCK``); ``unfolded``: since
        # the last fold, a frame with raw blocks went to this process's log
        self.raw_held = False
        self.unfolded = False
        self._log_prefix = os.path.join(root, "log", "")
        self._depth = 0
        self._batch_lock = threading.Lock()
        # packs ``put`` found an object in and then saw on disk, in this batch: a pack the
        # indexes still place objects in but that is gone (deleted by hand, a gc whose mark
        # was written back) must not make a checkpoint skip storing them
        self._seen_packs: set[str] = set()
        self._pack_prefix = os.path.join(root, "pack", "")  # a str: 2 us a look, not 6.6
        # asked when an object is missing: the error to give instead when the store itself
        # was replaced under this process (a link, nothing or another folder in its place:
        # every object is "missing" then, and "run fsck" the wrong advice); set by the
        # store, which holds its root's identity (store/state.py)
        self.replaced: Callable[[], TurnbackError | None] | None = None

    # -- helpers -----------------------------------------------------------------
    # zstandard is imported where it is called, not at this module's import: a no-op
    # checkpoint opens the store and reads no object (~2.3 M instructions of a fresh
    # process's start; bench/RESULTS.md, branch cold37)
    def _cctx(self) -> zstandard.ZstdCompressor:
        c = getattr(self._local, "c", None)
        if c is None:
            import zstandard

            c = self._local.c = zstandard.ZstdCompressor(level=self.level)
        return c

    def _dctx(self) -> zstandard.ZstdDecompressor:
        d = getattr(self._local, "d", None)
        if d is None:
            import zstandard

            d = self._local.d = zstandard.ZstdDecompressor()
        return d

    def path(self, name: str) -> Path:
        # the last guard: a name read from a damaged file must never reach outside objects/
        if not isinstance(name, str) or _NAME.fullmatch(name) is None:
            raise damaged_name(name, "a stored record")
        return self.root / name[:2] / name[2:]

    def _ensure_index(self) -> None:
        if not self._refreshed:
            self.packs.refresh()
            self._refreshed = True

    def _in_pack(self, name: str) -> bool:
        """Whether a known pack holds ``name`` and is still on disk.

        A batch that does not list the pack folder (``batch(refresh=False)``) trusts the
        indexes read before: without this look, content of a pack removed by hand was named
        by the next checkpoint and never stored again (tests/reliability/
        test_pack_removed_without_gc.py). One ``stat`` a pack a batch: 11-22 packs, 2-4 us each,
        in an at-once checkpoint after a rewind (whose files are all stored already), none
        in most others (bench/probes/objects/redteam8_pack_looks.py).
        """
        loc = self.packs.locate(name)
        if loc is None:
            return False
        if loc.pack in self._seen_packs:
            return True
        if loc.pack.startswith("log-"):
            there = os.path.exists(self._log_prefix + loc.pack)
        else:
            there = os.path.exists(self._pack_prefix + loc.pack + ".pack")
        if not there:
            return False
        self._seen_packs.add(loc.pack)
        return True

    def exists(self, name: str) -> bool:
        self._ensure_index()
        if self.packs.locate(name) is not None:
            return True
        for w in (self._writer, self._held):
            if w is not None and w.has(name):
                return True
        if self.path(name).exists():
            return True
        # exact: a rewind, fsck, a pull ask this (a write's look, ``_in_pack``, is not)
        return self.packs.read_rest() and self.packs.locate(name) is not None

    @contextmanager
    def batch(self, fsync: bool, refresh: bool = True, hold: bool = False) -> Iterator[None]:
        """Small objects put inside go into one new pack, or one frame of this process's
        object log when they are few (``packs.LOG_BYTES``), visible when the batch ends.

        ``refresh=False``: the pack indexes known are trusted as they are, for a caller
        that knows no gc removed a pack since they were read (``StoreState._packs_stale``).
        Another process's new pack is then not looked at (an object it holds may be
        stored twice: harmless); a pack gone under a read is read again on the miss.

        ``hold``: a batch small enough for the log is not written when it ends but kept
        (readable here) for ``commit``, which writes it with the checkpoint record that
        names it; anything else that writes (``sync``, the next batch, ``flush_held``)
        writes it first, without a record.
        """
        with self._batch_lock:
            if self._writer is None:
                self._flush_held()  # first: a failure here leaves no batch half begun
                if refresh:
                    self._refreshed = False  # other processes' packs: looked up when needed
                self._seen_packs = set()
                # raw only where the answer waits (a checkpoint's held batch), not for a
                # preparation's or an import's
                self._writer = PackWriter(self.root / "pack", self.level, in_memory=True,
                                          raw_held=self.raw_held and hold)
            self._depth += 1
        ok = False
        try:
            yield
            ok = True
        finally:
            with self._batch_lock:
                self._depth -= 1
                if self._depth == 0 and self._writer is not None:
                    w, self._writer = self._writer, None
                    small = ok and w.seal()
                    # its blobs kept only when it ends as a log frame (recentblobs.py)
                    (self.recent.keep_offered if small else self.recent.drop_offered)()
                    if small:
                        if not w.count:
                            pass
                        elif hold:
                            self._held = w
                        else:
                            self._wrote(self._log_frame(w, b"").path)  # for sync()
                    elif ok:
                        # no fsync per file here: the caller's sync() makes pack, index and
                        # loose objects durable with one syncfs before it commits
                        index = w.finish(fsync=False)
                        if index:
                            self._wrote(w.path, w.path.with_suffix(".idx"))
                            self.packs.add_index(index, w.id)
                    else:
                        w.abort()

    def close(self) -> None:
        """Close this process's object log; a later write starts a new one (a log is only
        ever appended to by the one writer that made it). The packs held open for reads
        are closed too (a later read opens them again)."""
        self.packs.close()
        log, self._log = self._log, None
        if log is not None:
            if log.untouched() and log.usable():
                # made ahead by a fold (``open_log``) and never written: not left behind
                # for every later open to list and a merge to remove an hour on
                try:
                    unlink_object_file(log.path)
                except (OSError, TurnbackError):
                    pass  # a stray like a killed writer's: merges and gc remove it
            log.close()

    def _log_frame(self, w: PackWriter, record: bytes) -> LogFile:
        """Append a sealed in-memory writer's objects (and ``record``) to this process's log
        as one frame, not synced; the caller holds ``_batch_lock``."""
        log = self._log
        if log is None or not log.usable():
            if log is not None:
                log.close()
            log = self._log = LogFile(self.root / "log")
        blocks, rows = w.frame_parts()
        _, placed = log.append(blocks, rows, record)
        self.packs.add_log_rows(log.id, placed, log.end)
        if w.raw_blocks:
            self.unfolded = True
        return log

    def open_log(self, fsync: bool) -> None:
        """Make this process's next log now, its name durable when ``fsync``, if it has none
        it may append to: after a fold removed it, the next checkpoint's frame then waits
        for no new file and folder entry (``Store.fold_held``, in the server's quiet time)."""
        with self._batch_lock:
            log = self._log
            if log is not None and log.usable():
                return
            if log is not None:
                log.close()
            log = self._log = LogFile(self.root / "log")
            if fsync:
                log.sync()

    def detach_log(self, fsync: bool) -> str | None:
        """Hand this process's log to a fold and make the next one: its id, or None when
        there is nothing to fold (no frame in it) or a held batch waits for its record
        (a checkpoint between its scan and its commit: the fold comes again later).

        The next log is made (and its name synced when ``fsync``) before the swap, so the
        swap itself holds ``_batch_lock`` for two assignments: a checkpoint that comes
        meanwhile waits for no file, no sync (``Store.fold_held``). The detached log gets
        no frame after this: only its writer appends to a log, and its writer moved on."""
        with self._batch_lock:
            log = self._log
            if log is None or log.end == 0:
                self.unfolded = False  # no frame of this process's to fold
                return None
            if self._held is not None:
                return None
        ahead = LogFile(self.root / "log")
        if fsync:
            ahead.sync()
        with self._batch_lock:
            if self._held is not None or self._log is not log:
                gone: LogFile | None = ahead  # a write came between: fold another time
            else:
                gone, self._log = log, ahead
                self.unfolded = False
        if gone is ahead:
            try:
                unlink_object_file(ahead.path)
            except (OSError, TurnbackError):
                pass  # an empty stray: a merge or gc removes it (``STRAY_AGE_S``)
            ahead.close()
            return None
        log.close()
        return log.id

    def fold_log(self, log: str, fsync: bool) -> tuple[int, int] | None:
        """Fold one log no writer appends to any more (``detach_log``), with the small packs
        a merge would leave beside it (``merging.choose``), into one new pack, keeping every
        object; the (1, packs) folded, or None when the log held no frame. The caller holds
        the gc lock shared (no gc nor merge runs: they take it exclusively) and the fold
        lock (no other process's fold takes the same packs), and has put the log's
        records into ``checkpoints.jsonl`` durably. Other processes' logs are left to the
        merges: a live writer may be appending to one, and only the exclusive gc lock
        keeps a frame from going with its removed log."""
        self.packs.refresh(whole=True)  # where each log's frames end (``_unread_frames``)
        rows = self.packs.listing(packs=False, only=log).get(log)
        if not rows or self._unread_frames(log):
            return None  # a log read up to damage stays whole, for fsck (as a merge's)
        return 1, self._merge_chosen({log: rows}, fsync)

    def raw_logs(self) -> list[str]:
        """The logs, other than this process's own, that hold a raw frame (a server killed
        before its fold, ``Store.fold_left``): 12 bytes read a block, the first raw one
        ending a log's look."""
        own = self._log.id if self._log is not None else None
        folder = self.root / "log"
        return [n for n in log_names(folder) if n != own and packlog.holds_raw(folder / n)]

    def _flush_held(self) -> None:
        """Write a held batch without a record (its checkpoint was not committed: a
        refused rewind's scan, which stays the next scan's base). Under ``_batch_lock``."""
        w, self._held = self._held, None
        if w is not None:
            log = self._log_frame(w, b"")
            self._wrote(log.path)

    @property
    def holds_batch(self) -> bool:
        """Whether a batch is held back (``flush_held`` would write it)."""
        return self._held is not None

    def flush_held(self) -> None:
        """Write a held batch now (before a stat cache that names its objects is saved)."""
        with self._batch_lock:
            self._flush_held()

    def commit(self, record: bytes, fsync: bool) -> bool:
        """Write the held batch and ``record`` (a checkpoint's JSON line, which names its
        objects) as one log frame, durable after one wait when ``fsync``; False, writing
        nothing, when no batch is held (nothing new was stored, or it went to a pack).

        Loose objects written since the last ``sync`` (large files) are synced first: the
        record must never be on disk before an object it names.
        """
        with self._batch_lock:
            log = self._commit_frame(record, fsync)
            if log is None:
                return False
            if fsync:
                log.sync()
            else:
                self._wrote(log.path)
            return True

    def commit_unsynced(self, record: bytes, fsync: bool
                        ) -> tuple[list[Path], list[Path]] | None:
        """``commit`` without the frame's own wait: the files and folders whose sync makes
        the frame durable, for the caller to sync in its own wait (a rewind's journal,
        ``OpLog.begin``) before anything outside the frame names ``record``; None as
        ``commit``'s False. What the frame's objects may lean on (loose objects, earlier
        frames without a record) is still synced first, as in ``commit``."""
        with self._batch_lock:
            log = self._commit_frame(record, fsync)
            if log is None:
                return None
            if not fsync:
                self._wrote(log.path)
                return [], []
            # the folder's entry, when the log is new; ``named`` stays False (the next
            # frame's sync does the folder again) since this wait is not ours to see done
            return [log.path], [] if log.named else [log.folder]

    def _commit_frame(self, record: bytes, fsync: bool) -> LogFile | None:
        """``commit``'s frame, appended unsynced; None when there is none (see there).
        Under ``_batch_lock``."""
        w, self._held = self._held, None
        if w is None:
            return None
        if w.held_bytes() + len(record) + FRAME_OVERHEAD > FRAME_MAX:
            # a record too large for a frame (thousands of skipped files): a pack,
            # and the record to checkpoints.jsonl with its own wait, as before
            index = w.finish(fsync=False)
            self._wrote(w.path, w.path.with_suffix(".idx"))
            self.packs.add_index(index, w.id)
            if fsync:
                self.sync(keep_held=True)
            return None
        if fsync:
            self.sync(keep_held=True)
        return self._log_frame(w, record)

    def _tmp(self, final: Path) -> str:
        return temp_name(final.name[:8])

    # -- writing -------------------------------------------------------------------
    def put(self, kind: bytes, data: bytes, name: str | None = None) -> str:
        """Store ``data`` as an object of ``kind``; return its name. Idempotent.

        ``name``, when given, is ``hash_bytes(kind, data)`` computed by the caller.
        """
        if name is None:
            name = hash_bytes(kind, data)
        self._ensure_index()
        w = self._writer
        if w is not None and len(data) < LOOSE_THRESHOLD:
            if not self._in_pack(name):
                raw = kind + b"\0" + data
                w.add(name, raw)  # which skips a name it holds already
                if kind == BLOB:
                    self.recent.offer(name, raw)  # kept if the batch ends small
            return name
        final = self.path(name)
        if self._in_pack(name) or final.exists():
            return name
        payload = self._cctx().compress(kind + b"\0" + data)
        with object_folder(final.parent) as folder:  # no link followed (objfolder.py)
            tmp = self._tmp(final)
            with os.fdopen(create_in(folder, tmp), "wb") as f:
                f.write(payload)
            folder.rename(tmp, final.name)
        self._wrote(final)
        return name

    def put_file(self, path: Path | str, size: int) -> str:
        """Store the file at ``path`` as a blob, streaming when it is large. ``size``: as
        its ``lstat`` saw it; a small file is stored up to that size (``_read_seen``)."""
        if size < STREAM_THRESHOLD:
            fd = open_regular(path)
            try:
                data = _read_seen(fd, size)
            finally:
                os.close(fd)
            return self.put(BLOB, data)
        h = blake3.blake3(BLOB + b"\0")
        with os.fdopen(open_regular(path), "rb") as f:
            for chunk in seen_chunks(f, size):
                h.update(chunk)
        name = h.hexdigest()
        final = self.path(name)
        if final.exists():
            return name
        tmp = self._tmp(final)
        # Re-hash while compressing, so a file changed between the passes is caught.
        check = blake3.blake3(BLOB + b"\0")
        with object_folder(final.parent) as folder:  # no link followed (objfolder.py)
            with (
                os.fdopen(open_regular(path), "rb") as src,
                os.fdopen(create_in(folder, tmp), "wb") as dst,
                self._cctx().stream_writer(dst, closefd=False) as w,
            ):
                w.write(BLOB + b"\0")
                for chunk in seen_chunks(src, size):
                    check.update(chunk)
                    w.write(chunk)
            if check.hexdigest() == name:
                folder.rename(tmp, final.name)
            else:
                folder.unlink(tmp)
        if check.hexdigest() != name:
            return self.put_file(path, os.stat(path).st_size)  # changed under us: once more
        self._wrote(final)
        return name

    def _wrote(self, *paths: Path) -> None:
        with self._unsynced_lock:
            self.written += 1
            self._unsynced.extend(paths)

    def sync(self, keep_held: bool = False) -> None:
        """Make written objects durable before a checkpoint that names them is committed.

        ``keep_held``: a held batch stays for ``commit`` (else it is written first).

        A few files (a checkpoint's pack and index): an fsync each, and one per folder for
        their names, all waited for together (``fsync_all``: about the cost of one).
        ``syncfs`` would also flush every other process's unwritten data on the same file
        system (a build's output, a shadow git's 5 MB index), which made a 10-file
        checkpoint wait 3 ms more in the benchmark. Many files (a first
        checkpoint's large files stay loose): one ``syncfs`` instead.
        """
        if not keep_held and self._held is not None:
            self.flush_held()
        with self._unsynced_lock:
            paths, self._unsynced = self._unsynced, []
            written, self.written = self.written, 0
        if not written:
            return
        log = self._log
        if len(paths) > SYNC_FILES_MAX and syncfs(self.root):
            if log is not None:
                log.named = True
            return
        paths = sorted(set(paths))
        dirs = {p.parent for p in paths}
        # a loose object's new folder; a log's folder is synced for its name only once
        dirs |= {d.parent for d in dirs if d.name not in ("pack", "log")}
        if log is not None and log.named:
            dirs.discard(log.folder)
        self._fsync_present(paths, sorted(dirs))
        if log is not None and log.path in paths:
            log.named = True

    def _fsync_present(self, paths: list[Path], dirs: list[Path]) -> None:
        """``fsync_all``, leaving out a pack of ours that is gone: another process's fold
        runs under the gc lock held shared, as this writer holds it, and may take a small
        pack written here before its sync (``merging.choose``); it copies it into its own
        pack, synced, before it removes it (``fold_log``), so there is nothing left to sync
        of it. Under that lock nothing else removes a pack (gc and merges take it
        exclusively); before, the checkpoint failed on FileNotFoundError (redteam37)."""
        pack = self.root / "pack"
        while True:
            try:
                fsync_all(paths, dirs)
                return
            except FileNotFoundError:
                left = [p for p in paths if p.parent != pack or os.path.lexists(p)]
                if len(left) == len(paths):
                    raise
                paths = left

    # -- reading ---------------------------------------------------------------------
    def _packed(self, name: str) -> bytes | None:
        self._ensure_index()
        for attempt in range(MOVES_MAX + 1):
            loc = self.packs.locate(name)
            gone = False
            if loc is not None:
                try:
                    return self.packs.read(loc)
                except FileNotFoundError:
                    gone = True  # repacked under us (gc, a merge, a fold)
            for w in (self._writer, self._held):
                if w is not None:
                    own = w.read_own(name)
                    if own is not None:
                        return own
            if attempt > 0 and not gone:
                return None
            # listed again: and again while the pack found there goes before its read (a
            # server folds at each quiet moment: two folds in a row made this NotFound,
            # redteam37)
            self.packs.refresh()
            # a log's frames past LOG_EAGER (packs.py), for a name not loose either: a
            # large object is a loose file, and each process's first read of one read a
            # planted log whole here (redteam19)
            if (attempt == 0 and self.packs.locate(name) is None
                    and not self.path(name).exists()):
                self.packs.read_rest()
        return None

    def _raw(self, name: str) -> bytes:
        """``<type>\\0<content>`` of object ``name``, checked against the name.

        Loose and packed alike: nothing read from the store reaches the workspace, the
        screen or another object before its hash matches.
        """
        if not isinstance(name, str) or _NAME.fullmatch(name) is None:
            raise damaged_name(name, "a stored record")  # ``path``'s guard, for every read
        try:
            raw = self._packed(name)
        except StoreDamaged as exc:
            return self._other_copy(name, exc)
        packed = raw is not None
        if raw is None:
            # the loose file's path made only when it is read: made before each packed
            # read too, it was ~30 k of a cold read's ~122 k Python instructions
            # (bench/target_reads.py; bench/RESULTS.md, branch hot33)
            path = self.path(name)
            try:
                # a zstd frame is never much larger than what it holds
                payload = read_regular(path, limit=MAX_LOOSE + (MAX_LOOSE >> 7) + (1 << 20))
            except FileNotFoundError:
                instead = self.replaced() if self.replaced is not None else None
                if instead is not None:
                    raise instead from None
                raise NotFound(
                    f"object {name[:12]} is missing from {self.root}; run 'turnback fsck' to "
                    "see which checkpoints are affected"
                ) from None
            raw = self._inflate(payload, name)
        if blake3.blake3(raw).hexdigest() != name:
            if packed:  # the copy the index placed: another may be intact
                return self._other_copy(name, None)
            raise StoreDamaged(f"object {name[:12]} in {self.root} does not match its hash (torn "
                               "or altered); nothing was changed: run 'turnback fsck'")
        return raw

    def _other_copy(self, name: str, why: StoreDamaged | None) -> bytes:
        """``name``'s bytes from another pack, log or its loose file, when the copy the
        index placed it in is damaged: an object stored twice (two processes at once, a
        log copied back) is lost only when every copy is (tests/reliability/
        test_damaged_duplicate_log_frame.py). Reads every index and log once: damage only."""
        for rows in self.packs.listing().values():
            loc = rows.get(name)
            if loc is None:
                continue
            try:
                raw = self.packs.read(loc)
            except (OSError, StoreDamaged):
                continue
            if blake3.blake3(raw).hexdigest() == name:
                return raw
        try:
            payload = read_regular(self.path(name),
                                   limit=MAX_LOOSE + (MAX_LOOSE >> 7) + (1 << 20))
            raw = self._inflate(payload, name)
            if blake3.blake3(raw).hexdigest() == name:
                return raw
        except (OSError, StoreDamaged):
            pass
        if why is not None:
            raise why
        raise StoreDamaged(f"object {name[:12]} in {self.root} does not match its hash (torn "
                           "or altered); nothing was changed: run 'turnback fsck'")

    def _inflate(self, payload: bytes, name: str) -> bytes:
        """A loose object's bytes, never more than its frame says it holds nor ``MAX_LOOSE``."""
        import zstandard

        def damaged(why: str) -> StoreDamaged:
            return StoreDamaged(f"object {name[:12]} in {self.root} is corrupt ({why}); run "
                                "'turnback fsck'")
        try:
            size = zstandard.frame_content_size(payload)  # -1: not said (streamed writes)
            if size > MAX_LOOSE:
                raise damaged(f"it says it holds {size} bytes, more than any object may")
            if 0 <= size <= INFLATE_AT_ONCE:
                # exactly ``size`` bytes are allocated; a frame holding more fails
                return self._dctx().decompress(payload)
            limit = MAX_LOOSE if size < 0 else size
            reader = self._dctx().stream_reader(payload)
            parts: list[bytes] = []
            got = 0
            while chunk := reader.read(CHUNK):
                got += len(chunk)
                if got > limit:
                    raise damaged(f"it inflates past {limit} bytes")
                parts.append(chunk)
        except zstandard.ZstdError as exc:
            raise damaged(str(exc)) from exc
        if size >= 0 and got != size:
            raise damaged(f"it holds {got} bytes, not the {size} it says")
        return b"".join(parts)

    def warm(self, name: str) -> None:
        """Read a packed object into the block cache (loose objects are left alone)."""
        self._ensure_index()
        loc = self.packs.locate(name)
        if loc is not None:
            try:
                self.packs.read(loc)
            except FileNotFoundError:
                pass  # repacked by gc meanwhile

    def get(self, kind: bytes, name: str) -> bytes:
        """The content of object ``name``, checked to be of ``kind``."""
        raw = self.recent.get(name) if kind == BLOB else None
        if raw is None:
            raw = self._raw(name)
        head, sep, data = raw.partition(b"\0")
        if not sep or head != kind:
            raise StoreDamaged(
                f"object {name[:12]} is not a {kind.decode()} (found {head[:8]!r}); run "
                "'turnback fsck'"
            )
        return data

    def verify(self, name: str) -> str | None:
        """None when the object is intact, else what is wrong with it."""
        try:
            self._raw(name)  # checks the hash
        except (NotFound, StoreDamaged) as exc:
            return exc.message
        return None

    def copy_blob_to(self, name: str, fd: int, size: int | None = None) -> int:
        """Write blob ``name``'s content to ``fd`` in chunks; return bytes written.

        The caller must discard what was written when this raises: the hash of a streamed
        object is known only at its end. ``size`` (the tree entry's) bounds what a damaged
        object can write; without it, what its frame says or ``MAX_LOOSE``.
        """
        path = self.path(name)
        if not path.exists():
            data = self.get(BLOB, name)  # packed objects are small: whole is fine
            view = memoryview(data)
            while view:
                n = os.write(fd, view)
                view = view[n:]
            return len(data)
        try:
            src = os.fdopen(open_regular(path), "rb")
        except FileNotFoundError:
            raise NotFound(f"object {name[:12]} is missing from {self.root}; run 'turnback "
                           "fsck'") from None
        import zstandard

        total = 0
        h = blake3.blake3()
        with src:
            try:
                said = zstandard.frame_content_size(src.read(18))  # a frame header's most
                src.seek(0)
                limit = MAX_LOOSE if said < 0 else min(said, MAX_LOOSE)
                if size is not None:
                    limit = min(limit, size + len(BLOB) + 1)
                reader = self._dctx().stream_reader(src)
                header = b""
                while b"\0" not in header:
                    more = reader.read(64)
                    if not more or len(header) > 64:
                        raise StoreDamaged(f"object {name[:12]} is truncated or not a blob; "
                                           "run 'turnback fsck'")
                    header += more
                head, _, rest = header.partition(b"\0")
                if head != BLOB:
                    raise StoreDamaged(f"object {name[:12]} is not a blob; run 'turnback fsck'")
                h.update(head + b"\0")
                got = len(header)
                chunk = rest
                while True:
                    if chunk:
                        h.update(chunk)
                        view = memoryview(chunk)
                        while view:
                            n = os.write(fd, view)
                            view = view[n:]
                        total += len(chunk)
                    chunk = reader.read(CHUNK)
                    if not chunk:
                        break
                    got += len(chunk)
                    if got > limit:
                        raise StoreDamaged(f"object {name[:12]} is corrupt (it inflates past "
                                           f"{limit} bytes); run 'turnback fsck'")
            except zstandard.ZstdError as exc:
                raise StoreDamaged(f"object {name[:12]} is corrupt ({exc}); run 'turnback "
                                   "fsck'") from exc
        if h.hexdigest() != name:
            raise StoreDamaged(f"object {name[:12]} does not match its hash (torn or altered); "
                               "run 'turnback fsck'")
        return total

    def all_names(self) -> Iterator[tuple[str, int]]:
        """Every object name with its on-disk size (stray temp files excluded).

        A packed object's size is its share of its pack file's size.
        """
        if not self.root.exists():
            return
        self.packs.refresh(whole=True)  # gc and fsck: every log's objects
        packed = self.packs.names()
        raw_total: dict[str, int] = {}
        for loc in packed.values():
            raw_total[loc.pack] = raw_total.get(loc.pack, 0) + loc.length
        ratio = {}
        for pack, total in raw_total.items():
            try:
                ratio[pack] = self.packs.path_of(pack).stat().st_size / max(1, total)
            except FileNotFoundError:
                ratio[pack] = 0.0
        for name, loc in packed.items():
            yield name, int(loc.length * ratio[loc.pack]) + 1
        for sub in os.scandir(self.root):
            if not sub.is_dir() or len(sub.name) != 2:
                continue
            for entry in os.scandir(sub.path):
                if entry.name.startswith(TMP_PREFIX):
                    continue
                try:
                    yield sub.name + entry.name, entry.stat().st_size
                except FileNotFoundError:
                    continue

    def stray_temps(self) -> Iterator[Path]:
        if not self.root.exists():
            return
        for sub in os.scandir(self.root):
            if sub.is_dir():
                names = os.listdir(sub.path)
                for n in names:
                    if n.startswith(TMP_PREFIX):
                        yield Path(sub.path) / n
                if sub.name == "pack":
                    # a pack without its index: a writer died before finishing it
                    idx = {n[:-4] for n in names if n.endswith(".idx")}
                    for n in names:
                        if n.endswith(".pack") and n[:-5] not in idx:
                            yield Path(sub.path) / n
                if sub.name == "log":
                    # a log without one complete frame: its writer died in its first write
                    self.packs.refresh()
                    known = set(self.packs.logs())
                    for n in names:
                        if LOG_ID.fullmatch(n) and n not in known:
                            yield Path(sub.path) / n

    def check_logs(self) -> list[tuple[str, str]]:
        """Each log's frames whose bytes do not match their hash: (log, what is wrong).
        Bytes after a log's last complete frame are a write that did not finish: not
        listed (no checkpoint was answered from them; gc merges the log and drops them)."""
        out = []
        folder = self.root / "log"
        for name in log_names(folder):
            try:
                fd = open_regular(folder / name)
            except FileNotFoundError:
                continue  # removed by a gc meanwhile
            except StoreDamaged:
                continue  # a link or a FIFO: the pack reader names it (packs.damaged)
            except OSError as exc:
                out.append((name, f"cannot be read ({exc.strerror or exc})"))
                continue
            try:
                size = os.fstat(fd).st_size
                if size > packlog.READ_MAX:
                    out.append((name, f"is {size} bytes, longer than any log Turnback writes "
                                      f"({packlog.READ_MAX}): nothing past that is read; move it "
                                      "out of the store if you did not put it there"))
                found, end = log_frames(fd, 0, size)
                if packlog.refused_at(fd, end, size):
                    out.append((name, f"the frame at byte {max(end, len(packlog.LOG_MAGIC))} "
                                      "holds no object, which no Turnback writes: nothing from "
                                      "there on is read; move the log out of the store if you "
                                      "did not put it there"))
                for frame in found:
                    if not verify_frame(fd, frame):
                        out.append((name, f"the frame at byte {frame.pos} does not match its "
                                          "hash (altered or torn)"))
            finally:
                os.close(fd)
        return out

    def is_loose(self, name: str) -> bool:
        return self.path(name).exists()

    def repack(self, keep: set[str], fsync: bool) -> int:
        """Rewrite every pack holding garbage so it holds only ``keep``; return bytes freed.

        Runs under the gc lock: nobody else writes or removes packs meanwhile.
        """
        self.packs.refresh()
        # each pack's and log's own rows: an object stored twice is listed under both, so
        # a pack rewritten without it never drops the one intact copy of an object the
        # index places in a damaged one
        by_pack = {p: rows for p, rows in self.packs.listing().items() if rows}
        # logs are always merged: a gc leaves none behind (their records are in
        # checkpoints.jsonl, restored from them first: ``CheckpointIndex.restore``)
        dirty = [p for p, rows in by_pack.items()
                 if p.startswith("log-") or any(n not in keep for n in rows)]
        if len(by_pack) > 8:
            dirty = list(by_pack)  # many small packs: merge them all into one
        return self._rewrite(dirty, by_pack, keep, fsync)

    def merge_logs(self, fsync: bool, stray_age: float) -> tuple[int, int] | None:
        """Fold every log, and the small packs a merge would leave beside a larger one
        (``merging.choose``), into one new pack, keeping every object; the (logs, packs)
        folded, or None when there was no log with a frame. The caller holds the gc lock
        exclusively (no frame is being written) and has put every record of the logs
        into ``checkpoints.jsonl`` durably first (``Store.merge_logs``). No object is
        removed, so no gc mark: a process whose index still places an object in a log
        merged away reads the folder again when the read misses, and stores it again
        (a second copy, harmless) when a write's look finds the log gone
        (``_in_pack``).

        A log with no complete frame older than ``stray_age`` seconds (its writer was
        killed in its first write, or it was put there by hand) is removed, as gc does:
        else it would count toward every later merge's trigger; not one whose first frame
        is broken and that ends in a complete frame (``_unread_frames``)."""
        self.packs.refresh(whole=True)  # where each log's frames end (``_unread_frames``)
        listing = self.packs.listing(packs=False)
        now = time.time()
        for log, rows in listing.items():
            # a log that reads as no frame but ends in a complete one has its first frame
            # damaged: not a writer's leftover, kept with the frames after it
            if rows or self._unread_frames(log):
                continue
            path = self.packs.path_of(log)
            try:
                if now - os.lstat(path).st_mtime > stray_age:
                    unlink_object_file(path)
            except OSError:
                pass
        by_pack = {p: rows for p, rows in listing.items() if rows}
        kept = [log for log in by_pack if self._unread_frames(log)]
        if kept:
            # a log kept as it is (``_rewrite``) gave its objects to a pack at its first
            # merge: taken again at each, every pack left beside the next held one more
            # copy (tests/objects/test_kept_log_not_copied_again.py); read only when one is kept
            held: set[str] = set()
            for pack in self.packs.sizes():
                try:
                    held.update(read_index(self.root / "pack" / f"{pack}.idx"))
                except (OSError, StoreDamaged):
                    continue
            for log in kept:
                by_pack[log] = {n: loc for n, loc in by_pack[log].items() if n not in held}
                if not by_pack[log]:
                    del by_pack[log]
        if not by_pack:
            return None
        logs = len(by_pack)
        return logs, self._merge_chosen(by_pack, fsync)

    def _merge_chosen(self, by_pack: dict[str, dict[str, Loc]], fsync: bool) -> int:
        """Rewrite the logs in ``by_pack`` (each with rows), and the small packs a merge
        would leave beside them (``merging.choose``), into one new pack; the number of
        packs taken. One path for a fold and a merge, so both choose and skip alike."""
        logs = {p: len(rows) for p, rows in by_pack.items()}
        # the packs chosen by their files' sizes, and only their indexes read: a store
        # of 10,000 hooks' objects has ~30 packs, ~75,000 rows (38 ms a merge, read all)
        dirty = merging.choose(logs, self.packs.sizes())
        for pack in dirty[len(logs):]:
            try:
                by_pack[pack] = read_index(self.root / "pack" / f"{pack}.idx")
            except (OSError, StoreDamaged):
                by_pack[pack] = {}  # unreadable: left as it is (fsck names it)
        dirty = [p for p in dirty if by_pack[p]]
        self._rewrite(dirty, by_pack, None, fsync)
        return len(dirty) - len(logs)

    def _rewrite(self, dirty: list[str], by_pack: dict[str, dict[str, Loc]],
                 keep: set[str] | None, fsync: bool) -> int:
        """Copy the objects of the ``dirty`` packs and logs that are in ``keep`` (None:
        all of them) into one new pack, then remove them; return the bytes freed."""
        if not dirty:
            return 0
        self.packs.refresh(whole=True)  # where each log's frames end (``_unread_frames``)
        folder = self.root / "pack"
        try:
            sizes = {p: self.packs.path_of(p).stat().st_size for p in dirty}
        except FileNotFoundError as exc:  # a pack removed while its index stayed
            raise StoreDamaged(f"pack {Path(str(exc.filename)).name} is missing (its index is "
                               "there); run 'turnback fsck' to see what it held") from None
        writer = PackWriter(folder, self.level)
        failed: dict[str, list[str]] = {}  # pack -> kept objects it could not give
        given: set[str] = set()  # kept objects copied into the new pack
        try:
            for pack in dirty:
                rows = by_pack[pack]
                # block by block, each from its last object: ``PackReader.read`` inflates
                # a block up to the object asked for (64 KiB further at least) and again
                # from its start for one further in, so the last one first inflates it
                # once (a merge's reads in name order: 10,965 inflations for 29,785
                # objects, 0.4 s of the 2.4 s of 54 merges)
                for name in sorted(rows, key=lambda n: (rows[n].block_off, -rows[n].off)):
                    if (keep is not None and name not in keep) or name in given:
                        continue
                    try:
                        raw = self.packs.read(rows[name])
                        if blake3.blake3(raw).hexdigest() != name:
                            raise StoreDamaged(f"object {name[:12]} does not match its hash")
                    except StoreDamaged:
                        failed.setdefault(pack, []).append(name)
                        continue
                    writer.add(name, raw)
                    given.add(name)
            index = writer.finish(fsync)
        except BaseException:
            writer.abort()
            raise
        # known here before the logs and packs it replaces go: a read of this process
        # between the two finds its objects (a fold runs beside this process's writes)
        self.packs.add_index(index, writer.id)
        # damaged bytes are never copied into a new pack; a pack holding an object no
        # other copy gave (nor a pack left as it is holds) stays as it is, for fsck to
        # report (copies of its good objects are harmless)
        kept_whole: list[str] = []
        if failed:  # damage only: every copy of every pack and log, read now
            elsewhere = given.union(*(rows for p, rows in self.packs.listing().items()
                                      if p not in dirty))
            kept_whole = [p for p, names in failed.items()
                          if any(n not in elsewhere for n in names)]
        # a log read up to a broken frame with intact frames after it (damage in its
        # middle, not a write that did not finish): what lies past the damage was never
        # read, so the log stays as it is (fsck names it) rather than going with them
        kept_whole += [p for p in dirty if p.startswith("log-") and self._unread_frames(p)]
        after = writer.path.stat().st_size if index else 0
        before = sum(n for p, n in sizes.items() if p not in kept_whole)
        for pack in dirty:
            if pack in kept_whole:
                continue
            if pack.startswith("log-"):
                try:
                    unlink_object_file(self.packs.path_of(pack))
                except OSError:
                    # open elsewhere where that forbids it (Windows): its objects are in
                    # the new pack too, a second copy; the next merge takes it again
                    pass
                continue
            unlink_object_file(folder / f"{pack}.idx")  # index first: readers stop here
            unlink_object_file(folder / f"{pack}.pack")
        self.packs.refresh()
        return before - after

    def _unread_frames(self, log: str) -> bool:
        """Whether ``log`` ends in a complete frame past where its frames were read from
        its start (``PackReader.refresh``): a frame in between is broken, so the frames
        after it were never read. A log that cannot be opened counts as one."""
        end = self.packs.log_end(log)
        try:
            fd = open_regular(self.packs.path_of(log))
        except (OSError, StoreDamaged):
            return True
        try:
            size = os.fstat(fd).st_size
            if size <= end:
                return False
            if size > packlog.READ_MAX or packlog.refused_at(fd, end, size):
                return True  # bytes no reader takes, or frames no writer makes: for fsck
            frame = packlog.frame_ending_at(fd, size)
            return frame is not None and frame.pos >= end
        finally:
            os.close(fd)

    def remove(self, name: str) -> int:
        p = self.path(name)
        try:
            size = p.stat().st_size
            unlink_object_file(p, missing_ok=False)
            return size
        except FileNotFoundError:
            return 0
