"""Where a small at-once checkpoint and rewind spend their time, in one process.

What the server does for "10 files changed, asked at once" and "rewind of 10 changed
files, asked at once", without the server: ``Store.checkpoint(dirty=…)`` right after 10
edits, then 10 more edits and ``Store.rewind(…, dirty=…, finish_later=True)`` to that
checkpoint, then ``finish_rewind`` (which the server runs after it has answered). Prints
each phase's median wall and CPU time with the load average. Each phase is marked by an
``access("/@@<phase>")`` call, so a system-call trace splits by phase:

    strace -f -T -e trace=fsync,fdatasync,syncfs,rename,renameat,renameat2,access,faccessat2 \\
        -o trace.txt python bench/atonce_parts.py --workspace bench/work/ws --rounds 10
    python bench/atonce_parts.py --summarize trace.txt

The workspace's store (``.turnback``) is made by a first checkpoint when missing.
``--again``: each rewind round's second edit is to the 10 files its checkpoint just stored
(an agent's next turn on the same files), so the rewind's targets are blobs this process
stored a moment before; by default they are 10 other files, whose targets a first checkpoint
stored. ``--profile PHASE`` prints cProfile's 40 first entries by cumulative time, or by the
sort ``PROF_SORT`` names (``tottime``: where the time is spent itself). ``--now``: the
checkpoint as the server's event loop runs it (``Store.checkpoint_now``, its stat cache
saved after the phase, as the server saves it once it has answered), and no rewind (the
paths a rewind wrote make the next ``checkpoint_now`` decline); a round it declines is
counted apart and its checkpoint taken by ``Store.checkpoint`` outside the phase.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import re
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from functools import partial
from pathlib import Path

HERE = Path(__file__).resolve().parent
# ``--src DIR``: the package from another commit's ``server/`` (``git archive REF server``),
# for A/B runs of the same workspace
_SRC = sys.argv[sys.argv.index("--src") + 1] if "--src" in sys.argv[:-1] else None
sys.path.insert(0, _SRC or str(HERE.parent / "server"))

from edits import Editor  # noqa: E402

from turnback.store.facade import Store  # noqa: E402

PHASES = ("checkpoint", "rewind", "finish")


def mark(phase: str) -> None:
    """A system call a trace shows with the phase's name; it fails, and costs nothing."""
    os.access(f"/@@{phase}", os.F_OK)


def run(workspace: Path, rounds: int, profile: str | None, seed: int | None = None,
        now: bool = False, raw_held: bool = False, again: bool = False) -> None:
    store = Store.open(workspace)
    fold = getattr(store, "fold_held", None) if raw_held else None  # not at the base
    store.objects.raw_held = fold is not None
    store.checkpoint(label="walk")  # the full scan the server's start does
    warm = getattr(store, "warm_trees", None)  # what the server does after it (not at the base)
    if warm is not None:
        warm()
    ed = Editor(workspace, seed=int(time.time()) if seed is None else seed)
    wall: dict[str, list[float]] = defaultdict(list)
    cpu: dict[str, list[float]] = defaultdict(list)
    load = [os.getloadavg()[0]]

    prof = cProfile.Profile() if profile else None

    def timed(phase: str, fn: Callable[[], object]) -> object:
        mark(phase)
        w, c = time.perf_counter(), time.process_time()
        if prof is not None and phase == profile:
            out = prof.runcall(fn)
        else:
            out = fn()
        wall[phase].append(time.perf_counter() - w)
        cpu[phase].append(time.process_time() - c)
        mark("idle")
        return out

    declined = 0
    try:
        for _ in range(rounds):
            edited = set(ed.edit(10))
            if now:
                if timed("checkpoint", partial(store.checkpoint_now, edited,
                                               label="at once")) is None:
                    declined += 1
                    store.checkpoint(label="at once", dirty=edited)
                store.save_scan_cache()
                if fold is not None:
                    fold()  # as the server's preparer does once quiet (server/jobs/prepare.py)
                continue
            cp = timed("checkpoint", partial(store.checkpoint, label="at once", dirty=edited))
            if again:
                if fold is not None:
                    fold()  # the turn's quiet moments: the server's preparer folds its log
                edited = set(ed.edit_again())
            else:
                edited = set(ed.edit(10))
            timed("rewind", partial(store.rewind, cp.id,  # type: ignore[attr-defined]
                                    dirty=edited, finish_later=True))
            timed("finish", store.finish_rewind)
    finally:
        store.close()
    load.append(os.getloadavg()[0])
    import turnback

    print(f"{turnback.__file__}: {rounds} rounds, load {load[0]:.2f} -> {load[1]:.2f}"
          + (f", checkpoint_now declined {declined}" if now else ""))
    if prof is not None:
        pstats.Stats(prof).sort_stats(os.environ.get("PROF_SORT", "cumulative")).print_stats(40)
    for phase in [p for p in PHASES if wall[p]]:
        print(f"  {phase:10s} wall {statistics.median(wall[phase]) * 1000:7.2f} ms  "
              f"cpu {statistics.median(cpu[phase]) * 1000:7.2f} ms (medians)")


LINE = re.compile(r"^(\d+)\s+(\w+)\((.*)\)\s+=\s+(-?\d+).*<([\d.]+)>$")
STARTED = re.compile(r"^(\d+)\s+(\w+)\(.*<unfinished \.\.\.>$")
RESUMED = re.compile(r"^(\d+)\s+<\.\.\. (\w+) resumed>.*<([\d.]+)>$")


def summarize(trace: Path) -> None:
    """Per phase and system call: calls per round and the time spent in them."""
    current = "idle"
    counts: dict[tuple[str, str], int] = defaultdict(int)
    secs: dict[tuple[str, str], float] = defaultdict(float)
    rounds: dict[str, int] = defaultdict(int)
    for raw in trace.read_text().splitlines():
        # a call another thread interrupted: counted where it starts, timed where it ends
        if (m := STARTED.match(raw)) is not None:
            counts[(current, m.group(2))] += 1
            continue
        if (m := RESUMED.match(raw)) is not None:
            secs[(current, m.group(2))] += float(m.group(3))
            continue
        m = LINE.match(raw)
        if m is None:
            continue
        call, args = m.group(2), m.group(3)
        if call in ("access", "faccessat2", "faccessat") and "/@@" in args:
            current = args.split("/@@", 1)[1].split('"', 1)[0]
            rounds[current] += 1
            continue
        # threads (the fsyncs waited for together) belong to the phase in progress
        key = (current, call)
        counts[key] += 1
        secs[key] += float(m.group(5))
    for phase in PHASES:
        n = rounds[phase] or 1
        print(f"{phase} ({rounds[phase]} rounds): per round")
        for (p, call), c in sorted(counts.items()):
            if p == phase:
                print(f"  {call:10s} {c / n:5.1f} calls  {secs[(p, call)] / n * 1000:7.2f} ms")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workspace", type=Path, default=HERE / "work" / "ws")
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--profile", choices=PHASES, default=None,
                    help="cProfile this phase (wall time, the callers' cumulative)")
    ap.add_argument("--src", default=None, help="a server/ folder to import turnback from")
    ap.add_argument("--now", action="store_true",
                    help="the checkpoint as the server's event loop runs it (checkpoint_now)")
    ap.add_argument("--summarize", type=Path, default=None, help="a trace to summarize")
    ap.add_argument("--again", action="store_true",
                    help="the rewind's edits are to the files the checkpoint just stored (an "
                         "agent's next turn on the same files; with --raw-held, the log "
                         "folded between), not to 10 others: its targets are recent blobs")
    ap.add_argument("--seed", type=int, default=None,
                    help="the edits' seed (default: the time): the same edits for callgrind")
    ap.add_argument("--raw-held", action="store_true",
                    help="held batches as raw frames, folded after each round, as a server "
                         "with a preparer writes them (ObjectStore.raw_held, Store.fold_held)")
    a = ap.parse_args(argv)
    if a.summarize is not None:
        summarize(a.summarize)
    else:
        run(a.workspace, a.rounds, a.profile, a.seed, a.now, a.raw_held, a.again)
    return 0


if __name__ == "__main__":
    sys.exit(main())
