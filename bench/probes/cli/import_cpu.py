"""CPU time of the imports a cold path pays, package folder against package folder, alternating.

    python bench/probes/cli/import_cpu.py BASE/server OTHER/server [--rounds 30] [--what cli|server]

``cli``: what a fresh ``turnback checkpoint`` imports when no server takes it (the store's
facade and ``interchange/cli_text``); ``server``: what the language server imports before its
first answer (``__main__``'s way: no cyclic collection, the code cache installed, then
``app.create_server()``). Each folder's processes run in turn, the order swapped every round,
so both meet the same machine load; the CPU time (user + system) moves far less with that load
than the wall time. Each folder should be byte-compiled (``python -m compileall``), as an
installed package is; run with ``PYTHONDONTWRITEBYTECODE`` unset. A first run of each folder
(not counted) leaves the server's code cache filled.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time

WHAT = {
    "cli": "import turnback.store.facade, turnback.interchange.cli_text",
    "server": "import gc; gc.disable()\n"
              "from turnback.server import codecache; codecache.install()\n"
              "import turnback.server.app as app; app.create_server()\n"
              "codecache.save()",
}


def cpu_of(code: str, folder: str) -> tuple[float, float]:
    """(wall, CPU) seconds of one fresh interpreter running ``code`` with ``folder`` first."""
    env = {**os.environ, "PYTHONPATH": folder}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], env=env, check=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("folders", nargs="+")
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--what", choices=sorted(WHAT), default="cli")
    a = ap.parse_args()
    code = WHAT[a.what]
    for folder in a.folders:
        cpu_of(code, folder)  # not counted: the code cache filled, the files in the page cache
    got: dict[str, list[tuple[float, float]]] = {f: [] for f in a.folders}
    load = os.getloadavg()[0]
    for i in range(a.rounds):
        for folder in a.folders if i % 2 == 0 else a.folders[::-1]:
            got[folder].append(cpu_of(code, folder))
    print(f"{a.what}, {a.rounds} rounds, load {load:.2f} -> {os.getloadavg()[0]:.2f}")
    for folder, rows in got.items():
        cpus = [c * 1000 for _, c in rows]
        walls = [w * 1000 for w, _ in rows]
        print(f"  {folder}: CPU median {statistics.median(cpus):.1f} ms (min {min(cpus):.1f}), "
              f"wall median {statistics.median(walls):.1f} ms")


if __name__ == "__main__":
    main()
