"""Read descriptors on packs and logs kept open between block reads, a bounded few.

An at-once rewind decodes 9-10 blocks, most of them in one pack: opening the pack for
each (``openat``, the regular-file check's ``fstat``, ``close``) was the largest system call
of its kernel share (bench/RESULTS.md, ``wall31``). Here a file read once stays open for
the next read, at most ``HELD_MAX`` of them, the least recently read closed first.

What a held descriptor must not do:

- read a replaced file's old bytes as the new one's: a pack or log name is never given
  twice (``PACK_ID``/``LOG_ID`` hold a process id and 64 random bits) and every object read
  is checked against its hash (``ObjectStore._raw``), so the old file's bytes are either
  right or refused; and a descriptor whose file has lost its name (``st_nlink`` 0: removed
  by gc or a merge, or replaced by a rename) is closed at its next use and the name opened
  again, so a read after a replacement reads the file that is there now;
- keep a removed pack's disk space: besides that look at each use, ``PackReader.refresh``
  closes those whose pack or log left the folder, and the bound closes the rest in turn;
- be closed under a reader: a descriptor in use by one thread is closed by the last user
  (a closed number reused by another ``open`` would be read as this pack).

Windows does not remove a file another process holds open (the merge and gc there would
fail), so nothing is held there: each read opens and closes its file, as before.
"""

from __future__ import annotations

import os
import sys
import threading
from collections import OrderedDict
from pathlib import Path

from ..fs.reading import open_regular

# an at-once rewind reads one pack and one or two logs; a fold or merge a few logs more
HELD_MAX = 0 if sys.platform == "win32" else 8


class Held:
    """One open descriptor and how many reads use it now; closed by the last of them
    once dropped."""

    __slots__ = ("dropped", "fd", "users")

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.users = 1
        self.dropped = False


class HeldFiles:
    """Open read descriptors by pack or log id, at most ``limit``; thread-safe."""

    def __init__(self, limit: int = HELD_MAX) -> None:
        self.limit = limit
        self._lock = threading.Lock()
        self._held: OrderedDict[str, Held] = OrderedDict()

    def take(self, key: str, path: Path) -> tuple[Held, os.stat_result]:
        """A descriptor on the regular file at ``path`` (held under ``key``) and its
        ``fstat``; handed back with ``give_back``. Raises as ``open_regular``."""
        with self._lock:
            held = self._held.get(key)
            if held is not None:
                held.users += 1
                self._held.move_to_end(key)
        if held is not None:
            try:
                st: os.stat_result | None = os.fstat(held.fd)
            except OSError:
                st = None
            if st is not None and st.st_nlink > 0:
                return held, st
            # its name is gone (removed, or replaced by a rename): the name opened again
            with self._lock:
                if self._held.get(key) is held:
                    del self._held[key]
                held.dropped = True
            self.give_back(held)
        fd = open_regular(path)
        fresh = Held(fd)
        try:
            st = os.fstat(fd)
        except BaseException:
            os.close(fd)
            raise
        if self.limit <= 0:
            fresh.dropped = True  # nothing held: closed at its read's end
            return fresh, st
        out: list[Held] = []
        with self._lock:
            old = self._held.pop(key, None)
            if old is not None:  # another thread opened it meanwhile: the newer one kept
                out.append(old)
            self._held[key] = fresh
            while len(self._held) > self.limit:
                out.append(self._held.popitem(last=False)[1])
        self._drop_all(out)
        return fresh, st

    def give_back(self, held: Held) -> None:
        """The end of a read through ``take``'s descriptor."""
        with self._lock:
            held.users -= 1
            if held.users > 0 or not held.dropped:
                return
        os.close(held.fd)

    def drop(self, keys: set[str]) -> None:
        """Close the descriptors of ``keys`` (packs and logs gone from the folder); one in
        use is closed by its last read."""
        with self._lock:
            out = [self._held.pop(k) for k in keys & self._held.keys()]
        self._drop_all(out)

    def close(self) -> None:
        """Close every descriptor (a store closed); one in use is closed by its last read."""
        with self._lock:
            out = list(self._held.values())
            self._held.clear()
        self._drop_all(out)

    def __len__(self) -> int:
        return len(self._held)

    def _drop_all(self, out: list[Held]) -> None:
        for held in out:
            with self._lock:
                held.dropped = True
                unused = held.users == 0
            if unused:
                os.close(held.fd)
