"""What a folder's tree costs out of and into the pack: decoding it, and naming it.

An incremental checkpoint of 10 files changed at once reads ~30 folders' trees that the
server has not read since it started (``Scanner._list_dirty``) and names ~35-60 patched
ones (``TreeReader.name``: encode and BLAKE3). Times, best of 5 runs of 2,000 calls each:
``decode`` of a folder of 50 and of 1,000 entries (as this version writes them); naming a
50-entry folder from scratch; naming it patched (one name changed, or one added, the base's
encoding kept: what a checkpoint does per folder). Prints the encoding's bytes too.

    python bench/probes/checkpoint/tree_decode.py               # the work tree
    python bench/probes/checkpoint/tree_decode.py --ref d8084f2  # as committed at a ref, to compare
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
import timeit
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # bench/: the shared modules
from turnback_side import use_ref

HERE = Path(__file__).resolve().parents[2]  # bench/ (this probe is in bench/probes/<topic>/)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ref", default=None)
    a = ap.parse_args(argv)
    where = f"at {use_ref(a.ref, HERE / 'work')[:12]}" if a.ref else "work tree"
    from turnback.objects.objectstore import ObjectStore
    from turnback.objects.trees import FILE, Entry, TreeReader, decode, encode

    def best(call: Callable[[], object]) -> float:
        return min(timeit.repeat(call, number=2000, repeat=5)) / 2000 * 1e6

    load = f"load {os.getloadavg()[0]:.2f}"
    for n in (50, 1000):
        # hashes as real ones are (random hex), names as a source folder's
        tree = {f"module_{i:04d}.py": Entry(FILE, hashlib.sha256(b"%d" % i).hexdigest(),
                                            1000 + i) for i in range(n)}
        data = encode(tree)
        assert decode(data, "bench") == tree
        print(f"{where}: decode of a {n}-entry folder {best(lambda d=data: decode(d, 'bench')):.1f}"
              f" µs, {len(data)} bytes ({load})")
    reader = TreeReader(ObjectStore(Path(os.devnull)))
    tree = {f"module_{i:04d}.py": Entry(FILE, hashlib.sha256(b"%d" % i).hexdigest(), 1000 + i)
            for i in range(50)}
    scratch = best(lambda: reader.name(tree, remember=False))
    base, _ = reader.name(dict(tree))
    changed = dict(tree)
    changed["module_0025.py"] = Entry(FILE, hashlib.sha256(b"new").hexdigest(), 7)
    patched = best(lambda: reader.name(changed, base, ["module_0025.py"], remember=False))
    added = dict(tree)
    added["module_0025b.py"] = Entry(FILE, hashlib.sha256(b"new").hexdigest(), 7)
    grown = best(lambda: reader.name(added, base, ["module_0025b.py"], remember=False))
    print(f"{where}: naming a 50-entry folder: from scratch {scratch:.1f} µs, patched "
          f"(1 name changed) {patched:.1f} µs, (1 name added) {grown:.1f} µs ({load})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
