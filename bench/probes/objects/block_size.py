"""What a pack's block size costs a first checkpoint and saves a rewind's reads, in-process.

For each block size given (KiB), in turn and ``--repeat`` times: the workspace's store is
removed, a first checkpoint made with ``objects/packs.BLOCK_RAW`` set to that size (its wall
and CPU time, and the store's bytes on disk), then ``--reads`` files of it read back cold,
as a rewind reads its targets (the block cache emptied before each read; CPU a read).
``--rounds N``: then N checkpoints of 10 edited files each (``edits.Editor``), and the store's
bytes again: the status table's "store after first + 100 x 10 files" row; the edited files
are put back as they were after each size, so every size sees the same workspace:

    python bench/probes/objects/block_size.py --workspace /work/benchdata/<you>/ws --sizes \\
        256,64 --repeat 2
    python bench/probes/objects/block_size.py --workspace /work/benchdata/<you>/ws --sizes \\
        64,32,16 --rounds 100

Prints one line a size and round with the load average beside it.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[2]  # bench/ (this probe is in bench/probes/<topic>/)
sys.path.insert(0, str(HERE.parent / "server"))

sys.path.insert(0, str(HERE))  # the shared modules
from edits import Editor  # noqa: E402

from turnback.objects import packs  # noqa: E402
from turnback.objects.objectstore import BLOB  # noqa: E402
from turnback.objects.trees import DIR, LINK  # noqa: E402
from turnback.store.facade import Store  # noqa: E402


def store_bytes(root: Path) -> int:
    """Bytes the store's files take on disk (allocated blocks, as ``du``)."""
    total = 0
    for dirpath, _dirs, files in os.walk(root):
        for f in files:
            total += os.lstat(os.path.join(dirpath, f)).st_blocks * 512
    return total


def edit_rounds(store: Store, ws: Path, rounds: int, seed: int) -> None:
    """``rounds`` checkpoints of 10 edited files each; the files put back after."""
    ed = Editor(ws, seed=seed)
    originals: dict[str, bytes] = {}
    try:
        for _ in range(rounds):
            state = ed.rng.getstate()  # the files edit() will pick, read before it edits them
            picks = ed.rng.sample(ed.files, 10)
            ed.rng.setstate(state)
            originals.update({k: v for k, v in ed.snapshot(picks).items()
                              if k not in originals})
            store.checkpoint(label="round", dirty=set(ed.edit(10)))
    finally:
        ed.apply(originals)


def one(ws: Path, kib: int, reads: int, seed: int, rounds: int = 0) -> str:
    packs.BLOCK_RAW = kib << 10
    shutil.rmtree(ws / ".turnback", ignore_errors=True)
    load0 = os.getloadavg()[0]
    w, c = time.perf_counter(), time.process_time()
    with Store.open(ws, create=True) as store:
        cp = store.checkpoint(label="first")
        first_wall, first_cpu = time.perf_counter() - w, time.process_time() - c
        files = [e for e in store.trees.flatten(cp.tree).values()
                 if e.mode not in (DIR, LINK)]
        picks = random.Random(seed).sample(files, min(reads, len(files)))
        reader = store.objects.packs
        cpu: list[float] = []
        for e in picks:
            with reader._lock:  # a bench empties the cache it measures
                reader._blocks.clear()
                reader._cached = 0
            t = time.process_time()
            store.objects.get(BLOB, e.hash)
            cpu.append(time.process_time() - t)
        size = store_bytes(ws / ".turnback")
        after = ""
        if rounds:
            edit_rounds(store, ws, rounds, seed)
            after = f", {store_bytes(ws / '.turnback') / 1e6:.1f} MB after {rounds} x 10 files"
    return (f"{kib:4d} KiB blocks: first checkpoint {first_wall:.2f} s wall, {first_cpu:.2f} s "
            f"CPU; store {size / 1e6:.1f} MB{after}; cold read CPU median "
            f"{statistics.median(cpu) * 1e3:.3f} ms, mean {statistics.fmean(cpu) * 1e3:.3f} ms "
            f"({len(cpu)} reads); load {load0:.2f} -> {os.getloadavg()[0]:.2f}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workspace", type=Path, required=True)
    ap.add_argument("--sizes", default="256,64")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--reads", type=int, default=300)
    ap.add_argument("--rounds", type=int, default=0, help="then N checkpoints of 10 files")
    a = ap.parse_args()
    sizes = [int(s) for s in a.sizes.split(",")]
    for r in range(a.repeat):
        for kib in sizes:
            print(one(a.workspace, kib, a.reads, seed=r, rounds=a.rounds), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
