"""The name probe's cost (``fs/namefold.probe``) in a folder of N names, with and without
the sweep of killed probes' files (trust21): the median of REPS calls. System calls: run it
under ``strace -f -c`` with REPS 0 and 100 and take the difference / 100.

    PYTHONPATH=server .venv/bin/python bench/probes/checkpoint/probe_sweep.py N [REPS] [--no-sweep]
"""

from __future__ import annotations

import inspect
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from turnback.fs.namefold import probe


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    n = int(args[0])
    reps = int(args[1]) if len(args) > 1 else 200
    # a tree before trust21 has no ``sweep`` parameter: it never swept
    kwargs = {"sweep": False} if "--no-sweep" in sys.argv else {}
    if kwargs and "sweep" not in inspect.signature(probe).parameters:
        kwargs = {}
    folder = Path(tempfile.mkdtemp(prefix="probe-sweep-"))
    try:
        for i in range(n):
            (folder / f"f{i:05d}").write_bytes(b"")
        took = []
        for _ in range(reps):
            t = time.perf_counter()
            probe(folder, **kwargs)
            took.append(time.perf_counter() - t)
    finally:
        shutil.rmtree(folder)
    if took:
        print(f"N={n} probe median {statistics.median(took) * 1e6:.1f} us "
              f"(min {min(took) * 1e6:.1f})")


if __name__ == "__main__":
    main()
