"""How many pack files a small at-once checkpoint and rewind look at (``ObjectStore._in_pack``:
a write's hit in a known pack counts only while the pack's file is there, one ``stat`` a
pack a batch). The same rounds as ``atonce_parts.py``: 10 edits and a checkpoint, 10 more
and a rewind to it. Counts, not timings: they do not depend on the machine's load.

    python bench/redteam8_pack_looks.py --workspace /work/benchdata/redteam8/ws --rounds 16
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "server"))

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
    in_pack = ObjectStore._in_pack

    def counted(self: ObjectStore, name: str) -> bool:
        found = in_pack(self, name)
        hits[0] += found
        return found

    ObjectStore._in_pack = counted  # type: ignore[method-assign]
    store = Store.open(args.workspace)
    per: dict[str, list[tuple[int, int]]] = {"checkpoint": [], "rewind": []}
    try:
        store.checkpoint(label="walk")
        ed = Editor(args.workspace, seed=int(time.time()))
        for _ in range(args.rounds):
            hits[0] = 0
            cp = store.checkpoint(label="at once", dirty=set(ed.edit(10)))
            # every pack file looked at was there, so each is in the batch's set
            per["checkpoint"].append((hits[0], len(store.objects._seen_packs)))
            hits[0] = 0
            store.rewind(cp.id, dirty=set(ed.edit(10)), finish_later=True)
            per["rewind"].append((hits[0], len(store.objects._seen_packs)))
            store.finish_rewind()
    finally:
        store.close()
    for phase, rows in per.items():
        print(f"{phase}: hits in known packs {[h for h, _ in rows]}, "
              f"pack files looked at {[n for _, n in rows]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
