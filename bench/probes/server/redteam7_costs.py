"""What the red-team pass over trust7's fixes (branch redteam7) measured.

1. ``worker``: the server's worker given a planted stat cache whose header is ``[[[...]]]``
   100,000 deep: seconds from ``fork_worker`` until the walk has its checker (or gives up
   after ``JOB_WAIT_S``). Run against a package folder (``PYTHONPATH``) of the base and of
   the branch, alternating.
2. ``trees``: CPU of the check of ``dirtrees`` entries' types, 10,000 folders (best of 50).
3. ``cap``: memory and CPU of reading a header at the cap made of tiny entries (3,000,000
   in each of ``dirrecs`` and ``dirtrees``, 63.8 MB): ``--reader store`` (``StatCache.load``)
   or ``--reader child`` (``prescan.read_records``); ``maxrss`` of this process.

    PYTHONPATH=server .venv/bin/python bench/probes/server/redteam7_costs.py worker --scratch DIR
    PYTHONPATH=server .venv/bin/python bench/probes/server/redteam7_costs.py trees
    PYTHONPATH=server .venv/bin/python bench/probes/server/redteam7_costs.py cap --reader store \\
        --scratch DIR
"""

from __future__ import annotations

import argparse
import os
import resource
import struct
import time
from pathlib import Path

from turnback.snapshot import prescan


def _plant(path: Path, header: bytes, files: int) -> None:
    path.write_bytes(prescan.MAGIC + struct.pack("<I", len(header)) + header
                     + struct.pack("<III", files, 0, 0))


def worker(scratch: Path) -> None:
    ws = scratch / "ws"
    ws.mkdir(exist_ok=True)
    stat = scratch / "stat.bin"
    _plant(stat, b"[" * 100_000 + b"]" * 100_000, prescan.FORK_MIN_FILES)
    started = time.monotonic()
    made = prescan.fork_worker(lambda fd: None, early=(str(ws), str(stat)))
    assert made is not None, "no fork here"
    checker = made.start(str(ws), [], {}, str(stat), None)
    took = time.monotonic() - started
    if checker is not None:
        checker.finish([], {})
    print(f"worker: {took:.3f} s until the walk has its checker "
          f"({'taken' if checker is not None else 'given up: walked alone'})")


def trees() -> None:
    from turnback.snapshot.statcache import StatCache

    planted = {f"d{i}/sub{i}": ["a" * 64, i, i * 10, i % 7] for i in range(10_000)}
    best = float("inf")
    for _ in range(50):
        t = time.process_time()
        StatCache._check_trees(planted)
        best = min(best, time.process_time() - t)
    print(f"trees: {best * 1000:.3f} ms of CPU (best of 50) for 10,000 folders")


def cap(reader: str, scratch: Path) -> None:
    stat = scratch / "stat.bin"
    pid = os.fork()  # planted by a child: its memory is not in this process's maxrss
    if pid == 0:
        entries = b",".join(b'"%x":0' % i for i in range(3_000_000))
        header = b'{"dirrecs":{' + entries + b'},"dirtrees":{' + entries + b'}}'
        _plant(stat, header, 0)
        os._exit(0 if len(header) <= prescan.HEADER_MAX else 1)
    assert os.waitpid(pid, 0)[1] == 0, "the planted header is over the cap"
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t = time.process_time()
    if reader == "store":
        from turnback.snapshot.statcache import StatCache

        StatCache(stat).load()
    else:
        prescan.read_records(str(stat))
    cpu = time.process_time() - t
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(f"cap ({reader}): header {os.path.getsize(stat) - 24:,} bytes; {cpu:.2f} s of CPU; "
          f"maxrss {before / 1024:.0f} MB before the read, {after / 1024:.0f} MB after")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=["worker", "trees", "cap"])
    ap.add_argument("--scratch", type=Path, default=Path("."))
    ap.add_argument("--reader", choices=["store", "child"], default="store")
    args = ap.parse_args()
    if args.what == "worker":
        worker(args.scratch)
    elif args.what == "trees":
        trees()
    else:
        cap(args.reader, args.scratch)


if __name__ == "__main__":
    main()
