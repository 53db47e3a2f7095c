"""What ``Applier.restore_late`` costs at the open after a crash, one folder of N files.

A rewind of N files in one folder, killed once its files were in place: the next open's
``restore_late`` looks for their second names. It listed the folder once a path (N
listings of N names) before redteam14, once a folder since. Prints its CPU time, median of
``--repeat`` runs, with the load average; ``--src DIR`` imports ``turnback`` from another
commit's ``server/`` (``git archive REF server``) for A/B runs:

    python bench/probes/rewind/redteam14_costs.py --dir /work/benchdata/redteam14/late --files 10000
    python bench/probes/rewind/redteam14_costs.py --dir … --files 10000 --src base/server
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[2]  # bench/ (this probe is in bench/probes/<topic>/)
_SRC = sys.argv[sys.argv.index("--src") + 1] if "--src" in sys.argv[:-1] else None
sys.path.insert(0, _SRC or str(HERE.parent / "server"))

from turnback.objects.objectstore import BLOB, hash_bytes  # noqa: E402
from turnback.objects.trees import STAT_MODES, Entry  # noqa: E402
from turnback.rewind.apply import Applier, kept_name  # noqa: E402
from turnback.rewind.plan import Plan  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", type=Path, required=True, help="a folder to make (removed after)")
    ap.add_argument("--files", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--src", default=None)
    a = ap.parse_args()
    op = "0123456789abcdef"
    ws = a.dir / "ws"
    (ws / "d").mkdir(parents=True)
    try:
        target = Entry(STAT_MODES[0o644], "0" * 64, 1)  # what no file holds
        # what each second name holds: read and left, as after a kill with no late write
        was = Entry(STAT_MODES[0o644], hash_bytes(BLOB, b"x"), 1)
        plan = Plan()
        for i in range(a.files):
            path = f"d/f{i:06}.txt"
            plan.write[path] = target
            plan.before[path] = was
            (ws / path).write_bytes(b"x")
            os.chmod(ws / path, 0o644)
            # the second name a killed rewind left, holding the rewind's expected bytes
            os.link(ws / path, ws / "d" / f".turnback-tmp-1-{kept_name(op, path)}")
        times = []
        load = os.getloadavg()[0]
        for _ in range(a.repeat):
            t = time.process_time()
            moved = Applier(str(ws), None, False, op).restore_late(plan)  # type: ignore[arg-type]
            assert not moved, moved
            times.append((time.process_time() - t) * 1000)
        print(f"{_SRC or 'work tree'}: {a.files} files in one folder, restore_late CPU "
              f"{statistics.median(times):.1f} ms (median of {a.repeat}), load "
              f"{load:.2f} -> {os.getloadavg()[0]:.2f}")
    finally:
        shutil.rmtree(a.dir)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
