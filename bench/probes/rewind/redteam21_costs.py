"""redteam21's figures: the descriptors a rewind left open, and what its two checks cost.

``leak``: 10 rewinds of 5 folders each, answered with ``finish_later`` (as the server
does), each finished by a second ``Store.open`` (a CLI hook's recovery) before this
process's ``finish_rewind``; prints this process's descriptors before and after (a count).
``cost``: CPU time (``time.process_time``) per call, best of 7 blocks, of
``settings.parse`` with 1,000 non-ASCII ignore patterns and of a dry-run rewind of 200
files (the name probe's path), with the load average. ``--src DIR`` imports ``turnback``
from another commit's ``server/`` (``git archive REF server``) for interleaved A/B runs:

    python bench/probes/rewind/redteam21_costs.py leak --dir /work/benchdata/redteam21/lk
    python bench/probes/rewind/redteam21_costs.py cost --dir /work/benchdata/redteam21/bw --src \\
        base/server
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parents[2]  # bench/ (this probe is in bench/probes/<topic>/)
_SRC = sys.argv[sys.argv.index("--src") + 1] if "--src" in sys.argv[:-1] else None
sys.path.insert(0, _SRC or str(HERE.parent / "server"))

from turnback import Store  # noqa: E402
from turnback.server.workspace import settings  # noqa: E402


def _best(fn: Callable[[], object], n: int) -> float:
    times = []
    for _ in range(7):
        t = time.process_time()
        for _ in range(n):
            fn()
        times.append((time.process_time() - t) / n)
    return min(times)


def leak(base: Path) -> None:
    ws = base / "ws"
    ws.mkdir(parents=True)
    folders = [f"d{i}" for i in range(5)]
    for f in folders:
        (ws / f).mkdir()
        (ws / f / "f").write_text("v1")
    store = Store.open(ws)
    cp = store.checkpoint()
    before = len(os.listdir("/proc/self/fd"))
    for n in range(10):
        for f in folders:
            (ws / f / "f").write_text(f"v2-{n}")
        store.rewind(cp.id, finish_later=True)
        Store.open(ws).close()  # recovers the journal: the rewind finished by "another"
        store.finish_rewind()
    after = len(os.listdir("/proc/self/fd"))
    store.close()
    print(f"descriptors before {before}, after 10 rewinds {after} (+{after - before})")


def cost(base: Path) -> None:
    raw = {"ignores": [f"dossier-é-{i}/*.log" for i in range(1000)], "storePath": "~/störe"}
    parse = _best(lambda: settings.parse(raw, "bench"), 200)
    ws = base / "ws"
    ws.mkdir(parents=True)
    for i in range(200):
        (ws / f"f{i}").write_text(str(i))
    store = Store.open(ws, store_dir=base / "store")
    cp = store.checkpoint()
    (ws / "f1").write_text("changed")
    dry = _best(lambda: store.rewind(cp.id, dry_run=True), 20)
    store.close()
    print(f"parse_1000_ignores_us={parse * 1e6:.1f} dry_rewind_ms={dry * 1e3:.3f} "
          f"load={os.getloadavg()[0]:.2f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what", choices=["leak", "cost"])
    ap.add_argument("--dir", type=Path, required=True, help="scratch folder (emptied)")
    ap.add_argument("--src", help="a server/ folder to import turnback from")
    args = ap.parse_args()
    shutil.rmtree(args.dir, ignore_errors=True)
    try:
        (leak if args.what == "leak" else cost)(args.dir)
    finally:
        shutil.rmtree(args.dir, ignore_errors=True)


if __name__ == "__main__":
    main()
