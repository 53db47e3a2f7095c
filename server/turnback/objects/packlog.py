"""The object log: a small checkpoint's objects and its record in one append, one disk wait.

A pack costs a small checkpoint a new file, an index written atomically (a second file,
a rename), their folder's fsync, then the record's own fsync in ``checkpoints.jsonl``:
two disk waits and three new names. Here the same blocks, their index rows and the
checkpoint record go into one frame appended to ``objects/log/log-<pid>-<16 hex>``, a
file only its process appends to, with one ``fdatasync``; the record is then appended to
``checkpoints.jsonl`` without a wait of its own (a crash that loses it there is made
whole from the log when the store is next opened: ``CheckpointIndex.restore``).

A log is ``TBLOG01\\n`` then frames, each::

    "TBFR" u32 frame length, u32 blocks length, u32 row count, u32 record length
    blocks            zstd frames, as a pack's
    rows              sorted by name, as a pack index's (``packs._ENTRY``); block offsets
                      count from the start of the log file
    record            the checkpoint record's JSON line (no newline), or nothing
    BLAKE3-256 of the frame up to here, "TBFE", u32 frame length

A frame whose structure does not hold (lengths, magics) ends what is read of its log:
the rest is a write that did not finish (or damage). So does a frame without an object (no
row): no writer writes one (a batch with no object is never written, ``ObjectStore.batch``),
and a log planted full of them (60 bytes a frame, the smallest there is) was walked whole at
every open (bench/RESULTS.md, ``logs18``); ``fsck`` names it (``refused_at``). The hash is
checked where a frame's record is taken back (``records``) and by ``fsck`` (``verify``);
objects read from a frame are checked against their names like any others.
"""

from __future__ import annotations

import os
import re
import struct
from collections.abc import Callable, Iterator
from functools import partial
from itertools import islice
from pathlib import Path
from typing import NamedTuple

import blake3

from ..errors import StoreDamaged
from ..fs.atomic import fsync_all, fsync_file
from ..fs.osflags import O_BINARY, O_CLOEXEC
from ..fs.privacy import FILE_MODE
from ..fs.reading import open_regular
from .objfolder import object_folder
from .walkedlogs import DEEP, WalkedLogs

LOG_MAGIC = b"TBLOG01\n"  # as long as a pack's magic: a block never starts before byte 8
LOG_ID = re.compile(r"log-[0-9]+-[0-9a-f]{16}")
_HEAD = struct.Struct(">4sIIII")
_TAIL = struct.Struct(">32s4sI")
_ROW = 52  # packs._ENTRY.size
HEAD_MAGIC = b"TBFR"
TAIL_MAGIC = b"TBFE"
RAW_MAGIC = b"\x28\xb5\x2f\xfd"  # a zstd frame's (``packs.raw_frame``)
RAW_HEADER = 0xA0  # a raw frame's header byte: one segment, a 4-byte content size
FRAME_MAX = 32 << 20  # readers take no longer frame (a writer's blocks spill at 8 MiB)
FRAME_OVERHEAD = len(LOG_MAGIC) + _HEAD.size + _TAIL.size  # a frame's bytes around its parts
LOG_ROLL = 256 << 20  # past this size a writer starts a new log
# no writer's log is longer (it rolls past LOG_ROLL, a frame is at most FRAME_MAX): bytes
# past it are never read, so a planted log costs an open at most what the largest real one
# does (a planted 1 GiB of empty frames: 2 preads a frame, ~100 s of CPU, bench/RESULTS.md)
READ_MAX = LOG_ROLL + FRAME_MAX
# a walk back from a torn end holds one segment of frames at a time (``_backward_by_segments``)
SEGMENT_FRAMES = 4096
SEGMENT_BYTES = 16 << 20


class Frame(NamedTuple):
    pos: int  # where the frame starts in its log
    length: int
    rows: bytes
    record: bytes


def encode(pos: int, blocks: list[bytes], rows: bytes, record: bytes) -> bytes:
    """A frame to be appended at ``pos``; ``rows`` already count offsets from the log's
    start (the writer knows where the frame lands: it is its log's only writer)."""
    blen = sum(len(b) for b in blocks)
    length = _HEAD.size + blen + len(rows) + len(record) + _TAIL.size
    body = b"".join([_HEAD.pack(HEAD_MAGIC, length, blen, len(rows) // _ROW, len(record)),
                     *blocks, rows, record])
    return body + _TAIL.pack(blake3.blake3(body).digest(), TAIL_MAGIC, length)


def _frame_at(fd: int, pos: int, size: int, *, objectless: bool = False) -> Frame | None:
    """The frame at ``pos`` if its structure holds and it holds an object (its hash is not
    checked), else None. ``objectless``: the frame only if it holds none (``refused_at``)."""
    head = os.pread(fd, _HEAD.size, pos)
    if len(head) != _HEAD.size:
        return None
    magic, length, blen, count, rlen = _HEAD.unpack(head)
    if (magic != HEAD_MAGIC or length > FRAME_MAX or pos + length > size
            or (count == 0) != objectless
            or length != _HEAD.size + blen + count * _ROW + rlen + _TAIL.size):
        return None
    meta = os.pread(fd, length - _HEAD.size - blen, pos + _HEAD.size + blen)
    if len(meta) != length - _HEAD.size - blen:
        return None
    _, tail_magic, tail_len = _TAIL.unpack_from(meta, len(meta) - _TAIL.size)
    if tail_magic != TAIL_MAGIC or tail_len != length:
        return None
    rows_end = count * _ROW
    return Frame(pos, length, meta[:rows_end], meta[rows_end: rows_end + rlen])


def frames(fd: int, start: int, size: int,
           most: int | None = None) -> tuple[list[Frame], int]:
    """The complete frames from ``start`` (a frame's start, or 0 for the log's start) to
    ``size``, and where the last one ends: bounded reads, two a frame, none past
    ``READ_MAX``. ``most``: no more frames than that (the rest for a later call)."""
    size = min(size, READ_MAX)
    if start < len(LOG_MAGIC):
        if os.pread(fd, len(LOG_MAGIC), 0) != LOG_MAGIC:
            return [], 0
        start = len(LOG_MAGIC)
    out = list(islice(_forward(fd, start, size), most))
    return out, (out[-1].pos + out[-1].length if out else start)


def _forward(fd: int, start: int, size: int) -> Iterator[Frame]:
    """``frames``, one at a time (nothing held)."""
    size = min(size, READ_MAX)
    if start < len(LOG_MAGIC):
        if os.pread(fd, len(LOG_MAGIC), 0) != LOG_MAGIC:
            return
        start = len(LOG_MAGIC)
    pos = start
    while pos < size:
        frame = _frame_at(fd, pos, size)
        if frame is None:
            return
        yield frame
        pos += frame.length


def refused_at(fd: int, pos: int, size: int) -> bool:
    """Whether a frame whole in its structure but with no object (which no writer writes)
    is at ``pos``, where the read of a log stopped: a planted log's, named by ``fsck`` and
    kept by a merge (never a writer's leftover to remove)."""
    return _frame_at(fd, max(pos, len(LOG_MAGIC)), min(size, READ_MAX), objectless=True) is not None


def verify(fd: int, frame: Frame) -> bool:
    """Whether the frame's bytes match its hash (what a crash or a hand could break)."""
    data = os.pread(fd, frame.length, frame.pos)
    if len(data) != frame.length:
        return False
    body = memoryview(data)[: frame.length - _TAIL.size]
    return blake3.blake3(body).digest() == data[frame.length - _TAIL.size: frame.length - 8]


def log_names(folder: Path) -> list[str]:
    """The logs in ``folder`` (names a writer gives; anything else is never read)."""
    try:
        return sorted(n for n in os.listdir(folder) if LOG_ID.fullmatch(n))
    except (FileNotFoundError, NotADirectoryError):
        return []


def frame_ending_at(fd: int, size: int) -> Frame | None:
    """The complete frame whose trailer ends at ``size`` (a log's end), if there is one:
    one read of the trailer, two of the frame."""
    if size < len(LOG_MAGIC) + _TAIL.size:
        return None
    tail = os.pread(fd, _TAIL.size, size - _TAIL.size)
    if len(tail) != _TAIL.size:
        return None
    _, magic, length = _TAIL.unpack(tail)
    if magic != TAIL_MAGIC or not len(LOG_MAGIC) <= size - length < size:
        return None
    frame = _frame_at(fd, size - length, size)
    return frame if frame is not None and frame.pos + frame.length == size else None


def _newest_first(fd: int, size: int, torn: Callable[[], int | None] | None = None,
                  stopped: list[int] | None = None) -> Iterator[Frame]:
    """A log's complete frames from its end back: from the trailer at the end of the file,
    three reads a frame; a log whose end is not a frame's (a write that did not finish) is
    read from its start instead, unless ``torn`` gives where its last frame ends. Where a
    torn log's frames end is added to ``stopped`` (before the first frame is given)."""
    pos = size
    while pos > len(LOG_MAGIC):
        tail = os.pread(fd, _TAIL.size, pos - _TAIL.size)
        if len(tail) != _TAIL.size:
            break
        _, magic, length = _TAIL.unpack(tail)
        frame = (_frame_at(fd, pos - length, pos)
                 if magic == TAIL_MAGIC and len(LOG_MAGIC) <= pos - length < pos else None)
        if frame is None or frame.pos + frame.length != pos:
            break
        yield frame
        pos = frame.pos
    else:
        return
    if pos == size:  # a torn end: the frames before it, forward
        end = torn() if torn is not None else None
        if end is not None and 0 < end < size and _chained(fd, end, DEEP):
            if stopped is not None:
                stopped.append(end)
            yield from _newest_first(fd, end)
        else:
            yield from _backward_by_segments(fd, size, stopped)


def _chained(fd: int, end: int, limit: int) -> bool:
    """Whether the frames ending at ``end`` chain back, each one's start the previous one's
    end, to the log's first byte after its magic, or for ``limit`` frames: what no frame
    inside a stored block does unless ``limit`` of them are forged one after another.

    A chain that reaches the start is the log's own: the first frame's head is the real
    one, so is its length, so is the next frame's start, and on. A noted end (``_noted_end``)
    that is a fake frame's inside a stored block (a workspace file's bytes kept raw) has no
    frame ending where it starts; without this the walk took it, and the newest frames'
    records, lost from ``checkpoints.jsonl`` in the crash that tore the log, stayed hidden
    until a merge. Checked before any frame is given: a fake frame's record already in the
    file would stop the walk at it. Three reads a frame, at most ``limit`` (``DEEP``) frames:
    a torn log noted costs each open up to that once more (bench/RESULTS.md, ``trust19``)."""
    pos = end
    for _ in range(limit):
        if pos == len(LOG_MAGIC):
            return True
        frame = frame_ending_at(fd, pos)
        if frame is None:
            return False
        pos = frame.pos
    return True


def _backward_by_segments(fd: int, size: int,
                          stopped: list[int] | None = None) -> Iterator[Frame]:
    """A log's frames newest first, for a log whose end is not a frame's: read forward
    keeping only where each segment of frames starts, then each segment again, held and
    given back reversed. Holding every frame cost ~120 bytes a frame (84 MiB at an open for
    a planted 32 MiB log of empty frames, bench/RESULTS.md ``logs18``); now at most a
    segment's, for twice the reads."""
    starts: list[int] = []
    end = 0
    count = held = 0
    for frame in _forward(fd, 0, size):
        if not starts or count >= SEGMENT_FRAMES or held >= SEGMENT_BYTES:
            starts.append(frame.pos)
            count = held = 0
        count += 1
        held += frame.length
        end = frame.pos + frame.length
    if stopped is not None:
        stopped.append(end)
    for i in range(len(starts) - 1, -1, -1):
        stop = starts[i + 1] if i + 1 < len(starts) else end
        yield from reversed(list(_forward(fd, starts[i], stop)))


def _synced(fd: int, path: Path) -> bool:
    """The log made durable before a record read from it is put back: through the
    descriptor read (POSIX takes a read-only one), else by name as the store syncs any
    file (``fsync_file``: Windows asks for a handle opened for writing). False if neither
    can be done: its records are then left for a later open."""
    try:
        os.fsync(fd)
        return True
    except OSError:
        pass
    try:
        fsync_file(path)
        return True
    except OSError:
        return False


def _noted_end(cache: WalkedLogs, name: str, fd: int, st: os.stat_result) -> int | None:
    """Where a torn log walked whole before had its last frame end, so that it is not read
    forward again; only if a complete frame ends there and none starts there (a line naming
    an earlier frame's end, or a byte inside the newest frame, would skip the newest
    frames, whose records a crash takes; one under 40 bytes made the walk read at a
    negative offset, an OSError that ended the open's restore of every log)."""
    noted = cache.end(name, st)
    if (noted and frame_ending_at(fd, noted) is not None
            and _frame_at(fd, noted, min(st.st_size, READ_MAX)) is None):
        return noted
    return None


def records(folder: Path, missing: Callable[[bytes], bool], *, every: bool = False,
            walked: WalkedLogs | None = None,
            refused: list[str] | None = None, only: str | None = None) -> Iterator[bytes]:
    """The records of every log that ``missing`` asks for, newest first in each log, each
    only if its frame's hash holds. A log is read back from its end until a record that
    is not missing: a process appends its records to ``checkpoints.jsonl`` in the order of
    its frames, so a crash that took lines took the last ones. ``every``: read each log
    whole, for a line lost from the middle of the file while later ones of its log
    stayed (a page a power cut did not write back, a disk full, a hand). ``walked``: the
    logs an earlier walk read whole without finding a record (``walkedlogs.py``), not read
    past ``DEEP`` frames again; never with ``every``. ``refused``: the logs found holding
    what no writer writes (longer than ``READ_MAX``, a frame without an object where the
    read stopped), named to the user once (``store/notices.py``); at no read more, but
    one for a torn log walked whole. ``only``: that one log's (a fold's)."""
    names = log_names(folder)
    if only is not None:
        names = [n for n in names if n == only]
    for name in names:
        try:
            fd = open_regular(folder / name)
        except (OSError, StoreDamaged):  # gone, or a link or FIFO put there: never read
            continue
        try:
            synced = False
            st = os.fstat(fd)
            size = min(st.st_size, READ_MAX)
            cache = None if every else walked  # looked at only past DEEP, or a torn end
            torn = None if cache is None else partial(_noted_end, cache, name, fd, st)
            seen = end = 0
            stopped: list[int] = []
            if refused is not None and st.st_size > READ_MAX:
                refused.append(name)
            for frame in _newest_first(fd, size, torn, stopped):
                end = end or frame.pos + frame.length
                seen += 1
                if seen == DEEP and cache is not None and cache.end(name, st) is not None:
                    break
                if not frame.record:
                    continue
                if not missing(frame.record):
                    if every:
                        continue
                    break
                if verify(fd, frame):
                    if not synced:
                        # a live writer's frame not yet synced (a rewind's safety frame
                        # waits for its journal's sync): a line put back must not outlive
                        # the frame after a power cut
                        if not _synced(fd, folder / name):
                            break
                        synced = True
                    yield frame.record
            else:
                if seen >= DEEP and cache is not None and not synced:
                    cache.note(name, st, end)  # walked whole, past DEEP, nothing taken back
            if (refused is not None and stopped and st.st_size <= READ_MAX
                    and refused_at(fd, stopped[0], size)):
                refused.append(name)
        finally:
            os.close(fd)
    if walked is not None:
        walked.save(names)


def holds_raw(path: Path) -> bool:
    """Whether a frame of the log at ``path`` holds a zstd frame of raw blocks (each of its
    blocks' first 12 bytes read), as a server's held batch writes them (``packs.raw_frame``:
    a single-segment header with a 4-byte content size, then a block of type 0); False for
    a log that cannot be read."""
    try:
        fd = open_regular(path)
    except (OSError, StoreDamaged):
        return False
    try:
        found, _ = frames(fd, 0, min(os.fstat(fd).st_size, READ_MAX))
        for frame in found:
            for block in sorted(set(_iter_rows(frame.rows))):
                head = os.pread(fd, 12, block)
                if (len(head) == 12 and head[:4] == RAW_MAGIC and head[4] == RAW_HEADER
                        and (head[9] >> 1) & 3 == 0):
                    return True
        return False
    except OSError:
        return False
    finally:
        os.close(fd)


def _iter_rows(rows: bytes) -> Iterator[int]:
    """The block offsets of a frame's rows (``packs._ENTRY``: name, block offset, ...)."""
    for at in range(0, len(rows) - _ROW + 1, _ROW):
        yield int.from_bytes(rows[at + 32: at + 40], "big")


class LogFile:
    """This process's log, appended to by one frame at a time (the caller serialises)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.pid = os.getpid()
        self.id = f"log-{self.pid}-{os.urandom(8).hex()}"
        self.path = folder / self.id
        with object_folder(folder) as held:  # made there, through no link (objfolder.py)
            self._fd = held.open(self.id, os.O_RDWR | os.O_CREAT | os.O_EXCL | O_BINARY
                                 | O_CLOEXEC, FILE_MODE)
        self._ino = os.fstat(self._fd).st_ino
        self.end = 0
        self.named = False  # whether the folder's entry for it was synced
        self.broken = False

    def usable(self) -> bool:
        """Whether the next frame may go here: this process's, whole, not too large, still
        the file at its name (a gc merges logs into a pack and removes them, under the gc
        lock a writer holds shared: a frame appended to a removed log would be lost)."""
        if self.broken or self.pid != os.getpid() or self.end > LOG_ROLL:
            return False
        try:
            return os.stat(self.path).st_ino == self._ino
        except OSError:
            return False

    def untouched(self) -> bool:
        """Whether nothing was written to it, by this writer or another hand (a file
        grown since is someone's frames: never removed as a leftover)."""
        if self.end != 0 or self._fd < 0:
            return False
        try:
            return os.fstat(self._fd).st_size == 0
        except OSError:
            return False

    def append(self, blocks: list[bytes], rows_at: bytes, record: bytes) -> tuple[int, bytes]:
        """Append one frame; return where it starts and its rows (offsets from the log's
        start). ``rows_at``: sorted rows whose block offsets count from the first block."""
        if self.end == 0:
            head = LOG_MAGIC
        else:
            head = b""
        pos = self.end + len(head)
        rows = _rebase(rows_at, pos + _HEAD.size)
        data = head + encode(pos, blocks, rows, record)
        try:
            if os.fstat(self._fd).st_size != self.end:
                raise OSError(f"log {self.path} was changed by another hand")
            view = memoryview(data)
            while view:  # at its end: only this writer moves the descriptor's offset
                n = os.write(self._fd, view)
                view = view[n:]
        except OSError:
            self.broken = True  # a torn tail: the next frame starts a new log
            raise
        self.end += len(data)
        return pos, rows

    def sync(self) -> None:
        """The frames written, durable (and the log's name, the first time)."""
        if self.named:
            # the data and the size that reaches it; macOS and Windows have no fdatasync
            getattr(os, "fdatasync", os.fsync)(self._fd)
            return
        fsync_all([self.path], [self.folder])
        self.named = True

    def close(self) -> None:
        """Close the descriptor, once: a second call is no second ``os.close`` (which would
        close whatever the number was given to since)."""
        fd, self._fd = self._fd, -1
        if fd >= 0:
            try:
                os.close(fd)
            except OSError:
                pass

    def __del__(self) -> None:
        # A ``Store`` an API caller never closed (``Store.open(ws).checkpoint()``) kept its
        # log's descriptor for the process's life, one per store opened: the reliability
        # suite went past select's 1,024. Collected, the log closes.
        if getattr(self, "_fd", -1) >= 0:
            self.close()


def _rebase(rows: bytes, base: int) -> bytes:
    """``rows`` with ``base`` added to each block offset (a u64 after the 32-byte name)."""
    out = bytearray(rows)
    q = struct.Struct(">Q")
    for at in range(32, len(out), _ROW):
        (off,) = q.unpack_from(out, at)
        q.pack_into(out, at, off + base)
    return bytes(out)
