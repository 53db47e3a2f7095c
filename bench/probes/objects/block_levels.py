"""What zstd levels cost an at-once checkpoint's two blocks, in one process.

Runs ``Store.checkpoint(dirty=…, save_later=True)`` (what the server runs for "10 files
changed, asked at once") round after round on ``--workspace``, alternating the given level
pairs round by round, so that every pair sees the same load and the same store:

    python bench/probes/objects/block_levels.py --workspace bench/work/ws --rounds 120 -- 1,99 -1,1

A pair is ``TREE_LEVEL,HELD_LEVEL`` (``objects/packs.py``; a held level of 99 lowers no
block: the configured level, 3, as before branch ``atonce16e``). Prints each pair's median
thread CPU per checkpoint and the bytes its frame added to the object log, then, for the
blocks of the last pair's rounds, each level's compression time and size on the same bytes.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[2]  # bench/ (this probe is in bench/probes/<topic>/)
sys.path.insert(0, str(HERE.parent / "server"))

import zstandard  # noqa: E402

sys.path.insert(0, str(HERE))  # the shared modules
from edits import Editor  # noqa: E402

from turnback.objects import packs  # noqa: E402
from turnback.store.facade import Store  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workspace", type=Path, default=HERE / "work" / "ws")
    ap.add_argument("--rounds", type=int, default=120)
    ap.add_argument("pairs", nargs="+", help="TREE_LEVEL,HELD_LEVEL")
    a = ap.parse_args(argv)
    pairs = [tuple(int(x) for x in p.split(",")) for p in a.pairs]
    blocks: list[tuple[bool, bytes]] = []
    real = packs.PackWriter._flush_block

    def spy(self: packs.PackWriter, blk: packs._Block) -> None:
        if blk.buf:
            blocks.append((blk is self._trees, b"".join(blk.buf)))
        real(self, blk)

    store = Store.open(a.workspace)
    store.checkpoint(label="walk")  # the server's walk at start, and its warm-up
    store.warm_trees()
    ed = Editor(a.workspace, seed=int(time.time()))
    logs = store.root / "objects" / "log"
    cpu: dict[tuple[int, ...], list[float]] = {p: [] for p in pairs}
    grew: dict[tuple[int, ...], list[int]] = {p: [] for p in pairs}
    load = [os.getloadavg()[0]]
    packs.PackWriter._flush_block = spy  # type: ignore[method-assign]
    try:
        for i in range(a.rounds):
            pair = pairs[i % len(pairs)]
            packs.TREE_LEVEL, packs.HELD_LEVEL = pair
            dirty = set(ed.edit(10))
            before = sum(p.stat().st_size for p in logs.iterdir()) if logs.exists() else 0
            if pair != pairs[-1]:
                mark = len(blocks)
            t = time.thread_time()
            store.checkpoint(label="at once", dirty=dirty, save_later=True)
            cpu[pair].append(time.thread_time() - t)
            grew[pair].append(sum(p.stat().st_size for p in logs.iterdir()) - before)
            if pair != pairs[-1]:
                del blocks[mark:]
            store.save_scan_cache()
    finally:
        packs.PackWriter._flush_block = real  # type: ignore[method-assign]
        store.close()
    load.append(os.getloadavg()[0])
    print(f"{a.rounds} rounds, load {load[0]:.2f} -> {load[1]:.2f}")
    for pair in pairs:
        ms = statistics.median(cpu[pair]) * 1000
        print(f"  trees {pair[0]:3d}, held {pair[1]:3d}: CPU {ms:.3f} ms (median), "
              f"frame {statistics.median(grew[pair]):,.0f} B")
    for trees in (True, False):
        got = [b for t, b in blocks if t == trees]
        if not got:
            continue
        print(f"  {'tree' if trees else 'file'} blocks: {len(got)}, "
              f"{statistics.median(len(b) for b in got):,.0f} B raw (median)")
        for level in (-5, -1, 1, 3):
            cctx = zstandard.ZstdCompressor(level=level)
            took, size = [], []
            for b in got:
                t = time.thread_time_ns()
                size.append(len(cctx.compress(b)))
                took.append(time.thread_time_ns() - t)
            print(f"    level {level:2d}: {statistics.median(took) / 1000:.0f} us, "
                  f"{statistics.median(size):,.0f} B")
    return 0


if __name__ == "__main__":
    sys.exit(main())
