"""Descriptors held over many rewinds, undos and gcs (bench/RESULTS.md, "A red-team pass
over `trust35` (branch `redteam47`)").

``python redteam47_fds.py DIR [N]``: a workspace and its store in a scratch folder under
DIR; 10 warm-up rounds, then N (200) rounds of a rewind (every other one finished later,
as a server's), an undo, and a gc every 20th round. Prints the process's open descriptors
(``/proc/self/fd``, Linux) before and after the N rounds and after the store's close: a
step that left one open would show N more.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from turnback import Store


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def main(where: Path, n: int) -> None:
    shutil.rmtree(where, ignore_errors=True)
    ws = where / "ws"
    ws.mkdir(parents=True)
    (ws / "a.txt").write_text("one")
    store = Store.open(ws)
    first = store.checkpoint(label="1")
    (ws / "a.txt").write_text("two")
    store.checkpoint(label="2")

    def round_(i: int) -> None:
        store.rewind(first.id, finish_later=i % 2 == 0)
        store.undo()
        if i % 20 == 0:
            store.gc()

    for i in range(10):
        round_(i)
    before = open_fds()
    for i in range(n):
        round_(i)
    after = open_fds()
    ops = len(store.oplog.all())
    store.close()
    print(f"{n} rounds ({ops} rewinds and undos recorded): descriptors {before} before, "
          f"{after} after, {open_fds()} after the close")
    shutil.rmtree(where, ignore_errors=True)


if __name__ == "__main__":
    main(Path(sys.argv[1]) / "fds", int(sys.argv[2]) if len(sys.argv) > 2 else 200)
