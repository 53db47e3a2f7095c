"""Counts for branch trust35 (bench/RESULTS.md, "Trust items left open by `trust33`,
`trust34`, `junk33` and `redteam42`-`redteam44` (branch `trust35`)").

``rewind DIR``: 20 at-once rewinds of one changed file (``Store.rewind(..., dirty=...,
finish_later=True)`` as the server asks it, then ``finish_rewind`` as it runs after its
answer), each after a checkpoint, the store named by ``--store``, in a scratch folder under
DIR. Run under ``strace -f -c``; the difference between two trees over 20 rounds is the
rewind's. The at-once checkpoint's count is ``bench/probes/server/trust29_counts.py atonce``.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # bench/: the shared modules
from strace_counts import warm_named_store


def rewind(where: Path, n: int = 20) -> None:
    with warm_named_store(where, 50, "store", label="base") as (ws, store):
        base = store.checkpoints()[-1]
        for i in range(n):
            (ws / "f1.txt").write_text(f"v{i}\n")
            store.rewind(base.id, dirty={"f1.txt"}, finish_later=True)
            store.finish_rewind()
        ops = len(store.oplog.all())
    print(f"{ops} rewinds recorded of {n}", file=sys.stderr)


if __name__ == "__main__":
    {"rewind": rewind}[sys.argv[1]](Path(sys.argv[2]))
