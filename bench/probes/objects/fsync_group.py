"""What a checkpoint's object fsyncs cost, one after the other or waited for together.

A checkpoint makes its pack, its pack index and their folder durable before it
commits (``ObjectStore.sync``). This writes the same three (a 60 KB pack, a 2 KB
index renamed into place, the folder) and times their fsyncs both ways, interleaved,
on the file system that holds ``--dir`` (by default the benchmark's), through
``turnback.fs.atomic.fsync_all`` for the second.

    python bench/probes/objects/fsync_group.py [--dir bench/work/fsync-test] [--rounds 15]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import time
from pathlib import Path

from turnback.fs.atomic import fsync_all

HERE = Path(__file__).resolve().parents[2]  # bench/ (this probe is in bench/probes/<topic>/)


def one(d: Path, i: int, together: bool) -> float:
    pack = os.open(d / f"p{i}", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.write(pack, os.urandom(60_000))
    os.close(pack)
    tmp = d / f"x{i}.tmp"
    idx = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.write(idx, os.urandom(2_000))
    os.close(idx)
    os.replace(tmp, d / f"x{i}")
    t0 = time.perf_counter()
    if together:
        fsync_all([d / f"p{i}", d / f"x{i}"], [d])  # what ObjectStore.sync does
    else:
        for path in (d / f"p{i}", d / f"x{i}"):
            fd = os.open(path, os.O_RDONLY)
            os.fsync(fd)
            os.close(fd)
        fd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
        os.fsync(fd)
        os.close(fd)
    return time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", type=Path, default=HERE / "work" / "fsync-test")
    ap.add_argument("--rounds", type=int, default=15)
    a = ap.parse_args(argv)
    d: Path = a.dir
    d.mkdir(parents=True, exist_ok=True)
    seq: list[float] = []
    together: list[float] = []
    try:
        for i in range(a.rounds):
            seq.append(one(d, i, False))
            together.append(one(d, i, True))
    finally:
        shutil.rmtree(d, ignore_errors=True)
    one_min, five_min, _ = os.getloadavg()
    print(f"3 fsyncs (pack, index, folder), median of {a.rounds}, load {one_min:.2f} "
          f"{five_min:.2f}: one after the other {statistics.median(seq) * 1000:.2f} ms, "
          f"together {statistics.median(together) * 1000:.2f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
