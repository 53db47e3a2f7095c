"""A log's junk tail set aside: the lines after its last record, when there are too many of
them for the head read (``jsonl.NoLastObject``: every append to the file is refused), are
moved into a side file beside it, ``<name>.junk-<n>``, so appends work again and no byte is
lost up to a bound (``COPY_MOST``). Turnback writes only records, so such a run was planted
or is damage."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import Conflict
from ..record import record
from .atomic import fsync_dir
from .jsonl import HEAD_BYTES, Line, NoLastObject, last_line, read_lines
from .locks import try_rw_lock
from .osflags import O_CLOEXEC
from .privacy import FILE_MODE
from .reading import open_append

SIDE = ".junk-"  # a side file: ``<the log's name>.junk-<n>``, n = 1, 2, ...
MOST_SIDES = 1000  # side files looked past for a free name; more is no repair of ours
CHUNK = 1 << 20
# bytes of a junk tail copied into the side file at most, the rest dropped and said: as much
# as the head read looks back, so any line Turnback could have written fits. A planted
# sparse 2 GiB tail was written out whole, 2 GiB of the user's disk (redteam45, left open)
COPY_MOST = HEAD_BYTES
# ... and over a whole repair (``Budget``), every file's copies together: a thousand planted
# session files with sparse tails were 129 GiB of side files (redteam48, left open). Two
# tails of the longest; real damage (a torn line) is kilobytes
REPAIR_MOST = 2 * COPY_MOST


class Budget:
    """The bytes one repair may still copy into side files (``REPAIR_MOST`` at first)."""

    __slots__ = ("left",)

    def __init__(self, most: int | None = None) -> None:
        self.left = REPAIR_MOST if most is None else most


@record
class SetAside:
    """What one repair moved: from which file, into which side file, how many bytes;
    ``dropped``: bytes after the first ``COPY_MOST`` of the tail, cut and not kept;
    ``meta``: ``meta`` lines among those moved (a session's title or end they set is no
    longer applied: the side file is never read); ``side`` is "" when the repair's
    ``Budget`` was spent before this file: nothing copied, the tail dropped whole."""

    file: str
    side: str
    bytes: int
    dropped: int = 0
    meta: int = 0
    spent: bool = False  # the repair's ``Budget`` cut the copy short (or left none)

    def to_json(self) -> dict[str, Any]:
        return {"file": self.file, "side": self.side, "bytes": self.bytes,
                "dropped": self.dropped, "meta": self.meta, "budgetSpent": self.spent}


def set_aside(path: Path, *, keep: Callable[[Line], bool] | None = None,
              head: Callable[[dict[str, Any]], bool] | None = None,
              budget: Budget | None = None) -> SetAside | None:
    """Move what follows ``path``'s last line that ``keep`` takes (any object when None;
    it must take the line the head read stops at, or the cut leaves the file refused)
    into a new side file beside it, when the head read (``head``: as its writers call
    ``last_line``) refuses the file; None when it does not (nothing to move: run twice,
    the second does nothing). Refused (``Conflict``) while another holds the file's lock.

    The tail is copied (its first ``COPY_MOST`` bytes, fewer when ``budget``, the whole
    repair's, has less left; none and no side file when it has none) and flushed to disk,
    and the side file's name with its folder, before the file is cut: a crash between
    leaves the lines in both (a later repair copies them again), never in neither."""
    with try_rw_lock(Path(f"{path}.lock"), exclusive=True) as held:
        if not held:
            raise Conflict(
                f"{path}: another Turnback process is writing it (it holds {path}.lock), so "
                "nothing was moved; run 'turnback fsck --repair' again once it ends")
        try:
            last_line(path, head)
            return None
        except NoLastObject:
            pass
        cut = meta = 0
        for line in read_lines(path):
            if keep is None or keep(line):
                cut, meta = line.end, 0
            elif line.value.get("type") == "meta":
                meta += 1
        fd = open_append(path)
        try:
            size = os.fstat(fd).st_size
            most = COPY_MOST if budget is None else min(COPY_MOST, budget.left)
            copied = max(0, min(size - cut, most))
            side_name = ""
            if copied:
                side, side_name = _new_side(path)
                try:
                    _copy(fd, cut, cut + copied, side)
                    os.fsync(side)
                finally:
                    os.close(side)
                # the side file's name durable before the cut: a power cut after the cut
                # could else keep the shorter log and lose the new file's entry, and its
                # bytes
                fsync_dir(path.parent)
                if budget is not None:
                    budget.left -= copied
            os.ftruncate(fd, cut)
            os.fsync(fd)
        finally:
            os.close(fd)
        return SetAside(str(path), side_name, copied, size - cut - copied, meta,
                        spent=most < min(size - cut, COPY_MOST))


def _new_side(path: Path) -> tuple[int, str]:
    """A new side file beside ``path``, open for writing, and its name (``O_EXCL``: never
    one already there, nor through a link planted at its name)."""
    for n in range(1, MOST_SIDES + 1):
        name = f"{path}{SIDE}{n}"
        try:
            fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | O_CLOEXEC, FILE_MODE)
        except FileExistsError:
            continue
        return fd, name
    raise Conflict(f"{path}: {MOST_SIDES} side files '{path.name}{SIDE}<n>' are there "
                   "already, so nothing was moved; look at them and remove those not needed")


def _copy(src: int, start: int, end: int, dst: int) -> None:
    pos = start
    while pos < end:
        data = os.pread(src, min(CHUNK, end - pos), pos)
        if not data:
            break
        view = memoryview(data)
        while view:
            view = view[os.write(dst, view):]
        pos += len(data)
