"""What renaming new content over 10 existing files costs, and what of it a second name
for each old file moves out (``rewind/apply.py``, ``Applier._keep_replaced``).

Per round: 10 files of 20 KB written and synced (as a workspace's files are), 10 new
contents of 9 KB written (not synced, as a rewind writes them), then either renamed over
the old files, or each old file linked to a second name first and renamed over; the
second names are unlinked after the timed part ("later"), as ``Applier.release`` does
after the server has answered. Both ways alternate round by round:

    python bench/probes/rewind/rename_replaced.py --folder bench/work/rename --rounds 8
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import time
from pathlib import Path


def one(folder: Path, keep: bool) -> tuple[float, float]:
    old = [folder / f"t{i}" for i in range(10)]
    new = [folder / f"n{i}" for i in range(10)]
    kept = [folder / f"k{i}" for i in range(10)]
    for p in old:
        p.write_bytes(os.urandom(20_000))
    os.sync()
    for p in new:
        p.write_bytes(os.urandom(3_000) * 3)
    t = time.perf_counter()
    for o, n, k in zip(old, new, kept, strict=True):
        if keep:
            os.link(o, k)
        os.rename(n, o)
    request = time.perf_counter() - t
    t = time.perf_counter()
    for k in kept:
        if keep:
            os.unlink(k)
    return request, time.perf_counter() - t


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--folder", type=Path, required=True, help="scratch folder (made, removed)")
    ap.add_argument("--rounds", type=int, default=8)
    a = ap.parse_args(argv)
    a.folder.mkdir(parents=True, exist_ok=True)
    times: dict[bool, list[tuple[float, float]]] = {False: [], True: []}
    load = os.getloadavg()[0]
    try:
        for _ in range(a.rounds):
            for keep in (False, True):
                times[keep].append(one(a.folder, keep))
    finally:
        shutil.rmtree(a.folder)
    print(f"load {load:.2f} -> {os.getloadavg()[0]:.2f}, {a.rounds} rounds, ms for 10 files")
    for keep, rows in times.items():
        req = [r * 1000 for r, _ in rows]
        later = [lt * 1000 for _, lt in rows]
        print(f"  {'link, rename' if keep else 'rename over':13s} request median "
              f"{statistics.median(req):6.2f} (min {min(req):.2f}, max {max(req):.2f})  "
              f"later {statistics.median(later):6.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
