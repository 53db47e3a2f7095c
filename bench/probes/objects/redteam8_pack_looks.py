"""How many pack files a small at-once checkpoint and rewind look at (``ObjectStore._in_pack``:
a write's hit in a known pack counts only while the pack's file is there, one ``stat`` a
pack a batch). The same rounds as ``atonce_parts.py``: 10 edits and a checkpoint, 10 more
and a rewind to it. The counts do not depend on the machine's load; the time spent in
``_in_pack`` (which includes the index look-up the code before did too) does.

    python bench/probes/objects/redteam8_pack_looks.py --workspace /work/benchdata/redteam8/ws \\
        --rounds 16
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[2]  # bench/ (this probe is in bench/probes/<topic>/)
sys.path.insert(0, str(HERE.parent / "server"))

sys.path.insert(0, str(HERE))  # the shared modules
from edits import Editor  # noqa: E402

from turnback.objects.objectstore import ObjectStore  # noqa: E402
from turnback.store.facade import Store  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workspace", type=Path, required=True)
    ap.add_argument("--rounds", type=int, default=16)
    args = ap.parse_args()
    hits = [0]
    spent = [0.0]  # in _in_pack (the look-up head also did, and the stats): an upper bound
    in_pack = ObjectStore._in_pack

    def counted(self: ObjectStore, name: str) -> bool:
        t = time.perf_counter()
        found = in_pack(self, name)
        spent[0] += time.perf_counter() - t
        hits[0] += found
        return found

    ObjectStore._in_pack = counted  # type: ignore[method-assign]
    looked = [0.0]  # in the look at a pack's file alone
    exists = os.path.exists

    def timed_exists(path: str) -> bool:
        if not path.endswith(".pack"):
            return exists(path)
        t = time.perf_counter()
        there = exists(path)
        looked[0] += time.perf_counter() - t
        return there

    os.path.exists = timed_exists
    store = Store.open(args.workspace)
    per: dict[str, list[tuple[int, int]]] = {"checkpoint": [], "rewind": []}
    cost: list[float] = []
    stats: list[float] = []
    try:
        store.checkpoint(label="walk")
        ed = Editor(args.workspace, seed=int(time.time()))
        for _ in range(args.rounds):
            hits[0], spent[0], looked[0] = 0, 0.0, 0.0
            cp = store.checkpoint(label="at once", dirty=set(ed.edit(10)))
            # every pack file looked at was there, so each is in the batch's set
            per["checkpoint"].append((hits[0], len(store.objects._seen_packs)))
            cost.append(spent[0])
            stats.append(looked[0])
            hits[0] = 0
            store.rewind(cp.id, dirty=set(ed.edit(10)), finish_later=True)
            per["rewind"].append((hits[0], len(store.objects._seen_packs)))
            store.finish_rewind()
    finally:
        store.close()
    print(f"time in _in_pack a checkpoint (us): {[round(c * 1e6) for c in cost]}")
    print(f"... in its looks at pack files (us): {[round(c * 1e6) for c in stats]}")
    for phase, rows in per.items():
        print(f"{phase}: hits in known packs {[h for h, _ in rows]}, "
              f"pack files looked at {[n for _, n in rows]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
