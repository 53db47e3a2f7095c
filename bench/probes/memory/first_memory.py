"""Peak memory of a first checkpoint (and the ones after it) on many small files, in-process.

    # 200,000 files, 4,000 folders
    python bench/probes/memory/first_memory.py make bench/work/small 200000
    python bench/probes/memory/first_memory.py measure server bench/work/small first   # fresh store
    # the store again
    python bench/probes/memory/first_memory.py measure server bench/work/small next

``measure`` takes the folder of the turnback package to run (``server`` of this checkout, or an
older commit's ``git archive REF server`` output) and prints files, seconds, peak RSS
(``ru_maxrss``) and the tree's hash (the same hash before and after a change: the same trees).
"""

from __future__ import annotations

import os
import resource
import shutil
import sys
import time
from pathlib import Path


def make(root: Path, n: int) -> None:
    """``n`` small files, 50 a folder, in folders three levels deep."""
    for i in range(n):
        d = root / f"d{i // 50 % 20}" / f"e{i // 1000}" / f"f{i // 50}"
        if i % 50 == 0:
            d.mkdir(parents=True, exist_ok=True)
        (d / f"file{i}.txt").write_text(f"content {i}\n" * (i % 7 + 1))


def measure(code: Path, ws: Path, phase: str) -> None:
    sys.path.insert(0, str(code.resolve()))
    from turnback import Store

    if phase == "first":
        shutil.rmtree(ws / ".turnback", ignore_errors=True)
    t0 = time.perf_counter()
    with Store.open(ws, create=True) as store:
        cp = store.checkpoint()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    print(f"{phase}: {cp.files} files, {time.perf_counter() - t0:.2f} s, {rss} MB peak RSS, "
          f"tree {cp.tree[:12]}, load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["make"]:
        make(Path(sys.argv[2]), int(sys.argv[3]))
    elif sys.argv[1:2] == ["measure"]:
        measure(Path(sys.argv[2]), Path(sys.argv[3]), sys.argv[4])
    else:
        raise SystemExit(__doc__)
