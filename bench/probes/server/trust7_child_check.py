"""The server's start child's checks (``prescan._check``: watch, then list each recorded
folder) in one process, for each package folder given, interleaved: what opening each
folder from the one above and watching ``/proc/self/fd/N`` (branch trust7) costs against
watching by path after an ``lstat`` of the folders above (before it).

    python bench/probes/server/trust7_child_check.py WORKSPACE PACKAGE_FOLDER [PACKAGE_FOLDER \\
        ...] [--rounds 7]

WORKSPACE must have a store whose stat cache records its folders (two checkpoints). A
package folder: this checkout's ``server``, or ``git archive REF server | tar -x -C DIR``.
Prints, per round and folder, the CPU and wall milliseconds of the checks and the load.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

RUN = r"""
import json, os, sys, time
from mmap import mmap
from inotify_simple import INotify
from turnback.snapshot import prescan
from turnback.server.watching import startwalk
ws = sys.argv[1]
got = prescan.read_records(os.path.join(ws, ".turnback", "cache", "stat.bin"))
_, recs, trees, _ = got
folders = prescan.recorded_folders(recs, trees)
ino = INotify(nonblocking=True)
by_fd = "lay(fd)" in (prescan.fork_worker.__doc__ or "")
def lay(arg):
    try:
        if by_fd:
            return int(ino.add_watch(f"/proc/self/fd/{arg}",
                                     startwalk.WATCH_MASK & ~0x02000000))
        return int(ino.add_watch(arg, startwalk.WATCH_MASK))
    except OSError:
        return None
shared = mmap(-1, prescan._SHARED_SIZE)
prescan._INT.pack_into(shared, prescan._BACK, prescan._NOT_STARTED)
c0, w0 = time.process_time(), time.perf_counter()
found, laid = prescan._check(ws, folders, recs, shared, lay)
c1, w1 = time.process_time(), time.perf_counter()
ino.close()
print(json.dumps({"cpu_ms": (c1 - c0) * 1e3, "wall_ms": (w1 - w0) * 1e3,
                  "folders": len(folders), "verified": len(found), "laid": len(laid)}))
"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("workspace")
    ap.add_argument("packages", nargs="+")
    ap.add_argument("--rounds", type=int, default=7)
    a = ap.parse_args()
    for r in range(a.rounds):
        for pkg in a.packages:
            env = {**os.environ, "PYTHONPATH": os.path.abspath(pkg)}
            load = os.getloadavg()[0]
            out = subprocess.run([sys.executable, "-c", RUN, a.workspace], env=env,
                                 capture_output=True, text=True, check=True).stdout
            got = json.loads(out.strip().splitlines()[-1])
            print(f"round {r} {pkg}: cpu {got['cpu_ms']:.1f} ms wall {got['wall_ms']:.1f} ms "
                  f"folders {got['folders']} verified {got['verified']} laid {got['laid']} "
                  f"load {load:.2f}", flush=True)


if __name__ == "__main__":
    main()
