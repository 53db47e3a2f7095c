"""Red-team (issue 16, branch redteam5): how long the server's warm-up after a walk holds
the folder's write lock on a big workspace (42,000 folders of one file, three levels).

A first checkpoint, then a no-op walk in a new ``Store`` (records reused, no tree
decoded), then core's ``_then_warm`` as the server runs it after the answer; prints its
wall and CPU time, the trees read and the entries held.

    .venv/bin/python bench/probes/server/redteam5_warm42k.py /work/benchdata/redteam5/ws42k
"""

from __future__ import annotations

import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "server"))

from turnback import Store
from turnback.server.core import _then_warm


def main() -> None:
    ws = Path(sys.argv[1])
    shutil.rmtree(ws, ignore_errors=True)
    for d in range(42000):
        p = ws / f"a{d // 1000}" / f"b{d // 30}" / f"c{d}"
        p.mkdir(parents=True)
        (p / "f.txt").write_text(str(d))
    with Store.open(ws, create=True) as store:
        store.checkpoint()
    with Store.open(ws) as store:
        store.checkpoint()
        wall, cpu = time.perf_counter(), time.process_time()
        _then_warm(None)(store)
        print(f"_then_warm: {(time.perf_counter() - wall) * 1000:.0f} ms wall, "
              f"{(time.process_time() - cpu) * 1000:.0f} ms CPU, "
              f"{store.trees.held} entries held")
    shutil.rmtree(ws, ignore_errors=True)


if __name__ == "__main__":
    main()
