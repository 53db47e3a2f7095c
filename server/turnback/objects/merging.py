"""Which object logs and packs a merge folds into one pack, and when one is due.

Every fresh process that stores objects appends to a log of its own (``packlog.py``),
and each open reads the end of every log (``records``) and a checkpoint's first batch
every log's frames (``PackReader.refresh``): 0.50 / 2.21 / 8.09 ms of CPU at 10 / 100 /
400 logs (bench/RESULTS.md). So a process that wrote one merges them all once there are
more than ``MERGE_AT`` (``Store.merge_logs``). The logs alone would leave one pack per
merge, and every pack index is read by a checkpoint's first batch too; so the packs a
merge would otherwise leave beside a bigger one join it, smallest first, as git's
geometric repack does: a pack joins while it is at most ``GROWTH`` times the bytes
merged so far. The packs left then grow at least threefold from one to the next, so
their count stays near log3 of the store's bytes. A pack over ``PACK_MAX`` (a first
checkpoint's, an import's) is left to gc: a hook never rewrites it.
"""

from __future__ import annotations

MERGE_AT = 16  # more logs than this: the process that wrote one merges them
GROWTH = 2
PACK_MAX = 16 << 20  # bytes: bigger packs are merged by gc only


def choose(logs: dict[str, int], packs: dict[str, int]) -> list[str]:
    """The logs (all of them) and the packs (by size, smallest first) a merge takes, given
    each one's size in bytes."""
    chosen = sorted(logs)
    merged = sum(logs.values())
    for pack, size in sorted(packs.items(), key=lambda p: (p[1], p[0])):
        if size > PACK_MAX or size > GROWTH * merged:
            break
        chosen.append(pack)
        merged += size
    return chosen
