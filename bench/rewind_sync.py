"""A rewind's files made durable: by the descriptors it wrote them through, or by ``syncfs``.

In one process on the workspace's own store (``Store.open``, as the server holds it), per
round: 10 files edited and checkpointed (told the dirty paths, as the watcher tells the
server), 10 more edited, a rewind to that checkpoint asked at once. The rounds alternate
between the two ways of syncing (``syncfs`` forced by allowing no held file), so both meet
the same load. Prints the medians of the whole rewind and of its sync alone:

    python bench/rewind_sync.py --workspace bench/work/ws --rounds 20

``--dirty-mb N``: before each rewind, N MB written (not synced) to a scratch file beside
the workspace, as another process's output is (the shadow git's index is 6.5 MB). The
workspace needs a store already (``turnback checkpoint`` once). Files are left as the last
rewind made them.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from edits import Editor

HERE = Path(__file__).resolve().parent


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workspace", type=Path, default=HERE / "work" / "ws")
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--dirty-mb", type=float, default=0.0)
    a = ap.parse_args(argv)
    from turnback import Store
    from turnback.store import rewind_ops

    held_max = rewind_ops.SYNC_FILES_MAX
    synced: list[float] = []
    real_sync = rewind_ops.RewindOps._sync_applied

    def timed_sync(self: Any, applier: Any) -> None:
        t0 = time.perf_counter()
        real_sync(self, applier)
        synced.append(time.perf_counter() - t0)

    rewind_ops.RewindOps._sync_applied = timed_sync  # type: ignore[method-assign]
    store = Store.open(a.workspace)
    store.checkpoint(label="walk")
    ed = Editor(a.workspace, seed=int(time.time()))
    scratch = a.workspace.with_name(a.workspace.name + ".dirty")
    junk = os.urandom(int(a.dirty_mb * 1024 * 1024))
    load0 = os.getloadavg()[0]
    got: dict[str, dict[str, list[float]]] = {
        k: {"rewind": [], "sync": []} for k in ("held", "syncfs")}
    try:
        for i in range(a.rounds):
            for way in ("held", "syncfs") if i % 2 == 0 else ("syncfs", "held"):
                rewind_ops.SYNC_FILES_MAX = held_max if way == "held" else 0  # type: ignore[misc]
                cp = store.checkpoint(label=f"{way} {i}", dirty=set(ed.edit(10)))
                dirty = set(ed.edit(10))
                if junk:
                    scratch.write_bytes(junk)
                t0 = time.perf_counter()
                store.rewind(cp.id, dirty=dirty)
                got[way]["rewind"].append(time.perf_counter() - t0)
                got[way]["sync"].append(synced[-1])
    finally:
        store.close()
        scratch.unlink(missing_ok=True)
    print(json.dumps({"load": [round(load0, 2), round(os.getloadavg()[0], 2)],
                      "rounds": a.rounds, "dirtyMB": a.dirty_mb, "medianMs": {
                          way: {k: round(statistics.median(v) * 1000, 2) for k, v in d.items()}
                          for way, d in got.items()}}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
