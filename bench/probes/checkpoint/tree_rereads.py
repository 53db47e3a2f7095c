"""A long-lived server's rounds in one process: the trees read back out of the store, and CPU.

What a server does round after round, without the server: 10 files edited and checkpointed
at once, 10 more edited and a rewind to that checkpoint asked at once (finished after, as the
server does after its answer), then the read-ahead a quiet moment gives it
(``Store.prepare``). Before the rounds, the walk and ``warm_trees`` a server's start does.
Prints, per phase, the trees read from the store (not found in the tree cache: a count,
independent of load) and the medians of each phase's thread CPU, split at round
``--split`` (the tree cache of a server on SPEC's workspace fills at about the 12th round):

    python bench/probes/checkpoint/tree_rereads.py --workspace bench/work/ws --rounds 36
    python bench/probes/checkpoint/tree_rereads.py --workspace bench/work/ws --rounds 36 --src \\
        <a ref's server/>

``--scale F`` multiplies the tree cache's bounds by F (a small workspace fills it as SPEC's
does: 2,000 files, ``--scale 0.04``), and ``--seed`` fixes the edits, for instruction counts
that do not move with load:

    valgrind --tool=callgrind python bench/probes/checkpoint/tree_rereads.py --workspace <small> \\
        --rounds 40 \\
        --scale 0.04 --seed 1
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parents[2]  # bench/ (this probe is in bench/probes/<topic>/)
_SRC = sys.argv[sys.argv.index("--src") + 1] if "--src" in sys.argv[:-1] else None
sys.path.insert(0, _SRC or str(HERE.parent / "server"))

sys.path.insert(0, str(HERE))  # the shared modules
from edits import Editor  # noqa: E402

from turnback.objects import trees  # noqa: E402
from turnback.store import checkpoint_ops  # noqa: E402
from turnback.store.facade import Store  # noqa: E402


def run(workspace: Path, rounds: int, split: int, scale: float, seed: int | None) -> None:
    if scale != 1.0:
        trees.CACHE_ENTRIES = int(trees.CACHE_ENTRIES * scale)
        checkpoint_ops.WARM_TREE_ENTRIES = int(checkpoint_ops.WARM_TREE_ENTRIES * scale)
    load = [os.getloadavg()[0]]
    store = Store.open(workspace)
    store.checkpoint(label="walk")
    store.warm_trees()
    phase = ["idle"]
    reads: Counter[str] = Counter()
    real_get = store.objects.get

    def get(kind: bytes, name: str) -> bytes:
        if kind == trees.TREE:
            reads[phase[0]] += 1
        return real_get(kind, name)

    store.objects.get = get  # type: ignore[method-assign]
    cpu: dict[str, list[float]] = defaultdict(list)

    def timed(name: str, fn: object, *args: object, **kw: object) -> object:
        phase[0] = name
        started = time.thread_time()
        out = fn(*args, **kw)  # type: ignore[operator]
        cpu[name].append(time.thread_time() - started)
        phase[0] = "idle"
        return out

    ed = Editor(workspace, seed=int(time.time()) if seed is None else seed)
    late: Counter[str] = Counter()
    try:
        for n in range(rounds):
            if n == split:
                late = reads.copy()
            edited = set(ed.edit(10))
            cp = timed("checkpoint", store.checkpoint, label="at once", dirty=edited)
            timed("save", store.save_scan_cache)
            edited = set(ed.edit(10))
            timed("rewind", store.rewind, cp.id, dirty=edited,  # type: ignore[attr-defined]
                  finish_later=True)
            timed("finish", store.finish_rewind)
            timed("prepare", store.prepare, edited)
    finally:
        store.close()
    load.append(os.getloadavg()[0])
    import turnback

    print(f"{turnback.__file__}: {rounds} rounds, load {load[0]:.2f} -> {load[1]:.2f}")
    for name in ("checkpoint", "rewind", "finish", "prepare"):
        times = cpu[name]
        before = statistics.median(times[:split]) * 1000 if times[:split] else float("nan")
        after = statistics.median(times[split:]) * 1000 if times[split:] else float("nan")
        print(f"  {name:10s} trees read {reads[name]:5d} ({reads[name] - late[name]:5d} from "
              f"round {split})  cpu before {before:6.2f} ms, from round {split} {after:6.2f} ms")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workspace", type=Path, default=HERE / "work" / "ws")
    ap.add_argument("--rounds", type=int, default=36)
    ap.add_argument("--split", type=int, default=12, help="the round the medians split at")
    ap.add_argument("--scale", type=float, default=1.0, help="the tree cache's bounds times this")
    ap.add_argument("--seed", type=int, default=None, help="the edits' seed (default: the time)")
    ap.add_argument("--src", default=None, help="a server/ folder to import turnback from")
    a = ap.parse_args(argv)
    run(a.workspace, a.rounds, a.split, a.scale, a.seed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
