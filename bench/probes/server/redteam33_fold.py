"""A red-team pass over ``atonce27``'s fold (``Store.fold_held``), in three figures.

``wait``: a fold's own time (until fold28 a write waited for all of it: the fold held
the folder's write lock and the gc lock exclusive): its wall time and its disk waits
(``os.fsync``/``os.fdatasync`` calls), for one at-once checkpoint's raw frame, the same
with 16 CLI logs waiting, a held batch past ``HELD_BYTES``, and ``fsync`` "never".
``left``: the bytes a server's raw frames leave in its log when it dies before its fold,
against the same frames folded. ``kills N``: a child looping edit, checkpoint
(``raw_held``), fold (after ``fold_left`` once, as a starting server since fold28),
SIGKILLed 0-150 ms after its first checkpoint, N times; then the logs and packs left,
every checkpoint's files read, fsck.

``during N``: a checkpoint asked once a fold has begun writing its pack (fold28): its wall
time against the same checkpoint with no fold, N rounds (and N/4 with 16 CLI logs).

    PYTHONPATH=server:tests python bench/probes/server/redteam33_fold.py wait|left|kills \\
        N|during N SCRATCH
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from turnback import Store
from turnback.objects import packlog
from turnback.objects.objectstore import BLOB
from wsutil import age_tree, write

_SYNCS = [0]


def _count_syncs() -> None:
    for name in ("fsync", "fdatasync"):
        real = getattr(os, name)

        def counted(fd: int, real=real) -> None:  # type: ignore[no-untyped-def]
            _SYNCS[0] += 1
            real(fd)
        setattr(os, name, counted)


def _edit(ws: Path, tag: str, nfiles: int, size: int) -> None:
    for i in range(nfiles):
        write(ws, f"d{i % 20}/f{i}.txt", (f"{tag} {i} " * (size // 8 + 1))[:size])
    age_tree(ws)


def _bytes(folder: Path, suffix: str = "") -> int:
    names = packlog.log_names(folder) if folder.name == "log" else [
        n for n in os.listdir(folder) if n.endswith(suffix)]
    return sum((folder / n).stat().st_size for n in names)


def _wait(label: str, ws: Path, nfiles: int, size: int, cli_logs: int, rounds: int,
          fsync: str = "commit") -> None:
    ws.mkdir(parents=True)
    _edit(ws, "start", 200, 4000)
    with Store.open(ws, create=True) as s:
        s.checkpoint(label="walk")
        s.merge_logs(at_least=0)
    times, syncs = [], []
    for r in range(rounds):
        for c in range(cli_logs):  # other processes' logs, as CLI checkpoints leave them
            _edit(ws, f"cli{r}-{c}", 3, 3000)
            with Store.open(ws) as other:
                other.checkpoint(label=f"cli{r}-{c}")
        with Store.open(ws) as s:
            s.config.fsync = fsync
            s.objects.raw_held = True
            _edit(ws, f"held{r}", nfiles, size)
            s.checkpoint(label=f"held{r}")
            _SYNCS[0] = 0
            t = time.perf_counter()
            s.fold_held()
            times.append((time.perf_counter() - t) * 1000)
            syncs.append(_SYNCS[0])
    print(f"{label}: fold ms median {statistics.median(times):.1f} max {max(times):.1f}; "
          f"disk waits median {statistics.median(syncs):.0f} max {max(syncs)}; "
          f"load {os.getloadavg()[0]:.1f}")
    shutil.rmtree(ws)


def wait(base: Path) -> None:
    _count_syncs()
    _wait("one at-once checkpoint (10 files x 5 KB), 20 folds", base / "s1", 10, 5000, 0, 20)
    _wait("the same + 16 CLI logs before each fold, 5 folds", base / "s2", 10, 5000, 16, 5)
    _wait("a held batch of 100 files x 20 KB (past HELD_BYTES), 5 folds", base / "s3", 100,
          20000, 0, 5)
    _wait("one at-once checkpoint, fsync never, 20 folds", base / "s4", 10, 5000, 0, 20,
          fsync="never")


def _during(label: str, ws: Path, cli_logs: int, rounds: int) -> None:
    """A checkpoint of 3 changed files (their paths given, as a server's) asked once the
    fold has begun writing its pack (its ``_rewrite`` entered, on another thread): that
    checkpoint's wall time, and the same checkpoint asked with no fold, alternating."""
    ws.mkdir(parents=True)
    _edit(ws, "start", 200, 4000)
    with Store.open(ws, create=True) as s:
        s.checkpoint(label="walk")
        s.merge_logs(at_least=0)
    during, alone, fold_ms = [], [], []
    three = {f"d{i}/f{i}.txt" for i in range(3)}  # a server's at-once checkpoint: its paths
    for r in range(rounds):
        for c in range(cli_logs):
            _edit(ws, f"cli{r}-{c}", 3, 3000)
            with Store.open(ws) as other:
                other.checkpoint(label=f"cli{r}-{c}")
        with Store.open(ws) as s:
            s.objects.raw_held = True
            _edit(ws, f"held{r}", 10, 5000)
            s.checkpoint(label=f"held{r}")
            s.checkpoint(dirty=three, label=f"warm{r}")  # a scan base, as in a server
            _edit(ws, f"alone{r}", 3, 3000)
            t = time.perf_counter()
            s.checkpoint(dirty=three, label=f"alone{r}")
            alone.append((time.perf_counter() - t) * 1000)
            began = threading.Event()
            real = s.objects._rewrite

            def rewrite(*a: Any, real: Any = real, began: threading.Event = began) -> int:
                began.set()
                return int(real(*a))
            s.objects._rewrite = rewrite  # type: ignore[method-assign]
            took: list[float] = []

            def fold(s: Store = s, took: list[float] = took) -> None:
                t0 = time.perf_counter()
                s.fold_held()
                took.append((time.perf_counter() - t0) * 1000)
            _edit(ws, f"during{r}", 3, 3000)
            f = threading.Thread(target=fold)
            f.start()
            if not began.wait(30):
                raise SystemExit("the fold did not begin its pack")
            t = time.perf_counter()
            s.checkpoint(dirty=three, label=f"during{r}")
            during.append((time.perf_counter() - t) * 1000)
            f.join()
            fold_ms.append(took[0])
    print(f"{label}: checkpoint asked during a fold ms median {statistics.median(during):.1f} "
          f"max {max(during):.1f}; the same with no fold median "
          f"{statistics.median(alone):.1f} max {max(alone):.1f}; the fold median "
          f"{statistics.median(fold_ms):.1f} max {max(fold_ms):.1f}; "
          f"load {os.getloadavg()[0]:.1f}")
    shutil.rmtree(ws)


def during(base: Path, rounds: int) -> None:
    _during(f"one at-once checkpoint's fold, {rounds} rounds", base / "d1", 0, rounds)
    _during(f"the same + 16 CLI logs, {max(rounds // 4, 1)} rounds", base / "d2", 16,
            max(rounds // 4, 1))


def left(ws: Path) -> None:
    ws.mkdir(parents=True)
    logs, packs = ws / ".turnback" / "objects" / "log", ws / ".turnback" / "objects" / "pack"
    _edit(ws, "start", 200, 4000)
    with Store.open(ws, create=True) as s:
        s.checkpoint(label="walk")
        s.merge_logs(at_least=0)
    for n in (10, 50):
        s = Store.open(ws)
        s.objects.raw_held = True
        _edit(ws, f"held{n}", n, 5000)
        s.checkpoint(label=f"held{n}")
        raw, before = _bytes(logs), _bytes(packs, ".pack")
        s.objects._log = None  # as a SIGKILL: the log stays as written, nothing folds it
        with Store.open(ws) as other:
            other.merge_logs(at_least=0)
        print(f"{n} files x 5000 B: raw frames left {raw} B; folded, the packs grew "
              f"{_bytes(packs, '.pack') - before} B")
    shutil.rmtree(ws)


_CHILD = r"""
import sys
from pathlib import Path
from turnback import Store
from wsutil import age_tree, write
ws, n = Path(sys.argv[1]), sys.argv[2]
with Store.open(ws) as s:
    s.objects.raw_held = True
    s.fold_left()  # a starting server's first quiet moment (fold28)
    for k in range(1000):
        for i in range(5):
            write(ws, f"d{i}/f.txt", f"{n} {k} {i}\n" * 3000)
        age_tree(ws)
        print(s.checkpoint(label=f"c{n}-{k}").id, flush=True)
        s.fold_held()
"""


def kills(ws: Path, cycles: int) -> None:
    ws.mkdir(parents=True)
    write(ws, "a.txt", "a")
    age_tree(ws)
    with Store.open(ws, create=True) as s:
        s.checkpoint(label="first")
    rng = random.Random(1)
    for n in range(cycles):
        p = subprocess.Popen([sys.executable, "-c", _CHILD, str(ws), str(n)],
                             stdout=subprocess.PIPE, text=True)
        assert p.stdout is not None
        p.stdout.readline()
        time.sleep(rng.uniform(0, 0.15))
        p.send_signal(signal.SIGKILL)
        p.wait()
    objects = ws / ".turnback" / "objects"
    names = packlog.log_names(objects / "log")
    empty = sum(1 for n in names if (objects / "log" / n).stat().st_size == 0)
    pack_names = os.listdir(objects / "pack")
    no_idx = [n for n in pack_names if n.endswith(".pack") and n[:-5] + ".idx" not in pack_names]
    print(f"{cycles} kills: logs {len(names)} ({empty} empty) {_bytes(objects / 'log')} B; "
          f"packs {sum(n.endswith('.pack') for n in pack_names)} ({len(no_idx)} without an "
          f"index) {_bytes(objects / 'pack', '.pack')} B; load {os.getloadavg()[0]:.1f}")
    with Store.open(ws) as s:
        bad = 0
        cps = s.checkpoints()
        for cp in cps:
            for i in range(5):
                entry = s.trees.lookup(cp.tree, f"d{i}/f.txt")
                if entry is not None:
                    try:
                        s.objects.get(BLOB, entry.hash)
                    except Exception:  # counted: the figure is the count
                        bad += 1
        print(f"checkpoints {len(cps)}, objects unreadable {bad}, fsck ok {s.fsck().ok}")
    shutil.rmtree(ws)


def main() -> None:
    what, scratch = sys.argv[1], Path(sys.argv[-1])
    if what == "wait":
        wait(scratch)
    elif what == "during":
        during(scratch, int(sys.argv[2]))
    elif what == "left":
        left(scratch)
    else:
        kills(scratch, int(sys.argv[2]))


if __name__ == "__main__":
    main()
