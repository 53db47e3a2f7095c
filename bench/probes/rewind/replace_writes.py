"""What one whole-file replacement costs, in CPU: the store's files through its held folders
(``atomic_write``, and with ``keep_open`` as the stat cache writes), a folder's file through
``replace_file`` (the listing's caches, pack indexes), a file outside any store by path.
Prints the median µs of CPU a write over ``--rounds`` rounds of ``--writes`` writes each,
with the load average before and after; ``--src DIR`` imports ``turnback`` from another
commit's ``server/`` (``git archive REF server``) for A/B runs, alternated by the caller:

    python bench/probes/rewind/replace_writes.py --dir /work/benchdata/tidy/w
    python bench/probes/rewind/replace_writes.py --dir … --src base/server
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parents[2]  # bench/ (this probe is in bench/probes/<topic>/)
_SRC = sys.argv[sys.argv.index("--src") + 1] if "--src" in sys.argv[:-1] else None
sys.path.insert(0, _SRC or str(HERE.parent / "server"))

from turnback import Store  # noqa: E402
from turnback.fs.atomic import atomic_write, atomic_write_chunks  # noqa: E402
from turnback.fs.folders import open_root  # noqa: E402
from turnback.fs.replacing import replace_file  # noqa: E402

DATA = b"x" * 300  # a listing cache's size: the write's own bytes are not what is measured


def _per_write(write: Callable[[], None], writes: int, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        t = time.process_time()
        for _ in range(writes):
            write()
        times.append((time.process_time() - t) / writes * 1e6)
    return statistics.median(times)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", type=Path, required=True, help="a folder to make (removed after)")
    ap.add_argument("--writes", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--src", default=None)
    a = ap.parse_args()
    ws, outside = a.dir / "ws", a.dir / "outside"
    ws.mkdir(parents=True)
    outside.mkdir()
    try:
        load = os.getloadavg()
        with Store.open(ws) as store, open_root(str(outside)) as folder:
            in_store = store.root / "cache" / "bench.json"

            def keep_open() -> None:
                fd = atomic_write_chunks(in_store, (DATA,), fsync=False, keep_open=True)
                assert fd is not None
                os.close(fd)

            cases: dict[str, Callable[[], None]] = {
                "atomic_write, a store's file": lambda: atomic_write(in_store, DATA, fsync=False),
                "atomic_write_chunks keep_open, a store's file": keep_open,
                "replace_file through a folder": lambda: replace_file(folder, "c.json", DATA),
                "atomic_write by path": lambda: atomic_write(outside / "p.json", DATA,
                                                             fsync=False),
            }
            for name, write in cases.items():
                write()  # the folders held, the modules warm
                print(f"{name:48} {_per_write(write, a.writes, a.rounds):7.2f} µs CPU a write")
        print(f"load {load[0]:.2f} -> {os.getloadavg()[0]:.2f}; src {_SRC or 'this tree'}")
    finally:
        shutil.rmtree(a.dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
