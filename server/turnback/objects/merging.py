"""Which object logs and packs a merge folds into one pack, and when one is due.

Every fresh process that stores objects appends to a log of its own (``packlog.py``),
and each open reads the end of every log (``records``) and a checkpoint's first batch
every log's frames (``PackReader.refresh``): 0.50 / 2.21 / 8.09 ms of CPU at 10 / 100 /
400 logs (bench/RESULTS.md). So a process that wrote one merges them all once there are
more than ``MERGE_AT`` (``Store.merge_logs``). The logs alone would leave one pack per
merge, and every pack index is read by a checkpoint's first batch too; so the packs a
merge would otherwise leave beside a bigger one join it, smallest first, as git's
geometric repack does: a pack joins while it holds at most ``GROWTH`` times the objects
merged so far. Counted in objects, not bytes: a merge's work is a read, a hash check and
a write per object, and a log's bytes (a frame per checkpoint, each with its record and
its own small zstd blocks) are several times what the same objects take in a pack, so in
bytes every merge folded the whole last pack again (122 ms of CPU at the 23rd merge and
growing, bench/RESULTS.md). The packs left then grow at least threefold from one to the
next, so their count stays near log3 of the store's objects. A pack over ``PACK_MAX``
bytes or ``PACK_OBJECTS`` objects (a first checkpoint's, an import's, a merge's that
reached it) is left to gc: the merge a hook pays for stays small (at most 60 ms of CPU
over 10,000 hooks, bench/RESULTS.md), and such packs add one per several hundred hooks,
each a sorted index the store's objects need anyway.
"""

from __future__ import annotations

from .packs import SORTED_MIN

MERGE_AT = 16  # more logs than this: the process that wrote one merges them
GROWTH = 2
PACK_MAX = 16 << 20  # bytes: bigger packs are merged by gc only
# objects: a pack this large is read as its sorted index's bytes (``packs.SORTED_MIN``),
# a smaller one as a dict entry a row, by every process's first batch; a merge then folds
# at most ~3 times that
PACK_OBJECTS = SORTED_MIN


def choose(logs: dict[str, int], packs: dict[str, tuple[int, int]]) -> list[str]:
    """The logs (all of them) and the packs (fewest objects first) a merge takes, given
    each log's object count and each pack's object count and bytes."""
    chosen = sorted(logs)
    merged = sum(logs.values())
    for pack, (count, size) in sorted(packs.items(), key=lambda p: (p[1][0], p[0])):
        if size > PACK_MAX or count >= PACK_OBJECTS or count > GROWTH * merged:
            break
        chosen.append(pack)
        merged += count
    return chosen
