"""What checking every read costs: in-process timings of the reads that verification touches.

Builds a workspace of ``--files`` small files (plus one 1 MB file) in a temporary folder,
checkpoints it, then times (median of ``--rounds``):

- ``decode``: decoding every tree object of the checkpoint from its bytes (id checks only);
- ``flatten``: a full flatten of the checkpoint's trees through a fresh tree cache (objects
  read from the pack, decompressed, hash-checked, decoded);
- ``show 1MB``: ``Store.read_file`` of the 1 MB file (a loose object);
- ``rewind 10``: a rewind after 10 files changed (safety checkpoint included).

    PYTHONPATH=server python bench/probes/objects/verify_cost.py --files 50000
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from turnback import Store
from turnback.objects.objectstore import TREE
from turnback.objects.trees import DIR, TreeReader, decode


def median_ms(fn: Callable[[], object], rounds: int) -> float:
    times = []
    for _ in range(rounds):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def build(ws: Path, files: int) -> None:
    per = 50
    for i in range(files):
        d = ws / f"d{i // (per * per)}" / f"e{(i // per) % per}"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"f{i}.txt").write_text(f"line {i}\n" * (1 + i % 40))
    (ws / "big.txt").write_bytes(b"0123456789abcdef" * 65536)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=50000)
    ap.add_argument("--rounds", type=int, default=15)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="tb-verify-bench-"))
    try:
        ws = tmp / "ws"
        ws.mkdir()
        build(ws, args.files)
        store = Store.open(ws, store_dir=tmp / "store")
        cp = store.checkpoint()
        trees: list[str] = []

        def collect(h: str) -> None:
            trees.append(h)
            for e in store.trees.get(h).values():
                if e.mode == DIR:
                    collect(e.hash)

        collect(cp.tree)
        raw = [store.objects.get(TREE, h) for h in trees]
        decode_ms = median_ms(lambda: [decode(b, "x") for b in raw], args.rounds)
        flatten_ms = median_ms(lambda: TreeReader(store.objects).flatten(cp.tree), args.rounds)
        show_ms = median_ms(lambda: store.read_file(cp.id, "big.txt"), args.rounds)
        changed = [ws / "d0" / f"e{i}" / f"f{i * 50}.txt" for i in range(10)]

        def rewind() -> None:
            for p in changed:
                p.write_text("changed\n")
            store.rewind(cp.id)

        rewind_ms = median_ms(rewind, args.rounds)
        store.close()
        print(f"files {args.files}, trees {len(trees)}, rounds {args.rounds}")
        print(f"decode   {decode_ms:8.2f} ms")
        print(f"flatten  {flatten_ms:8.2f} ms")
        print(f"show 1MB {show_ms:8.2f} ms")
        print(f"rewind10 {rewind_ms:8.2f} ms")
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    os.environ.pop("TURNBACK_STORE", None)
    main()
