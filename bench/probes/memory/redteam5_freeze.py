"""Red-team (issue 23/16, branch redteam5): does the server's ``gc.freeze()`` after each
walk's warm-up grow memory without bound over many walks (watcher overflow resets)?

Each round: 5 files changed, a full walk (``checkpoint(dirty=None)``, what a reset
makes the next checkpoint do), then core's ``_then_warm`` as the server runs it after
the answer; 1,000 reference cycles of garbage made between rounds (a stand-in for
what the server's loop leaves for the collector). ``--cold`` empties the tree cache
before each warm-up (the worst case: every round reads and freezes every tree).
Prints RSS, the frozen objects' count and the cache's entries, per 10 rounds, then
how many frozen objects were garbage (unfrozen and collected at the end).

    .venv/bin/python bench/probes/memory/redteam5_freeze.py /work/benchdata/redteam5/freeze [--cold]
"""

from __future__ import annotations

import gc
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "server"))

from turnback import Store
from turnback.server.core import _then_warm


def rss_kb() -> int:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))


def main() -> None:
    ws, cold = Path(sys.argv[1]), "--cold" in sys.argv
    shutil.rmtree(ws, ignore_errors=True)
    for d in range(2000):
        folder = ws / f"d{d // 50}" / f"e{d}"
        folder.mkdir(parents=True)
        for f in range(10):
            (folder / f"f{f}.txt").write_text(f"{d}/{f}")
    warm, cpu = _then_warm(None), 0.0
    with Store.open(ws, create=True) as store:
        store.checkpoint()
        for rnd in range(1, 51):
            for k in range(5):
                (ws / f"d{(rnd + k) % 40}" / f"e{((rnd + k) % 40) * 50}" / "f0.txt"
                 ).write_text(f"round {rnd}")
            store.checkpoint(dirty=None)
            for _ in range(1000):
                a: list[object] = []
                a.append(a)
            if cold:
                store.trees.clear()
            started = time.process_time()
            warm(store)
            cpu += time.process_time() - started
            if rnd % 10 == 0 or rnd == 1:
                print(f"round {rnd:2d}: RSS {rss_kb() / 1024:.1f} MB, frozen "
                      f"{gc.get_freeze_count()}, trees held {store.trees.held}, warm-ups' "
                      f"CPU {cpu * 1000:.0f} ms so far", flush=True)
        gc.unfreeze()  # what the freezes kept that was garbage: found by a collection now
        print(f"unreachable once unfrozen: {gc.collect()} objects", flush=True)
    shutil.rmtree(ws, ignore_errors=True)


if __name__ == "__main__":
    main()
