"""The memory of rounds of "10 files edited, prepared, checkpointed", in-process (issue 23's
fourth pass: what the server's VmHWM grows by over 100 such rounds).

A store on an existing workspace, one full checkpoint, then ROUNDS rounds: 10 ``.py`` files
appended to, ``Store.prepare`` of their paths (what the server does in the quiet moment)
and the checkpoint (``--direct``: the checkpoint reads the paths itself). Every 10 rounds:
RSS, VmHWM, the tree cache's trees and entries, the pack block cache's bytes. The caches'
bounds can be lowered to see what they account for:

    python bench/probes/memory/rounds_memory.py WS [--rounds 100] [--direct] [--trees N] \\
        [--blocks-mb M]
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parents[2]  # bench/ (this probe is in bench/probes/<topic>/)


def _status(key: str) -> int:
    """A ``/proc/self/status`` figure in MB."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key):
                return int(line.split()[1]) // 1024
    return 0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("workspace", type=Path)
    ap.add_argument("--rounds", type=int, default=100)
    ap.add_argument("--direct", action="store_true", help="no preparation")
    ap.add_argument("--trees", type=int, help="the tree cache's bound, in entries")
    ap.add_argument("--blocks-mb", type=int, help="the pack block cache's bound")
    ap.add_argument("--code", type=Path, default=HERE.parent / "server")
    a = ap.parse_args()
    sys.path.insert(0, str(a.code))
    import turnback.objects.packs as packs_mod
    import turnback.objects.trees as trees_mod
    from turnback import Store

    if a.trees is not None:
        trees_mod.CACHE_ENTRIES = a.trees
    if a.blocks_mb is not None:
        packs_mod.CACHE_BYTES = a.blocks_mb << 20
    ws = a.workspace.resolve()
    files = [p for p in sorted(ws.rglob("*.py"))
             if ".turnback" not in p.parts and "node_modules" not in p.parts][:2000]
    rng = random.Random(1)
    with Store.open(ws) as store:
        store.checkpoint(label="start")
        trees, packs = store.trees, store.objects.packs

        def say(what: str) -> None:
            print(f"{what}: RSS {_status('VmRSS')} MB, VmHWM {_status('VmHWM')} MB; tree "
                  f"cache {len(trees._cache)} trees, {trees._held:,} entries; block cache "
                  f"{packs._cached >> 20} MB", flush=True)

        say("after the first checkpoint")
        for r in range(a.rounds):
            chosen = rng.sample(files, 10)
            for p in chosen:
                with open(p, "a") as f:
                    f.write(f"# round {r}\n")
            paths = {str(p.relative_to(ws)) for p in chosen}
            if a.direct:
                store.checkpoint(label=f"round {r}", dirty=paths)
            else:
                store.prepare(paths)
                store.checkpoint(label=f"round {r}", dirty=set())
            if r % 10 == 9:
                say(f"round {r + 1}")


if __name__ == "__main__":
    main()
