"""What reading a folder's tree costs once its bytes are out of the pack: ``decode``.

An incremental checkpoint of 10 files changed at once reads ~30 folders' trees that the
server has not read since it started (``Scanner._list_dirty``). Times ``decode`` of a
folder of 50 and of 1,000 entries (best of 5 runs of 2,000 decodes).

    python bench/tree_decode.py               # the work tree
    python bench/tree_decode.py --ref d8084f2  # as committed at a ref, to compare
"""

from __future__ import annotations

import argparse
import os
import sys
import timeit
from pathlib import Path

from turnback_side import use_ref

HERE = Path(__file__).resolve().parent


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ref", default=None)
    a = ap.parse_args(argv)
    where = f"at {use_ref(a.ref, HERE / 'work')[:12]}" if a.ref else "work tree"
    from turnback.objects.trees import FILE, Entry, decode, encode

    for n in (50, 1000):
        tree = {f"module_{i:04d}.py": Entry(FILE, f"{i:064x}", 1000 + i) for i in range(n)}
        data = encode(tree)
        assert decode(data, "bench") == tree
        best = min(timeit.repeat(lambda data=data: decode(data, "bench"), number=2000, repeat=5))
        print(f"{where}: decode of a {n}-entry folder {best / 2000 * 1e6:.1f} µs "
              f"(load {os.getloadavg()[0]:.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
