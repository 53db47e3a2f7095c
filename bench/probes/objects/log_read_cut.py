"""What a process's first object read costs when a log holds many frames (trust19).

``PackReader.refresh`` takes in at most ``packs.LOG_EAGER`` frames of a log at its first
look, the rest only for a name found nowhere else (``read_rest``). Each run is a fresh
process: ``Store.open``, then ``read_file`` of one file of the ``--which`` checkpoint
(``oldest``: in the log's first frames; ``newest``: past them in a long log, so the rest
is read), timed alone: CPU (``time.process_time``) and peak RSS (``ru_maxrss``). The median
of ``--repeat`` and the load average before and after are printed.

    python bench/probes/objects/log_read_cut.py --dir /work/benchdata/trust19/repair/ws \\
        --which newest \\
        [--src /work/benchdata/trust19/base/server]

``--dir``: a workspace (``bench/probes/objects/index_repair.py --build`` makes one of 10,000
checkpoints in one log; ``bench/probes/objects/planted_log.py --build`` one with a planted log).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[2]  # bench/ (this probe is in bench/probes/<topic>/)


def once(ws: Path, which: str, path: str) -> None:
    from turnback import Store

    with Store.open(ws) as store:
        cps = store.checkpoints()
        cp = cps[-1] if which == "newest" else cps[0]
        t = time.process_time()
        data = store.read_file(cp.id, path)
        cpu = time.process_time() - t
    assert data is not None
    print(f"{cpu * 1000:.1f} {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}")


def _load() -> str:
    return Path("/proc/loadavg").read_text().split()[0] if os.path.exists("/proc/loadavg") else "?"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", required=True, type=Path)
    ap.add_argument("--which", choices=("oldest", "newest"), default="newest")
    ap.add_argument("--path", default="a.txt")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--src", default=None)
    ap.add_argument("--once", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.once:
        sys.path.insert(0, a.src or str(HERE.parent / "server"))
        once(a.dir, a.which, a.path)
        return
    before = _load()
    runs, peak = [], 0
    for _ in range(a.repeat):
        cmd = [sys.executable, __file__, "--once", "--dir", str(a.dir), "--which", a.which,
               "--path", a.path] + (["--src", a.src] if a.src else [])
        out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.split()
        runs.append(float(out[0]))
        peak = max(peak, int(out[1]))
    print(f"read {a.which} {a.src or 'branch'}: median {statistics.median(runs):.1f} ms CPU "
          f"(runs {', '.join(f'{r:.1f}' for r in runs)}), peak RSS {peak / 1024:.1f} MiB, "
          f"load {before} -> {_load()}")


if __name__ == "__main__":
    main()
