"""What the redteam10 fixes cost, and what a planted or piled-up object log costs an open.

    # CPU of reading a 2,000-file checkpoint
    python bench/probes/objects/redteam10_costs.py SCRATCH reads
    python bench/probes/objects/redteam10_costs.py SCRATCH gc        # CPU of a gc merging 51 logs
    # open with a planted 400 MiB log
    python bench/probes/objects/redteam10_costs.py SCRATCH hugelog 400
    python bench/probes/objects/redteam10_costs.py SCRATCH manylogs 5000 # open with 5,000 logs

``SRC`` names the ``server`` folder to import (a base commit's, from ``git archive <commit>
server | tar -x -C DIR``); by default this checkout's. Run base and branch alternately.
"""

from __future__ import annotations

import os
import resource
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, os.environ.get("SRC", str(Path(__file__).resolve().parents[3] / "server")))

from turnback import Store
from turnback.objects import packlog

SIDE = os.environ.get("SRC", "branch")


def _files(ws: Path, n: int) -> None:
    for i in range(n):
        p = ws / f"d{i % 20}" / f"f{i}.txt"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(f"file {i}\n" * 20)


def reads(root: Path) -> None:
    ws = root / "reads"
    if not ws.exists():
        _files(ws, 2000)
        with Store.open(ws) as s:
            s.checkpoint()
    runs = []
    for _ in range(5):
        with Store.open(ws) as s:
            s.objects._ensure_index()
            names = list(s.objects.packs.names())
            t = time.process_time()
            for n in names:
                s.objects._raw(n)
            runs.append(time.process_time() - t)
    runs.sort()
    print(f"{SIDE}: {len(names)} objects read, CPU best {1000 * runs[0]:.1f} ms, "
          f"median {1000 * runs[2]:.1f} ms")


def gc(root: Path) -> None:
    seed = root / "gcseed"
    if not seed.exists():
        _files(seed, 2000)
        for k in range(50):
            with Store.open(seed) as s:  # a Store each: a log each, as processes make
                (seed / "d0" / "f0.txt").write_text(f"edit {k}\n")
                s.checkpoint()
    ws = root / "gcrun"
    shutil.rmtree(ws, ignore_errors=True)
    shutil.copytree(seed, ws, symlinks=True)
    with Store.open(ws) as s:
        t, w = time.process_time(), time.perf_counter()
        s.gc()
        print(f"{SIDE}: gc CPU {1000 * (time.process_time() - t):.0f} ms, "
              f"wall {1000 * (time.perf_counter() - w):.0f} ms")


def _open(ws: Path, what: str) -> None:
    cpu, t = time.process_time(), time.perf_counter()
    with Store.open(ws) as s:
        s.checkpoints()
        s.read_file("latest", "a.txt")
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    print(f"{SIDE}: {what}: open + list + read, wall {time.perf_counter() - t:.3f} s, "
          f"CPU {time.process_time() - cpu:.3f} s, max RSS {rss} MiB")


def _one_checkpoint(ws: Path) -> Path:
    ws.mkdir(parents=True)
    (ws / "a.txt").write_text("a\n")
    with Store.open(ws) as s:
        s.checkpoint()
        return s.root / "objects" / "log"


def hugelog(root: Path, mib: int) -> None:
    ws = root / f"huge{mib}"
    if not ws.exists():
        folder = _one_checkpoint(ws)
        frame = packlog.encode(8, [], b"", b"")  # an empty frame: the same bytes anywhere
        n = (mib << 20) // len(frame)
        with open(folder / "log-1-0000000000000000", "wb") as f:
            f.write(packlog.LOG_MAGIC)
            for done in range(0, n, 100_000):
                f.write(frame * min(100_000, n - done))
    _open(ws, f"a planted {mib} MiB log of empty frames")


def manylogs(root: Path, n: int) -> None:
    ws = root / f"logs{n}"
    if not ws.exists():
        folder = _one_checkpoint(ws)
        (first,) = os.listdir(folder)
        data = (folder / first).read_bytes()
        for i in range(n - 1):
            (folder / f"log-{100000 + i}-{i:016x}").write_bytes(data)
    _open(ws, f"{n} logs")


if __name__ == "__main__":
    scratch, cmd = Path(sys.argv[1]), sys.argv[2]
    scratch.mkdir(parents=True, exist_ok=True)
    if cmd == "reads":
        reads(scratch)
    elif cmd == "gc":
        gc(scratch)
    elif cmd == "hugelog":
        hugelog(scratch, int(sys.argv[3]))
    elif cmd == "manylogs":
        manylogs(scratch, int(sys.argv[3]))
    else:
        sys.exit(f"unknown measure {cmd!r}: reads, gc, hugelog MiB, manylogs N")
