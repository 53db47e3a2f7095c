"""What a log planted in ``objects/log/`` costs every ``Store.open`` (logs18).

A one-checkpoint store, plus a log under a valid name (``log-1-<16 hex>``) of ``--mib``
MiB of frames whose structure holds, each hash right, ending in a torn frame (a few bytes
of a head): the torn end makes the open's walk back read the log forward first.
``--frames empty``: frames with no object and no record (60 bytes, the smallest; no
writer writes one); ``--frames row``: one row and a byte of block each (113 bytes, what a
writer's invariants still allow). Each run is a fresh process that opens and closes the
store and prints its CPU time (``time.process_time``) and peak RSS (``ru_maxrss``); the
median of ``--repeat`` and the load average before and after are printed. ``--read``: the
CPU of the process's first object read after the open instead (``read_file`` of ``--path``;
``--build --big``: the store also holds ``big.bin``, 1 MiB of random bytes, a loose object:
redteam19).

``--src DIR`` imports ``turnback`` from another commit's ``server/`` (``git archive REF
server``) for A/B runs:

    python bench/probes/objects/planted_log.py --dir /work/benchdata/logs18/plant32 --mib 32 --build
    python bench/probes/objects/planted_log.py --dir /work/benchdata/logs18/plant32 [--src \\
        base/server]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[2]  # bench/ (this probe is in bench/probes/<topic>/)
PLANTED = "log-1-0123456789abcdef"


def _import(src: str | None) -> None:
    sys.path.insert(0, src or str(HERE.parent / "server"))


def build(ws: Path, mib: int, kind: str, big: bool) -> None:
    from turnback import Store
    from turnback.objects.packlog import LOG_MAGIC, encode

    ws.mkdir(parents=True, exist_ok=True)
    (ws / "a.txt").write_text("a\n")
    if big:
        (ws / "big.bin").write_bytes(os.urandom(1 << 20))
    with Store.open(ws, create=True) as store:
        store.checkpoint()
        folder = store.root / "objects" / "log"
    size = mib << 20
    with open(folder / PLANTED, "wb") as f:
        f.write(LOG_MAGIC)
        pos = len(LOG_MAGIC)
        n = 0
        while pos < size:
            if kind == "empty":
                frame = encode(pos, [], b"", b"")
            else:
                # a row: a 32-byte name, then block offset (the byte after the head),
                # block length, offset in the block, length (packs._ENTRY: >32sQIII)
                row = n.to_bytes(32, "big") + (pos + 20).to_bytes(8, "big") + \
                    (1).to_bytes(4, "big") + (0).to_bytes(4, "big") + (1).to_bytes(4, "big")
                frame = encode(pos, [b"\0"], row, b"")
            f.write(frame)
            pos += len(frame)
            n += 1
        f.write(b"TBFR\0\0")  # a torn end
    print(f"planted {n} {kind} frames, {pos} bytes")


def once(ws: Path, read: bool, path: str) -> None:
    from turnback import Store

    t = time.process_time()
    with Store.open(ws) as store:
        if read:  # the process's first object read: every log's frames taken into the index
            cp = store.checkpoints()[0]
            t = time.process_time()
            store.read_file(cp.id, path)
    cpu = time.process_time() - t
    print(f"{cpu * 1000:.1f} {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}")


def _load() -> str:
    return Path("/proc/loadavg").read_text().split()[0] if os.path.exists("/proc/loadavg") else "?"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", required=True, type=Path)
    ap.add_argument("--mib", type=int, default=32)
    ap.add_argument("--frames", choices=("empty", "row"), default="empty")
    ap.add_argument("--build", action="store_true")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--src", default=None)
    ap.add_argument("--read", action="store_true",
                    help="time a first object read after the open instead of the open")
    ap.add_argument("--path", default="a.txt", help="the file --read reads")
    ap.add_argument("--big", action="store_true", help="--build: a 1 MiB loose file too")
    ap.add_argument("--once", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    _import(a.src)
    if a.build:
        build(a.dir, a.mib, a.frames, a.big)
        return
    if a.once:
        once(a.dir, a.read, a.path)
        return
    before = _load()
    cpu, rss = [], []
    for _ in range(a.repeat):
        cmd = [sys.executable, __file__, "--dir", str(a.dir), "--once"] + (
            ["--read", "--path", a.path] if a.read else [])
        if a.src:
            cmd += ["--src", a.src]
        out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.split()
        cpu.append(float(out[0]))
        rss.append(int(out[1]))
    after = _load()
    what = "read" if a.read else "open"
    print(f"{what} {a.src or 'branch'}: median {statistics.median(cpu):.1f} ms CPU "
          f"(runs {', '.join(f'{c:.1f}' for c in cpu)}), peak RSS {max(rss) / 1024:.1f} MiB, "
          f"load {before} -> {after}")


if __name__ == "__main__":
    main()
