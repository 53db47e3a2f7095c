"""The small blobs this process's recent checkpoints stored, kept to be read back without a
pack block's decode.

A rewind's targets are read out of pack blocks: a block decoded from its start up to the
object's end, ~0.75 M instructions for a 6 KB file in a 64 KiB block (bench/RESULTS.md,
branch ``rewind37``). A target this process stored a little earlier (an undo reads the
files its rewind's safety checkpoint just stored; a rewind of a turn reads what the turns
before it stored of the files an agent edits again) is kept here as the bytes that were
hashed into its name, so no block is decoded for it.

Only what a small batch stored is kept (a checkpoint's, a rewind's safety checkpoint's, a
preparation's: one log frame, ``PackWriter.seal``), not what a batch of more than 8 MiB
compressed or 4,096 objects packs (a first checkpoint of any but a small workspace). A read
checks the bytes against the name as every read of the store does (``ObjectStore._raw``),
so an entry can never stand for another object. Bounded in bytes (``RECENT_BYTES``), the
oldest dropped first; emptied after a gc (``gc.forget_caches``, ``StoreState._check_gc``),
so an object a gc removed is not read from here by a rewind.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

import blake3

# What is kept at most, in object bytes (``<type> NUL <content>``): a 10-file checkpoint of
# the benchmark's workspace stores ~60 KB, so this holds about the last hundred of them.
RECENT_BYTES = 8 << 20
# A larger blob is not kept (it would push out many small ones); a rewind's preload takes
# it from its block as before.
RECENT_MAX_OBJECT = 256 << 10


class RecentBlobs:
    """Blobs by name, as their stored bytes, in the order kept; ``bound`` bytes at most.

    A batch offers its blobs as it stores them (``offer``); they are kept when the batch
    ends as a small one (``keep_offered``) and forgotten otherwise (``drop_offered``).
    """

    def __init__(self, bound: int = RECENT_BYTES, max_object: int = RECENT_MAX_OBJECT) -> None:
        self.bound = bound
        self.max_object = max_object
        self._lock = threading.Lock()
        self._kept: OrderedDict[str, bytes] = OrderedDict()
        self._bytes = 0  # held in _kept
        self._offered: list[tuple[str, bytes]] = []
        self._offered_bytes = 0

    @property
    def held_bytes(self) -> int:
        return self._bytes

    def offer(self, name: str, raw: bytes) -> None:
        """``raw`` (``blob NUL content``, hashed into ``name`` by the writer) was stored by
        the batch under way: kept if that batch ends small. A batch that stores more than
        the bound offers no more (a large one is not kept at all)."""
        if len(raw) > self.max_object:
            return
        with self._lock:
            if self._offered_bytes + len(raw) > self.bound:
                return
            self._offered.append((name, raw))
            self._offered_bytes += len(raw)

    def keep_offered(self) -> None:
        """The batch ended as a small one: keep what it offered, dropping the oldest past
        the bound."""
        with self._lock:
            offered, self._offered, self._offered_bytes = self._offered, [], 0
            for name, raw in offered:
                old = self._kept.pop(name, None)
                if old is not None:
                    self._bytes -= len(old)
                self._kept[name] = raw
                self._bytes += len(raw)
            while self._bytes > self.bound and self._kept:
                self._bytes -= len(self._kept.popitem(last=False)[1])

    def drop_offered(self) -> None:
        """The batch failed or went to a pack: nothing it offered is kept."""
        with self._lock:
            self._offered, self._offered_bytes = [], 0

    def get(self, name: str) -> bytes | None:
        """``name``'s stored bytes if kept and still matching the name, else None."""
        with self._lock:
            raw = self._kept.get(name)
            if raw is None:
                return None
            self._kept.move_to_end(name)
        if blake3.blake3(raw).hexdigest() == name:
            return raw
        self._forget(name)  # never served for another name: dropped, read from the store
        return None

    def _forget(self, name: str) -> None:
        with self._lock:
            raw = self._kept.pop(name, None)
            if raw is not None:
                self._bytes -= len(raw)

    def clear(self) -> None:
        """Forget everything kept (a gc removed objects, in any process)."""
        with self._lock:
            self._kept.clear()
            self._bytes = 0
            self._offered, self._offered_bytes = [], 0
