"""Instructions of one cold target read (``ObjectStore.get`` of a packed blob, its block not
cached), split by the shared object that runs them: zstd's, BLAKE3's, Python's, libc's.

Picks ``--reads`` blobs of the workspace's first checkpoint (the largest pack: a rewind's
targets are mostly originals, one cold block each), empties the pack reader's block cache
before each read, and marks the loop with ``os.access`` so callgrind, told to dump before
every ``os_access``, writes the loop's counters to a file of their own:

    PYTHONHASHSEED=0 valgrind --tool=callgrind --dump-before=os_access \\
        --callgrind-out-file=OUT/cg.out python bench/probes/objects/target_reads.py --workspace \\
            WS \\
        --reads 200 [--src OTHER/server]
    python bench/probes/objects/target_reads.py --summarize OUT     # per read, by shared object

Without callgrind it prints the loop's CPU per read. ``--src``: the package from another
commit's ``server/`` (``git archive REF server``), for A/B runs on one store.
"""

from __future__ import annotations

import argparse
import glob
import os
import random
import re
import sys
import time
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parents[2]  # bench/ (this probe is in bench/probes/<topic>/)
_SRC = sys.argv[sys.argv.index("--src") + 1] if "--src" in sys.argv[:-1] else None


def run(workspace: Path, reads: int, seed: int) -> None:
    sys.path.insert(0, _SRC or str(HERE.parent / "server"))
    from turnback.objects.objectstore import BLOB
    from turnback.store.facade import Store

    store = Store.open(workspace)
    objects = store.objects
    packs = objects.packs
    packs.refresh()
    listing = packs.listing()
    pack = max(listing, key=lambda p: len(listing[p]))
    rows = listing[pack]
    names = sorted(n for n, loc in rows.items() if loc.length < 64 << 10)
    blobs = []
    rng = random.Random(seed)
    for name in rng.sample(names, min(len(names), reads * 3)):
        try:
            objects.get(BLOB, name)
        except Exception:  # a tree: not a target
            continue
        blobs.append(name)
        if len(blobs) == reads:
            break
    sizes = []
    cpu = 0.0
    os.access("/@@reads>", os.F_OK)
    for name in blobs:
        packs._blocks.clear()  # a cold block, as a rewind's targets mostly are
        packs._cached = 0
        c = time.process_time()
        sizes.append(len(objects.get(BLOB, name)))
        cpu += time.process_time() - c
    os.access("/@@reads<", os.F_OK)
    sizes.sort()
    print(f"{len(blobs)} reads from {pack}: median size {sizes[len(sizes) // 2]} B, "
          f"CPU {cpu / len(blobs) * 1e6:.1f} us a read (load {os.getloadavg()[0]:.2f})")


def self_costs(path: str) -> dict[tuple[str, str], int]:
    """Self instructions by (shared object, function) of one callgrind dump, read from the
    file itself (a cost line right after ``calls=`` is a call's inclusive cost: skipped)."""
    names: dict[str, dict[str, str]] = {"ob": {}, "fn": {}}
    cur = {"ob": "?", "fn": "?"}
    out: dict[tuple[str, str], int] = defaultdict(int)
    after_call = False
    with open(path) as f:
        for line in f:
            key, eq, rest = line.partition("=")
            if eq and key in ("ob", "fn", "cob", "cfn", "fl", "fi", "fe", "cfi", "cfl"):
                kind = key[-2:] if key[-2:] in ("ob", "fn") else ""
                m = re.match(r"\((\d+)\)(?: (.*))?", rest.strip())
                value = rest.strip()
                if m:
                    if m.group(2) is not None and kind:
                        names[kind][m.group(1)] = m.group(2)
                    value = names[kind].get(m.group(1), value) if kind else value
                if key in ("ob", "fn"):
                    cur[key] = value
                continue
            if key == "calls" and eq:
                after_call = True
                continue
            if line[:1].isdigit() or line[:1] in "+-*":
                if after_call:
                    after_call = False
                    continue
                parts = line.split()
                if len(parts) >= 2:
                    out[(os.path.basename(cur["ob"]), cur["fn"])] += int(parts[1])
    return out


def summarize(out: Path, reads: int) -> None:
    """The loop's dump (the second: the first ends at its start mark), by shared object."""
    files = sorted(glob.glob(str(out / "cg.out.*")), key=lambda p: int(p.rsplit(".", 1)[1]))
    loop = files[1]
    costs = self_costs(loop)
    by_obj: dict[str, int] = defaultdict(int)
    for (obj, fn), n in costs.items():
        by_obj[_kind(obj, fn)] += n
    total = sum(costs.values())
    print(f"{loop}: {total / reads / 1e3:.1f} k instructions a read")
    for k, n in sorted(by_obj.items(), key=lambda x: -x[1]):
        print(f"  {k:10s} {n / reads / 1e3:8.1f} k  ({100 * n / total:.1f}%)")
    print("  top functions (k a read):")
    for (obj, fn), n in sorted(costs.items(), key=lambda x: -x[1])[:15]:
        print(f"    {n / reads / 1e3:8.1f}  {fn} [{obj}]")


def _kind(obj: str, fn: str) -> str:
    if "zstd" in obj or fn.startswith(("ZSTD_", "HUF_", "FSE_")):
        return "zstd"
    if "blake3" in obj or "blake3" in fn:
        return "blake3"
    if obj.startswith("libc") or obj.startswith("ld-linux"):
        return "libc"
    if "python" in obj or obj == "?" or obj.startswith("lib"):
        return "python"
    return obj


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workspace", type=Path)
    ap.add_argument("--reads", type=int, default=200)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--src")
    ap.add_argument("--summarize", type=Path)
    a = ap.parse_args()
    if a.summarize:
        summarize(a.summarize, a.reads)
    else:
        run(a.workspace, a.reads, a.seed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
