"""Pack files: many small objects in one file, compressed together in blocks.

A first checkpoint of 50,000 files would otherwise create 50,000 object files
(one file-system entry and one 4 KB block each, however small). Objects under
``LOOSE_THRESHOLD`` go instead into a pack written by one checkpoint:

- ``pack-<id>.pack``: ``TBPACK1\\n`` then blocks, each one zstd frame holding the
  concatenated objects (``<type>\\0<content>``) of up to ``BLOCK_RAW`` bytes —
  files compressed together share context, as in a solid archive.
- ``pack-<id>.idx``: ``TBIDX1\\n``, a count, then per object, sorted by name:
  32-byte name, block offset (u64), block length (u32), offset in block (u32),
  length (u32).

The index is written atomically after the pack is complete and durable; a pack
without an index is an interrupted write, ignored by readers and removed by gc.

A writer keeps its blocks in memory until they pass ``LOG_BYTES``: a small batch (a
small checkpoint) goes whole into one frame of the object log instead (``packlog.py``),
a large one becomes a pack.
"""

from __future__ import annotations

import os
import re
import struct
import sys
import threading
from array import array
from bisect import bisect_left, bisect_right
from collections import OrderedDict
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO, NamedTuple

from ..errors import StoreDamaged
from ..fs.atomic import fsync_dir
from ..fs.osflags import O_BINARY
from ..fs.reading import open_regular, read_regular
from ..fs.replacing import replace_file
from .heldfiles import HeldFiles
from .objfolder import create_in, object_folder, unlink_object_file
from .packlog import LOG_ID, LOG_MAGIC, frames, log_names
from .packlog import _rebase as rebase_rows

TYPE_CHECKING = False  # not typing's: see turnback/__init__.py
if TYPE_CHECKING:
    import zstandard

PACK_MAGIC = b"TBPACK1\n"
IDX_MAGIC = b"TBIDX1\n"
# Raw bytes per block: a read decompresses its block up to the object it wants, so
# smaller blocks make reads cheaper at some cost in ratio. A rewind's targets are mostly
# originals from the first checkpoint's pack, one cold block each: on SPEC's workspace a
# cold read costs 0.08 ms of CPU with 64 KiB blocks against 0.14-0.18 ms with 256 KiB, for
# a store 5.7% larger (133.3 MB against 126.1; bench/probes/objects/block_size.py,
# bench/RESULTS.md).
# Packs written with other sizes (256 KiB, 1 MiB before) read the same. 32 KiB cut an at-once
# rewind's reads by 31% of their instructions (rewind26) but made the store after a first
# checkpoint and 100 x 10 files larger than shadow git's .git by apparent size (141.7 MB
# against 140.5; 138.9 against 140.6 at 64 KiB: bench/run.py, bench/RESULTS.md): not kept.
BLOCK_RAW = 64 << 10
# A file block's zstd frame is cut into zstd blocks at the first object end past each this
# many bytes (``_in_parts``): zstd decodes a block whole, so a read that stops at its
# object's end decodes the blocks up to it, not the frame's rest: a cold read's zstd
# instructions -31% (the small bench workspace), SPEC's first pack 0.8% smaller, its
# compression +11% (bench/RESULTS.md, branch ``rewind29``). Readers take any frame: no
# format change.
SUB_BLOCK = 8 << 10
CACHE_BYTES = 16 << 20  # decompressed blocks kept for the next reads
TREE_LEVEL = -1  # zstd level of tree blocks (see PackWriter)
# The most a log frame's last, partial file block is compressed at (see PackWriter._level)
HELD_LEVEL = 1
# ... and so are its other file blocks while the batch's blocks so far stay under this: a small
# checkpoint's ~65 KB of files fill one 64 KiB block and start a second
HELD_BYTES = 256 << 10
# ... and its tree blocks at this level: ~35% fewer instructions than TREE_LEVEL for ~11%
# more tree bytes until a merge packs them again (an at-once checkpoint's 18-60 folders,
# ~40-60 KB: 0.33 M of its ~9 M instructions, bench/RESULTS.md, branch ``atonce26``)
HELD_TREE_LEVEL = -5
# A writer made with ``raw_held`` (a server, which folds its log at the configured level in
# its quiet time after the answer: ``Store.fold_held``) writes a held batch's blocks
# as zstd frames of raw blocks instead, readable as any other: no compression on the
# answer's path (level 1 was ~2.3 M of an at-once checkpoint's ~8.4 M instructions,
# bench/RESULTS.md, branch ``atonce26``). A raw zstd block holds at most 128 KiB.
RAW_BLOCK = 128 << 10
_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
# a single segment (no window descriptor), a 4-byte content size, no checksum, no dictionary
_RAW_HEADER = 0xA0
_ENTRY = struct.Struct(">32sQIII")
_IDX_START = len(IDX_MAGIC) + 4
# indexes with more entries stay as bytes (bisected); smaller ones go into one dict
MAX_INDEX = 1 << 30  # an index of 20 million objects; a larger one is no index of ours
SORTED_MIN = 4096
# The most a block may inflate to, and so the end of any object in it: writers close a block
# at BLOCK_RAW (256 KiB and 1 MiB in earlier versions) plus at most one object under 512 KiB.
# A damaged index or block costs a reader at most this much memory.
BLOCK_MAX = 16 << 20
# The shortest object stored: its type and NUL (``blob\0``, an empty file). A shorter
# index row is damage.
MIN_OBJECT = len(b"blob\0")
PACK_ID = re.compile(r"pack-[0-9]+-[0-9a-f]{16}")  # PackWriter's ids; names of .pack and .idx
# A writer's blocks stay in memory up to this many compressed bytes and SORTED_MIN objects
# (a small checkpoint: ~50-200 KB, ~70 objects); past either it writes a pack instead
LOG_BYTES = 8 << 20
# frames of a log a refresh takes in at its first look: the rest only once an object is
# asked for and found nowhere else (``read_rest``). A server's log holds a frame a
# checkpoint (~1 KB), a hook's one; a log planted with 297,000 one-object frames (32 MiB)
# cost every process's first object read 1.3 s and 165 MiB (bench/RESULTS.md, trust19)
LOG_EAGER = 4096
assert len(LOG_MAGIC) == len(PACK_MAGIC)  # a block starts at byte 8 or later in both


class Loc(NamedTuple):
    pack: str  # pack id
    block_off: int
    block_len: int
    off: int
    length: int


def _check_index(data: bytes, path: Path) -> int:
    """The entry count of a pack index's bytes, checked against their length."""
    if not data.startswith(IDX_MAGIC) or len(data) < len(IDX_MAGIC) + 4:
        raise StoreDamaged(f"pack index {path} is damaged (bad header); run 'turnback fsck'")
    (count,) = struct.unpack_from(">I", data, len(IDX_MAGIC))
    if len(data) != _IDX_START + count * _ENTRY.size:
        raise StoreDamaged(f"pack index {path} is truncated; run 'turnback fsck'")
    return int(count)


def read_index(path: Path) -> dict[str, Loc]:
    data = read_regular(path, limit=MAX_INDEX)
    _check_index(data, path)
    pack = path.name[:-4]
    return {
        raw.hex(): Loc(pack, bo, bl, off, ln)
        for raw, bo, bl, off, ln in _ENTRY.iter_unpack(data[_IDX_START:])
    }


class _SortedIndex:
    """A large pack's index kept as its file's bytes, searched by bisection.

    Building a dict of a first checkpoint's 51,000 entries costs ~120 ms; a look-up
    here bisects the rows' first two bytes (``prefixes``, 2 bytes a row, made on the
    first look-up in C-speed slices) in C, then the few rows that share them: 51,000
    rows, 3.8 us a name not stored (17 slices in Python) against ~1.5 us. A small
    checkpoint asks for ~70 names, nearly all new.
    """

    __slots__ = ("count", "data", "pack", "prefixes")

    def __init__(self, pack: str, data: bytes, count: int) -> None:
        self.pack = pack
        self.data = data
        self.count = count
        self.prefixes: array[int] | None = None

    def _prefixes(self) -> array[int]:
        """Each row's first two name bytes as a big-endian 16-bit number, in row order
        (sorted, as the rows are)."""
        got = self.prefixes
        if got is None:
            data, size, end = self.data, _ENTRY.size, _IDX_START + self.count * _ENTRY.size
            pairs = bytearray(2 * self.count)
            pairs[0::2] = data[_IDX_START:end:size]
            pairs[1::2] = data[_IDX_START + 1:end:size]
            got = array("H")
            got.frombytes(bytes(pairs))
            if sys.byteorder == "little":
                got.byteswap()
            self.prefixes = got
        return got

    def find(self, raw: bytes) -> Loc | None:
        data, size = self.data, _ENTRY.size
        if len(raw) != 32:
            return None
        prefixes = self._prefixes()
        first = raw[0] << 8 | raw[1]
        lo = bisect_left(prefixes, first)
        hi = bisect_right(prefixes, first, lo)
        while lo < hi:
            mid = (lo + hi) // 2
            at = _IDX_START + mid * size
            key = data[at: at + 32]
            if key < raw:
                lo = mid + 1
            elif key > raw:
                hi = mid
            else:
                _, bo, bl, off, ln = _ENTRY.unpack_from(data, at)
                return Loc(self.pack, bo, bl, off, ln)
        return None

    def items(self) -> Iterator[tuple[str, Loc]]:
        pack = self.pack
        for raw, bo, bl, off, ln in _ENTRY.iter_unpack(self.data[_IDX_START:]):
            yield raw.hex(), Loc(pack, bo, bl, off, ln)


_compressors = threading.local()


def _compressor(level: int) -> zstandard.ZstdCompressor:
    """This thread's compressor for ``level``, kept between packs: a fresh one allocates
    its tables on its first block (a 60 KB block at level 3: 0.50 ms new, 0.05 ms
    reused), and a server makes a pack, so fresh compressors, every small checkpoint.

    zstandard is imported by the functions that call it, not at this module's import: a
    no-op checkpoint reads and writes no pack (bench/RESULTS.md, branch cold37)."""
    import zstandard

    kept: dict[int, zstandard.ZstdCompressor] | None = getattr(_compressors, "by_level", None)
    if kept is None:
        kept = _compressors.by_level = {}
    cctx = kept.get(level)
    if cctx is None:
        cctx = kept[level] = zstandard.ZstdCompressor(level=level)
    return cctx


def raw_frame(data: bytes) -> bytes:
    """``data`` as one zstd frame of raw (stored) blocks: what ``zstd`` writes for bytes it
    cannot compress, made without looking at them (a copy, ~65 KB in ~10 us)."""
    parts: list[bytes | memoryview] = [_ZSTD_MAGIC, bytes((_RAW_HEADER,)),
                                       struct.pack("<I", len(data))]
    view, at, end = memoryview(data), 0, len(data)
    while True:
        size = min(RAW_BLOCK, end - at)
        last = at + size >= end
        parts.append(((size << 3) | last).to_bytes(3, "little"))  # block type 0: raw
        parts.append(view[at: at + size])
        at += size
        if last:
            return b"".join(parts)


def _in_parts(cctx: zstandard.ZstdCompressor, data: bytes,
              objects: list[tuple[str, int, int]]) -> bytes:
    """``data`` as one zstd frame whose zstd blocks end at object ends ``SUB_BLOCK`` or more
    apart (``objects``: name, offset, length, in order), so that reading one object decodes
    only the zstd blocks up to its end."""
    import zstandard

    if len(data) <= SUB_BLOCK:
        return cctx.compress(data)
    co = cctx.compressobj(size=len(data))
    view = memoryview(data)
    out: list[bytes] = []
    last = 0
    for _name, off, length in objects:
        end = off + length
        if end - last >= SUB_BLOCK and end < len(data):
            out.append(co.compress(view[last:end]))
            out.append(co.flush(zstandard.COMPRESSOBJ_FLUSH_BLOCK))
            last = end
    out.append(co.compress(view[last:]))
    out.append(co.flush())
    return b"".join(out)


def _one_block(frame: bytes) -> bool:
    """Whether zstd ``frame`` is one zstd block (its first is its last): a tree block, an
    older pack's; False when its header cannot say (zstd's own read then does)."""
    if len(frame) < 6 or not frame.startswith(_ZSTD_MAGIC):
        return False
    fhd = frame[4]
    single = (fhd >> 5) & 1
    at = 5 + (0 if single else 1) + (0, 1, 2, 4)[fhd & 3] + (single, 2, 4, 8)[fhd >> 6]
    return len(frame) > at and bool(frame[at] & 1)


class _Block:
    """Objects waiting to be compressed together into one block (one zstd frame)."""

    __slots__ = ("buf", "level", "pending", "size")

    def __init__(self, level: int) -> None:
        self.level = level
        self.buf: list[bytes] = []
        self.size = 0
        self.pending: list[tuple[str, int, int]] = []  # name, offset in block, length


class PackWriter:
    """Appends objects to a new pack; ``finish`` makes it visible (index written last).

    Trees and blobs fill separate blocks: a tree is mostly raw hashes, which zstd's fast
    level -1 packs as small as level 1 and faster (35 binary trees of the benchmark, 110 KB:
    83.7 KB either way, 175 against 209 us); files keep the configured level, except a log
    frame's last partial block (``_level``).
    """

    def __init__(self, folder: Path, level: int, in_memory: bool = False,
                 raw_held: bool = False) -> None:
        self.folder = folder  # made, if missing, with the pack's file (objfolder.py)
        self.raw_held = raw_held  # a held batch's blocks as raw frames (``RAW_BLOCK``)
        self.raw_blocks = 0  # raw frames written so far (``raw_held``)
        self.id = f"pack-{os.getpid()}-{os.urandom(8).hex()}"
        self.path = folder / f"{self.id}.pack"
        # the file is made on the first object: a checkpoint that stores nothing new
        # (the usual case for a no-op) creates and removes no file
        self._f: BinaryIO | None = None
        # blocks kept in memory (offsets from the first block) until they pass LOG_BYTES
        self._mem: list[bytes] | None = [] if in_memory else None
        self._mem_bytes = 0
        self._pos = 0 if in_memory else len(PACK_MAGIC)
        self._blobs = _Block(level)
        self._trees = _Block(level if level < 0 else TREE_LEVEL)  # a negative level: faster still
        # What it holds, compactly: a first checkpoint of 500,000 files adds 500,000 objects,
        # and a set of hex names with a dict of ``Loc``s cost about 400 bytes each where
        # the raw names (65) and one packed index row (52, ``_ENTRY``) do
        self._names: set[bytes] = set()
        self._index = bytearray()  # the index's rows, in the order written (sorted at finish)
        self.count = 0
        self._lock = threading.Lock()

    def add(self, name: str, payload: bytes) -> None:
        raw = bytes.fromhex(name)
        with self._lock:
            if raw in self._names:
                return
            self._names.add(raw)
            blk = self._trees if payload.startswith(b"tree\0") else self._blobs
            blk.pending.append((name, blk.size, len(payload)))
            blk.buf.append(payload)
            blk.size += len(payload)
            if blk.size >= BLOCK_RAW:
                self._flush_block(blk)

    def _level(self, blk: _Block) -> int | None:
        """``blk``'s level, at most ``HELD_LEVEL`` for a block of a batch still in memory
        whose blocks so far stay under ``HELD_BYTES``: a small checkpoint's files, on the
        answer's path, at level 1 rather than 3 (~0.14 ms less CPU, ~2 KB more in its frame,
        bench/RESULTS.md, branch ``atonce16e``), its tree blocks at ``HELD_TREE_LEVEL``. A
        log's objects are packed again at the configured level (trees at ``TREE_LEVEL``)
        when a merge folds the log; a large batch's blocks past the first ``HELD_BYTES``
        keep it. None: a raw frame (``raw_held``), for the same batches."""
        level = blk.level
        if self._mem is None or self._mem_bytes >= HELD_BYTES:
            return level
        if self.raw_held:
            return None
        if blk is self._trees:
            return min(level, HELD_TREE_LEVEL)
        if level > HELD_LEVEL or level == 0:
            return HELD_LEVEL  # zstd's level 0 is its default, 3
        return level

    def _flush_block(self, blk: _Block) -> None:
        if not blk.buf:
            return
        level = self._level(blk)
        data = b"".join(blk.buf)
        if level is None:
            block = raw_frame(data)
            self.raw_blocks += 1
        elif blk is self._blobs:
            block = _in_parts(_compressor(level), data, blk.pending)
        else:  # a tree is read whole, with its block's others (``trees.py``)
            block = _compressor(level).compress(data)
        pack, pos, blen, index = _ENTRY.pack, self._pos, len(block), self._index
        for name, off, ln in blk.pending:
            index += pack(bytes.fromhex(name), pos, blen, off, ln)
        self.count += len(blk.pending)
        self._pos += len(block)
        blk.buf, blk.size, blk.pending = [], 0, []
        if self._mem is not None:
            self._mem.append(block)
            self._mem_bytes += len(block)
            if self._mem_bytes > LOG_BYTES or self.count >= SORTED_MIN:
                self._spill()
            return
        if self._f is None:
            self._f = self._create()  # closed in finish/abort
            self._f.write(PACK_MAGIC)
        self._f.write(block)

    def _spill(self) -> None:
        """Too much for a log frame: the blocks kept in memory become a pack's start."""
        mem, self._mem = self._mem or [], None
        self._f = self._create()  # closed in finish/abort
        self._f.write(PACK_MAGIC)
        for block in mem:
            self._f.write(block)
        self._index = bytearray(rebase_rows(bytes(self._index), len(PACK_MAGIC)))
        self._pos += len(PACK_MAGIC)

    def _create(self) -> BinaryIO:
        """The pack's file, made in its folder reached without following a link."""
        with object_folder(self.folder) as folder:
            return os.fdopen(create_in(folder, self.path.name), "wb")

    def seal(self) -> bool:
        """Compress what waits; True when everything is still in memory (for a log frame:
        ``frame_parts``), False when it went to a pack file (``finish`` it)."""
        with self._lock:
            self._flush_block(self._blobs)
            self._flush_block(self._trees)
            return self._mem is not None

    def held_bytes(self) -> int:
        """What a sealed in-memory writer's blocks and index rows take."""
        return self._mem_bytes + len(self._index)

    def frame_parts(self) -> tuple[list[bytes], bytes]:
        """The blocks and the sorted index rows (offsets from the first block) of a writer
        that stayed in memory."""
        out = bytearray()
        _sort_rows(self._index, out)
        return list(self._mem or ()), bytes(out)

    def has(self, name: str) -> bool:
        try:
            return bytes.fromhex(name) in self._names
        except ValueError:
            return False

    def _find(self, name: str) -> Loc | None:
        """A written object's place, from the unsorted rows (rarely asked: a checkpoint
        reading back what it wrote, which its tree cache mostly answers)."""
        raw, index, size = bytes.fromhex(name), self._index, _ENTRY.size
        at = index.find(raw)
        while at >= 0:
            if at % size == 0:
                _, bo, bl, off, ln = _ENTRY.unpack_from(index, at)
                return Loc(self.id, bo, bl, off, ln)
            at = index.find(raw, at + 1)
        return None

    def read_own(self, name: str) -> bytes | None:
        """An object this writer holds (a checkpoint reading its own writes), else None."""
        import zstandard

        with self._lock:
            for blk in (self._blobs, self._trees):
                for n, off, ln in blk.pending:
                    if n == name:
                        return b"".join(blk.buf)[off: off + ln]
            loc = self._find(name)
            if loc is None:
                return None
            if self._mem is not None:
                at, block_bytes = 0, b""
                for b in self._mem:
                    if at == loc.block_off:
                        block_bytes = b
                        break
                    at += len(b)
                block = zstandard.ZstdDecompressor().decompress(block_bytes,
                                                                max_output_size=BLOCK_MAX)
                return block[loc.off: loc.off + loc.length]
            if self._f is None:
                return None
            self._f.flush()
        fd = os.open(self.path, os.O_RDONLY | O_BINARY)
        try:
            block = zstandard.ZstdDecompressor().decompress(
                os.pread(fd, loc.block_len, loc.block_off), max_output_size=BLOCK_MAX)
        finally:
            os.close(fd)
        return block[loc.off: loc.off + loc.length]

    def finish(self, fsync: bool) -> bytes:
        """Close the pack and write its index; the index's bytes (``PackReader.add_index``),
        empty if nothing was added."""
        with self._lock:
            self._flush_block(self._blobs)
            self._flush_block(self._trees)
            if self._mem:
                self._spill()  # asked for a pack: what stayed in memory goes there
            if self._f is None:
                return b""  # nothing was added: no file was made
            self._f.flush()
            if fsync:
                os.fsync(self._f.fileno())
            self._f.close()
            if not self.count:
                unlink_object_file(self.path)
                return b""
            self._names = set()  # not needed any more: let it go before the sort
            out = bytearray(IDX_MAGIC + struct.pack(">I", self.count))
            _sort_rows(self._index, out)
            self._index = bytearray()
            data = bytes(out)
            del out
            with object_folder(self.folder) as folder:
                replace_file(folder, f"{self.id}.idx", data, fsync=fsync)
            if fsync:
                fsync_dir(self.folder)
            return data

    def abort(self) -> None:
        with self._lock:
            if self._f is None:
                return
            try:
                self._f.close()
            finally:
                unlink_object_file(self.path)


def _sort_rows(index: bytearray, out: bytearray) -> None:
    """``index``'s rows (``_ENTRY``), sorted, appended to ``out``: a bucket of rows at a
    time, by their name's first byte. Sorting them all at once made an object of each
    (about 110 bytes a row: 55 MB at 500,000 objects, the first checkpoint's peak). A
    small index is sorted at once: the 256 buckets cost a small checkpoint's 70 rows 52 us
    against 12 (1,000 rows: 765 against 358 us)."""
    size = _ENTRY.size
    if len(index) <= SORTED_MIN * size:
        out += b"".join(sorted(bytes(index[i: i + size]) for i in range(0, len(index), size)))
        return
    firsts = bytes(index[0::size])  # each row's first byte
    for b in range(256):
        rows = []
        at = firsts.find(b)
        while at >= 0:
            rows.append(bytes(index[at * size: (at + 1) * size]))
            at = firsts.find(b, at + 1)
        rows.sort()
        out += b"".join(rows)


class PackReader:
    """Finds and reads packed objects; caches indexes and recently used blocks."""

    def __init__(self, folder: Path, log_folder: Path | None = None) -> None:
        self.folder = folder
        self.log_folder = log_folder or folder.parent / "log"
        self._log_ends: dict[str, int] = {}  # a log's bytes read: where its last frame ends
        self._cut: set[str] = set()  # logs with frames past _log_ends not read (LOG_EAGER)
        self._lock = threading.Lock()
        self._index: dict[str, Loc] = {}  # entries of the small packs
        self._sorted: dict[str, _SortedIndex] = {}  # the large packs' indexes
        self._loaded: set[str] = set()
        self._blocks: OrderedDict[tuple[str, int], bytes] = OrderedDict()
        self._cached = 0  # bytes held in _blocks
        self._dctx = threading.local()
        self._files = HeldFiles()  # the packs and logs read lately, kept open
        self.damaged: dict[str, str] = {}  # pack id -> what is wrong with its index

    def refresh(self, whole: bool = False) -> None:
        """Load the indexes of packs written since the last look (by any process).
        ``whole``: every log's frames to its end, past ``LOG_EAGER`` (``read_rest``)."""
        # the logs listed before the packs: a merge writes its pack, then removes the logs
        # it holds, so a log gone by the packs' listing has its pack in it. The other way a
        # merge ending between the two listings left an object in neither ("missing":
        # tests/objects/test_log_index_cut.py, redteam19)
        logs = log_names(self.log_folder)
        try:
            names = {n[:-4] for n in os.listdir(self.folder) if n.endswith(".idx")}
        except FileNotFoundError:
            names = set()
        with self._lock:
            gone = self._loaded - names - set(logs)
            if gone:  # repacked by gc: forget their entries
                if any(p not in self._sorted for p in gone):
                    self._index = {k: v for k, v in self._index.items() if v.pack not in gone}
                self._loaded -= gone
                for pack in gone:
                    self.damaged.pop(pack, None)
                    self._sorted.pop(pack, None)
                    self._log_ends.pop(pack, None)
                    self._cut.discard(pack)
                self._files.drop(gone)  # their disk space not kept by a read descriptor
            for log in logs:
                self._read_log(log, whole)
            for pack in sorted(names - self._loaded):
                path = self.folder / f"{pack}.idx"
                if PACK_ID.fullmatch(pack) is None:
                    # not a name a writer gives: its index is never read, fsck names it
                    self.damaged[pack] = (f"{path.name} is not a pack index name "
                                          "(pack-<pid>-<16 hex>.idx); move it out of the store")
                    self._loaded.add(pack)
                    continue
                try:
                    data = read_regular(path, limit=MAX_INDEX)
                    self._take_index(pack, data, _check_index(data, path))
                except FileNotFoundError:
                    continue
                except StoreDamaged as exc:
                    # one bad index must not stop every read and write: its objects count
                    # as missing (a checkpoint stores them again), fsck reports the pack
                    self.damaged[pack] = exc.message
                self._loaded.add(pack)

    def _read_log(self, log: str, whole: bool) -> None:
        """Take in the frames a log gained since the last look (any process's), at most
        ``LOG_EAGER`` unless ``whole``; a log cut there is not read further until
        ``read_rest``. The caller holds the lock. Frames are not hash-checked here (that
        reads every block): their objects are, when read."""
        if log in self._cut and not whole:
            return
        # uncut before anything can return: a log cut at its very end (or one no longer
        # opened) stayed cut for good, each miss read every log again and no refresh read
        # the frames its writer added later (redteam19); a new cut is noted below
        self._cut.discard(log)
        try:
            fd = open_regular(self.log_folder / log)
        except (OSError, StoreDamaged) as exc:  # gone (a gc), or a link, a FIFO: never read
            if isinstance(exc, StoreDamaged):
                self.damaged[log] = exc.message
            return
        try:
            size = os.fstat(fd).st_size
            start = self._log_ends.get(log, 0)
            if size <= start:
                return
            found, end = frames(fd, start, size, None if whole else LOG_EAGER)
        finally:
            os.close(fd)
        if len(found) == LOG_EAGER and not whole:
            self._cut.add(log)
        for frame in found:
            self._index.update(
                (raw.hex(), Loc(log, bo, bl, off, ln))
                for raw, bo, bl, off, ln in _ENTRY.iter_unpack(frame.rows))
        self._log_ends[log] = end
        self._loaded.add(log)

    def read_rest(self) -> bool:
        """Take in the frames of the logs cut at ``LOG_EAGER``; whether there were any. For
        a name found nowhere else (a read, ``exists``): a look-up that misses for a write
        only stores the object once more, harmlessly, so a log nobody asks objects of (a
        planted one) costs a process ``LOG_EAGER`` frames, not all of them."""
        with self._lock:
            if not self._cut:
                return False
        self.refresh(whole=True)
        return True

    def add_log_rows(self, log: str, rows: bytes, end: int) -> None:
        """Take in a frame this process appended to its log (``LogFile.append``)."""
        with self._lock:
            self._index.update(
                (raw.hex(), Loc(log, bo, bl, off, ln))
                for raw, bo, bl, off, ln in _ENTRY.iter_unpack(rows))
            if self._log_ends.get(log, 0) < end:
                self._log_ends[log] = end
            self._loaded.add(log)

    def log_end(self, log: str) -> int:
        """Where the last frame read of ``log`` ends (0: none read)."""
        with self._lock:
            return self._log_ends.get(log, 0)

    def sizes(self) -> dict[str, tuple[int, int]]:
        """Each pack's object count and bytes, from its files' sizes alone (an index is
        a fixed header and a row an object; ``_check_index`` holds it to that when read):
        what a merge of the logs chooses by without reading every index."""
        out: dict[str, tuple[int, int]] = {}
        try:
            names = os.listdir(self.folder)
        except FileNotFoundError:
            return out
        for n in names:
            if not n.endswith(".idx") or PACK_ID.fullmatch(n[:-4]) is None:
                continue
            try:
                rows = (os.lstat(self.folder / n).st_size - _IDX_START) // _ENTRY.size
                out[n[:-4]] = (rows, os.lstat(self.folder / f"{n[:-4]}.pack").st_size)
            except OSError:
                continue  # a pack removed while its index stayed: fsck names it
        return out

    def listing(self, packs: bool = True, only: str | None = None
                ) -> dict[str, dict[str, Loc]]:
        """Every pack's and log's own rows, read from disk now: the index above keeps one
        place an object, the last read, so a copy held twice (two processes that stored
        it at once, a log copied back) is listed here under each. For gc and for a read
        whose copy was damaged (``ObjectStore._other_copy``), never on a hot path. A pack
        or log that cannot be read is left out (fsck names it). ``packs=False``: the
        logs' only (a merge of the logs); ``only``: that one log's (a fold's)."""
        out: dict[str, dict[str, Loc]] = {}
        try:
            idx = (sorted(n[:-4] for n in os.listdir(self.folder) if n.endswith(".idx"))
                   if packs else [])
        except FileNotFoundError:
            idx = []
        for pack in idx:
            if PACK_ID.fullmatch(pack) is None:
                continue
            try:
                out[pack] = read_index(self.folder / f"{pack}.idx")
            except (OSError, StoreDamaged):
                continue
        for log in log_names(self.log_folder):
            if only is not None and log != only:
                continue
            try:
                fd = open_regular(self.log_folder / log)
            except (OSError, StoreDamaged):
                continue
            try:
                found, _ = frames(fd, 0, os.fstat(fd).st_size)
            finally:
                os.close(fd)
            out[log] = {raw.hex(): Loc(log, bo, bl, off, ln)
                        for frame in found
                        for raw, bo, bl, off, ln in _ENTRY.iter_unpack(frame.rows)}
        return out

    def path_of(self, pack: str) -> Path:
        """The file holding a pack's or a log's blocks."""
        if pack.startswith("log-"):
            return self.log_folder / pack
        return self.folder / f"{pack}.pack"

    def logs(self) -> list[str]:
        """The logs read, with at least one complete frame."""
        with self._lock:
            return sorted(p for p in self._loaded if LOG_ID.fullmatch(p))

    def add_index(self, data: bytes, pack: str) -> None:
        """Take in the index a ``PackWriter`` of this process wrote (its ``finish``), without
        reading it back: a large one stays as these bytes (bisected), as ``refresh`` keeps it."""
        if not data:
            return  # no pack was written: nothing to remember (and no index to look for)
        count = _check_index(data, self.folder / f"{pack}.idx")
        with self._lock:
            self._take_index(pack, data, count)
            self._loaded.add(pack)

    def _take_index(self, pack: str, data: bytes, count: int) -> None:
        """Remember a checked index: a large one as its bytes (bisected), a small one as
        entries in the dict. The caller holds the lock."""
        if count >= SORTED_MIN:
            self._sorted[pack] = _SortedIndex(pack, data, count)
        else:
            self._index.update(
                (raw.hex(), Loc(pack, bo, bl, off, ln))
                for raw, bo, bl, off, ln in _ENTRY.iter_unpack(data[_IDX_START:]))

    def locate(self, name: str) -> Loc | None:
        loc = self._index.get(name)
        if loc is not None or not self._sorted:
            return loc
        try:
            raw = bytes.fromhex(name)
        except ValueError:
            return None
        for idx in list(self._sorted.values()):
            loc = idx.find(raw)
            if loc is not None:
                return loc
        return None

    def names(self) -> dict[str, Loc]:
        with self._lock:
            out = dict(self._index)
            for idx in self._sorted.values():
                out.update(idx.items())
            return out

    def packs(self) -> set[str]:
        return set(self._loaded)

    def read(self, loc: Loc) -> bytes:
        key = (loc.pack, loc.block_off)
        need = loc.off + loc.length
        if loc.length < MIN_OBJECT:
            # no writer writes one; its read decoded nothing and cached an empty block
            # counted as 0 bytes: ``CACHE_BYTES`` bounded no count of them (redteam39)
            raise StoreDamaged(f"pack {loc.pack}: its index gives an object {loc.length} "
                               f"bytes, fewer than any object's {MIN_OBJECT}; run "
                               "'turnback fsck'")
        if need > BLOCK_MAX:
            raise StoreDamaged(f"pack {loc.pack}: its index places an object at bytes "
                               f"{loc.off}-{need} of a block, past any block's end; run "
                               "'turnback fsck'")
        with self._lock:
            block = self._blocks.get(key)
            if block is not None:
                self._blocks.move_to_end(key)
        if block is None or len(block) < need:
            # a block's first read decodes it up to its object's end; a second one that
            # needs more decodes it whole (a rewind's targets in one block: two at most)
            block = self._decompress(loc, need if block is None else BLOCK_MAX)
            with self._lock:
                old = self._blocks.pop(key, None)
                if old is not None:
                    self._cached -= len(old)
                    if len(old) > len(block):
                        # another thread decoded more of it meanwhile: a short one stored
                        # over it made the next read past its end decode the block again
                        block = old
                self._blocks[key] = block
                self._cached += len(block)
                while self._cached > CACHE_BYTES and len(self._blocks) > 1:
                    self._cached -= len(self._blocks.popitem(last=False)[1])
        if need > len(block):
            raise StoreDamaged(f"pack {loc.pack}: an object runs past the end of its block; "
                               "run 'turnback fsck'")
        return block[loc.off: need]

    def _decompress(self, loc: Loc, need: int) -> bytes:
        """The block's decompressed bytes up to ``need`` (its end, at most): an object early
        in a block costs only the zstd blocks of the frame up to its end (``SUB_BLOCK``)."""
        import zstandard

        d = getattr(self._dctx, "d", None)
        if d is None:
            # a damaged frame header cannot make it reserve more than a block for its window
            d = self._dctx.d = zstandard.ZstdDecompressor(max_window_size=BLOCK_MAX)
        held, st = self._files.take(loc.pack, self.path_of(loc.pack))
        try:
            size = st.st_size  # a log's now: the held descriptor's file grows with it
            if (loc.block_off < len(PACK_MAGIC) or loc.block_len > BLOCK_MAX
                    or loc.block_off + loc.block_len > size):
                raise StoreDamaged(
                    f"pack {loc.pack}: its index names bytes {loc.block_off}+{loc.block_len} of "
                    f"a {size}-byte pack (truncated or a damaged index); run 'turnback fsck'")
            raw = os.pread(held.fd, loc.block_len, loc.block_off)
        finally:
            self._files.give_back(held)
        if len(raw) != loc.block_len:
            raise StoreDamaged(f"pack {loc.pack} is truncated; run 'turnback fsck'")
        if _one_block(raw):
            need = BLOCK_MAX  # decoded whole either way (a tree block): kept whole
        try:
            reader = d.stream_reader(raw)
            parts: list[bytes] = []
            got = 0
            while got < need:
                chunk = reader.read(min(need - got, 1 << 17))
                if not chunk:
                    break
                parts.append(chunk)
                got += len(chunk)
            return b"".join(parts)
        except zstandard.ZstdError as exc:
            raise StoreDamaged(f"pack {loc.pack} has a corrupt block ({exc}); run 'turnback "
                               "fsck'") from exc

    def close(self) -> None:
        """Close the packs and logs held open for reads (they open again at a next read)."""
        self._files.close()

    def __del__(self) -> None:
        # a ``Store`` an API caller never closed: its descriptors not left to the process's end
        files = getattr(self, "_files", None)
        if files is not None:
            files.close()

    def files(self) -> Iterator[Path]:
        if self.folder.exists():
            for n in os.listdir(self.folder):
                yield self.folder / n
