"""What a tree encoding costs on a real workspace's folders (issue 16, branch ``bintree16``).

Every folder of ``--workspace`` (``node_modules`` and the store left out) as a tree: its
real names, sizes and kinds, random hashes. Prints, for the trees this version writes
(``--ref``: as committed at a ref, e.g. text trees before format 3):

- their bytes, and BLAKE3 naming them all (``hash_bytes``), best of 5;
- ``TreeReader.name`` of every folder from scratch, and patched with one entry changed or
  one name added (the base's encoding kept), best of 5;
- 50 folders as one pack block (what an at-once checkpoint's pack holds) compressed at zstd
  level 1, −1 and stored (−1000): bytes and time, best of 5 × 200;
- a decoded tree with what its reader keeps for patching, in bytes an entry (tracemalloc);
- ``--warm``: the workspace's store (made by a first checkpoint when missing) walked, then
  ``Store.warm_trees`` (a server's warm-up after a walk): wall and CPU time.

    python bench/probes/checkpoint/tree_format.py --workspace bench/work/ws [--ref e953324] [--warm]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import random
import sys
import time
import timeit
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # bench/: the shared modules
from turnback_side import use_ref

HERE = Path(__file__).resolve().parents[2]  # bench/ (this probe is in bench/probes/<topic>/)
SKIP = {"node_modules", ".turnback", ".git"}


def folders(ws: Path, tm: Any) -> list[dict[str, Any]]:
    out = []
    for d, dirs, _ in os.walk(ws):
        dirs[:] = [x for x in dirs if x not in SKIP]
        tree = {}
        for e in os.scandir(d):
            if e.name in SKIP:
                continue
            kind = tm.DIR if e.is_dir(follow_symlinks=False) else tm.FILE
            tree[e.name] = tm.Entry(kind, hashlib.sha256(e.path.encode()).hexdigest(),
                                    e.stat(follow_symlinks=False).st_size)
        if tree:
            out.append(tree)
    return out


def best(call: Callable[[], object], number: int) -> float:
    """Seconds per call, best of 5."""
    return min(timeit.repeat(call, number=number, repeat=5)) / number


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workspace", type=Path, default=HERE / "work" / "ws")
    ap.add_argument("--ref", default=None)
    ap.add_argument("--warm", action="store_true")
    a = ap.parse_args(argv)
    who = f"at {use_ref(a.ref, HERE / 'work')[:12]}" if a.ref else "work tree"
    import zstandard

    from turnback.objects import trees as tm
    from turnback.objects.objectstore import TREE, ObjectStore, hash_bytes

    def say(what: str) -> None:
        print(f"{who}: {what} (load {os.getloadavg()[0]:.2f})", flush=True)

    trees = folders(a.workspace, tm)
    datas = [tm.encode(t) for t in trees]
    n, entries = len(trees), sum(map(len, trees))

    def hash_all() -> None:
        for d in datas:
            hash_bytes(TREE, d)

    say(f"{n} folders, {entries} entries: {sum(map(len, datas)):,} bytes; BLAKE3 of all "
        f"{best(hash_all, 20) * 1e3:.2f} ms")
    reader = tm.TreeReader(ObjectStore(Path(os.devnull)))
    new_hash = hashlib.sha256(b"new").hexdigest()
    changed, added = [], []
    for t in trees:
        base, _ = reader.name(dict(t))
        middle = sorted(t)[len(t) // 2]
        changed.append(({**t, middle: tm.Entry(tm.FILE, new_hash, 7)}, base, [middle]))
        added.append(({**t, middle + "_new": tm.Entry(tm.FILE, new_hash, 7)}, base,
                      [middle + "_new"]))

    def patch(cases: list[tuple[dict[str, Any], str, list[str]]]) -> Callable[[], None]:
        def run() -> None:
            for tree, base, names in cases:
                reader.name(tree, base, names, remember=False)
        return run

    def scratch() -> None:
        for t in trees:
            reader.name(t, remember=False)

    per = {label: best(fn, 5) / n * 1e6 for label, fn in (
        ("from scratch", scratch), ("one entry changed", patch(changed)),
        ("one name added", patch(added)))}
    say("naming a folder: " + ", ".join(f"{k} {v:.2f} µs" for k, v in per.items()))
    block = b"".join(b"tree\0" + d for d in random.Random(1).sample(datas, min(50, n)))
    for level in (1, -1, -1000):
        cctx = zstandard.ZstdCompressor(level=level)
        took = best(lambda c=cctx: c.compress(block), 200)
        say(f"50 folders' block, {len(block):,} bytes, zstd level {level}: "
            f"{len(cctx.compress(block)):,} bytes in {took * 1e3:.3f} ms")
    decode_kept = getattr(tm, "decode_kept", None) or tm.decode_lines
    tracemalloc.start()
    before = tracemalloc.take_snapshot()
    kept = [decode_kept(d, "bench") for d in datas]
    grown = sum(s.size_diff for s in tracemalloc.take_snapshot().compare_to(before, "filename"))
    tracemalloc.stop()
    held = grown + (sum(map(len, datas)) if hasattr(tm, "decode_kept") else 0)
    say(f"decoded with what is kept for patching: {held / entries:.0f} bytes an entry")
    del kept
    if a.warm:
        from turnback import Store

        with Store.open(a.workspace) as store:
            store.prepare(None)
            t0, c0 = time.perf_counter(), time.thread_time()
            read = store.warm_trees()
            wall, cpu = time.perf_counter() - t0, time.thread_time() - c0
        say(f"warm_trees after a walk: {read} trees in {wall * 1e3:.1f} ms, CPU "
            f"{cpu * 1e3:.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
