"""Counts for branch trust29 (bench/RESULTS.md, "Trust: the last session's left-open items").

``atonce DIR``: 20 at-once checkpoints (``Store.checkpoint_now``, one changed file each) with
the store named by ``--store`` (``store_dir``), in a scratch folder under DIR; run it under
``strace -f -c`` to count the system calls (the root's look is ``newfstatat``).

``kind DIR``: the instructions to tell a recorded root's kind in a fresh process, marked for
callgrind (``--dump-before=os_access``): dump 2 is the index look-up (``exists``), dump 3
the root tree's read (``get``). DIR holds 40 folders of 50 files, checkpointed once.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # bench/: the shared modules
from strace_counts import warm_named_store

from turnback import Store


def atonce(where: Path, n: int = 20) -> None:
    with warm_named_store(where, 50, "store") as (ws, store):
        made = 0
        for i in range(n):
            (ws / "f1.txt").write_text(f"v{i}\n")
            made += store.checkpoint_now({"f1.txt"}) is not None
            store.save_scan_cache()
    print(f"{made} of {n} at once", file=sys.stderr)


def kind(ws: Path) -> None:
    if not (ws / ".turnback").exists():
        for d in range(40):
            (ws / f"d{d}").mkdir(parents=True)
            for f in range(50):
                (ws / f"d{d}" / f"f{f}.txt").write_text(f"folder {d} file {f}\n" * 20)
        with Store.open(ws, create=True) as store:
            store.checkpoint()
        return  # the store made: measure in the next, fresh process
    with Store.open(ws) as store:
        root = store.checkpoints()[-1].tree
        os.access("/@@open", os.F_OK)
        store.objects.exists(root)
        os.access("/@@exists", os.F_OK)
        store.objects.get(b"tree", root)
        os.access("/@@get", os.F_OK)


if __name__ == "__main__":
    (atonce if sys.argv[1] == "atonce" else kind)(Path(sys.argv[2]))
