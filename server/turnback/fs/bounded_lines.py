"""A file's whole lines read in pieces: never more than a bound of one line held, and the
holes of a sparse file passed over rather than read.

The full reads of the logs (``jsonl.read_lines``, ``checkpoint_index``) read a file past
``MAX_LINE`` bytes here. ``readline(MAX_LINE)`` held several times ``MAX_LINE`` at its
peak (its buffers), and a planted sparse 2 GiB in ``checkpoints.jsonl`` was read, zeros
and all, by every process's first listing: 2 GiB through memory, 4-7 s of CPU
(redteam48, trust37). A hole holds only zero bytes, so no newline: it belongs whole to
the line it stands in, and where that makes the line longer than the bound, it is passed
over with ``SEEK_DATA`` (Linux, macOS; elsewhere read as any bytes).
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator

# bytes a read takes: the most held besides one line's ``limit`` (less for a smaller
# ``limit``: ``_step``)
CHUNK = 1 << 20
# the least a read takes, whatever the limit: a line at most this long is no reason for
# reads of a few bytes
LEAST = 4096

_SEEK_HOLE: int | None = getattr(os, "SEEK_HOLE", None)
_SEEK_DATA: int | None = getattr(os, "SEEK_DATA", None)


def whole_lines(fd: int, start: int, limit: int) -> Iterator[tuple[bytes | None, int]]:
    """Each whole line of the file open at ``fd`` from byte ``start``, without its newline
    (None for one longer than ``limit``, whose bytes are not kept), and the offset just
    past its newline: where a reader that stops after it has read to. A final line with no
    newline (torn, or a write in progress) is not yielded. Read with ``pread``: ``fd``'s
    own offset is left to the ``lseek`` calls of the holes' look."""
    pos = start  # where the next read starts
    held: list[bytes] = []  # the current line's pieces so far
    held_len = 0
    over = False  # the current line is past ``limit``: its bytes are not kept
    # reads no longer than the bound they serve: a 1 MiB read whatever the bound held two
    # of them (the one read and the one before) for a bound of 4 KiB (redteam51)
    step = min(CHUNK, max(limit, LEAST))
    while True:
        after_hole = _past_hole(fd, pos)
        if after_hole is None:
            return  # a hole to the file's end: no newline follows
        if after_hole > pos and (over or held_len + after_hole - pos > limit):
            over, held, held_len = True, [], 0
            pos = after_hole
        # (a shorter hole is read as the zeros it holds)
        data = b""  # the last read freed before the next
        data = os.pread(fd, step, pos)
        if not data:
            return
        i = 0
        while True:
            j = data.find(b"\n", i)
            if j < 0:
                break
            end = pos + j + 1
            if over or held_len + j - i > limit:
                yield None, end
            elif held:
                held.append(data[i:j])
                yield b"".join(held), end
            else:
                yield data[i:j], end
            over, held, held_len = False, [], 0
            i = j + 1
        if not over and i < len(data):
            held_len += len(data) - i
            if held_len > limit:
                over, held, held_len = True, [], 0
            else:
                held.append(data[i:] if i else data)
        pos += len(data)


def _past_hole(fd: int, pos: int) -> int | None:
    """Where data starts at or after ``pos`` when a hole starts there (``pos`` otherwise, or
    where holes are not known); None when the file holds only a hole from ``pos`` on."""
    if _SEEK_HOLE is None or _SEEK_DATA is None:
        return pos
    try:
        if os.lseek(fd, pos, _SEEK_HOLE) != pos:
            return pos  # data here (a file system that knows no holes says its end)
        return os.lseek(fd, pos, _SEEK_DATA)
    except OSError as exc:
        if exc.errno == errno.ENXIO:
            return None  # past the end, or no data after ``pos``
        return pos
