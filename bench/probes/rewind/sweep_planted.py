"""The cost of ``probeplace.sweep`` (each ``Store.open``) with N names of a probe's shape
planted in a store's root that it never removes (empty files of pid 1: a live process
started before them). Run under ``strace -c -f`` with N and with 0; the difference is the
planted names' share. Usage: python sweep_planted.py FOLDER N (FOLDER is made, and left
for the next run: remove it after).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from turnback.fs import probeplace, rewindnames


def main() -> None:
    root = Path(sys.argv[1])
    root.mkdir(exist_ok=True)
    n = int(sys.argv[2])
    for i in range(min(n, 1 << 16)):
        p = root / rewindnames.probe(1, f"{i:04x}")
        if not p.exists():
            p.write_bytes(b"")
    t = time.perf_counter()
    removed = probeplace.sweep(root)
    wall = time.perf_counter() - t
    print(f"{n} planted, {len(removed)} removed, sweep {wall:.4f} s")


if __name__ == "__main__":
    main()
