"""An at-once rewind's journal and reads, three ways, in turn in one process on one store,
so that each meets the same load (this machine's disk moves a run's median more than the
difference between two runs of different commits):

  A  the journal as format 2 wrote it: a new file, synced with the safety record, renamed
     into place, its folder synced; the targets read out of packs as each is written
  B  the journal written in place (format 3, ``OpLog.begin``); the targets read as before
  C  B, and the targets read while the journal's sync is waited for (``Applier.preload``)

Each round: 10 edits, an at-once checkpoint (``dirty``), 10 more edits, an at-once rewind
to it (``finish_later``, as the server does), then ``finish_rewind``. Prints each way's
median rewind wall time and CPU time (every thread: ``process_time``), with the load.

    python bench/probes/rewind/rewind_variants.py --workspace /work/benchdata/rewind16/ws \\
        --rounds 90
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parents[2]  # bench/ (this probe is in bench/probes/<topic>/)
sys.path.insert(0, str(HERE.parent / "server"))

sys.path.insert(0, str(HERE))  # the shared modules
from edits import Editor  # noqa: E402

from turnback.fs.atomic import atomic_write  # noqa: E402
from turnback.fs.jsonl import dumps  # noqa: E402
from turnback.rewind import signing  # noqa: E402
from turnback.rewind.apply import Applier  # noqa: E402
from turnback.rewind.oplog import OpLog  # noqa: E402
from turnback.store.facade import Store  # noqa: E402


def renamed_begin(self: OpLog, record: dict[str, Any], *, fsync: bool,
                  sync_with: Sequence[Path] = (), meanwhile: Callable[[], None] | None = None
                  ) -> None:
    """Format 2's ``OpLog.begin`` (``meanwhile`` is not done: nothing waits for it)."""
    atomic_write(self.journal, dumps(signing.sign(record)), fsync=fsync, sync_with=sync_with)


def no_preload(self: Applier, plan: object) -> None:
    return None


WAYS: dict[str, tuple[Any, Any]] = {
    "A": (renamed_begin, no_preload),
    "B": (OpLog.begin, no_preload),
    "C": (OpLog.begin, Applier.preload),
}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workspace", type=Path, default=HERE / "work" / "ws")
    ap.add_argument("--rounds", type=int, default=90)
    a = ap.parse_args()
    store = Store.open(a.workspace)
    store.checkpoint(label="walk")  # the full scan the server's start does
    store.warm_trees()  # as the server does after it
    ed = Editor(a.workspace, seed=int(time.time()))
    wall: dict[str, list[float]] = {k: [] for k in WAYS}
    cpu: dict[str, list[float]] = {k: [] for k in WAYS}
    load = [os.getloadavg()[0]]
    try:
        for i in range(a.rounds):
            way = "ABC"[i % 3]
            OpLog.begin, Applier.preload = WAYS[way]  # type: ignore[method-assign]
            cp = store.checkpoint(label="at once", dirty=set(ed.edit(10)))
            edited = set(ed.edit(10))
            w, c = time.perf_counter(), time.process_time()
            store.rewind(cp.id, dirty=edited, finish_later=True)
            wall[way].append(time.perf_counter() - w)
            cpu[way].append(time.process_time() - c)
            store.finish_rewind()
    finally:
        OpLog.begin, Applier.preload = WAYS["C"]  # type: ignore[method-assign]
        store.close()
    load.append(os.getloadavg()[0])
    print(f"{a.rounds} rounds, A/B/C in turn, load {load[0]:.2f} -> {load[1]:.2f}")
    for way in WAYS:
        q = statistics.quantiles(wall[way], n=4)
        print(f"  {way}: rewind wall median {statistics.median(wall[way]) * 1000:6.2f} ms "
              f"(quartiles {q[0] * 1000:6.2f} {q[2] * 1000:6.2f})  "
              f"cpu {statistics.median(cpu[way]) * 1000:6.2f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
