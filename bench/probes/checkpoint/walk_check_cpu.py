"""A full walk in one process (no fork) of a recorded workspace, with the walk's compiled
folder check (``Scanner._compiled_check``) and without it, alternating; the process's CPU.

    python bench/probes/checkpoint/walk_check_cpu.py WORKSPACE [--rounds 10]

The workspace must have a store whose folders are recorded (two checkpoints).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

from turnback import Store
from turnback.snapshot import prescan


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("workspace")
    ap.add_argument("--rounds", type=int, default=10)
    a = ap.parse_args()
    compiled = prescan.compiled_parts
    if compiled is None:
        raise SystemExit("the compiled folder check is not built here (scripts/setup.sh)")
    got: dict[str, list[float]] = {"compiled": [], "python": []}
    load0 = " ".join(f"{x:.2f}" for x in os.getloadavg())
    with Store.open(a.workspace) as s:
        s.scanner.fork_verify = False
        for i in range(a.rounds):
            for k in ("compiled", "python") if i % 2 == 0 else ("python", "compiled"):
                prescan.compiled_parts = compiled if k == "compiled" else None
                c0 = time.process_time()
                s.scanner.scan(write=True)
                got[k].append((time.process_time() - c0) * 1000)
    print("load", load0, "->", " ".join(f"{x:.2f}" for x in os.getloadavg()))
    for k, v in got.items():
        print(f"{k:9s} full walk CPU median {statistics.median(v):6.1f} min {min(v):6.1f} ms")


if __name__ == "__main__":
    main()
