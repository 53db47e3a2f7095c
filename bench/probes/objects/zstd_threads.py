"""Whether the calls a rewind's target read makes run on two threads at once (GIL released).

A pack read (``PackReader._decompress``) inflates its block through zstd's stream reader and
``ObjectStore`` checks the result with BLAKE3. Each call is timed over ``--reads`` blocks of
``--kib`` KiB (text as ``gen_workspace.py`` writes), on one thread and then split over two;
a speed-up near 2 means the call releases the GIL (and two cores were free):

    python bench/probes/objects/zstd_threads.py --reads 2000 --kib 64
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import threading
import time
from collections.abc import Callable

import blake3
import zstandard


def _block(kib: int) -> bytes:
    rng = random.Random(1)
    words = [bytes(rng.choice(b"abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(2, 9)))
             for _ in range(3000)]
    return b" ".join(rng.choice(words) for _ in range(kib * 200))[: kib << 10]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reads", type=int, default=2000)
    ap.add_argument("--kib", type=int, default=64)
    a = ap.parse_args()
    raw = _block(a.kib)
    frame = zstandard.ZstdCompressor(level=3).compress(raw)

    def stream(n: int) -> None:
        d = zstandard.ZstdDecompressor()
        for _ in range(n):
            d.stream_reader(frame).read(len(raw) + 1)

    def whole(n: int) -> None:
        d = zstandard.ZstdDecompressor()
        for _ in range(n):
            d.decompress(frame)

    def hashed(n: int) -> None:
        for _ in range(n):
            blake3.blake3(raw).hexdigest()

    calls: list[tuple[str, Callable[[int], None]]] = [
        ("zstd stream_reader().read (packs.py)", stream),
        ("zstd decompress()", whole), ("blake3 of the block", hashed)]
    print(f"{a.reads} blocks of {a.kib} KiB; load {os.getloadavg()[0]:.2f}")
    for name, fn in calls:
        t = time.perf_counter()
        fn(a.reads)
        one = time.perf_counter() - t
        threads = [threading.Thread(target=fn, args=(a.reads // 2,)) for _ in range(2)]
        t = time.perf_counter()
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        two = time.perf_counter() - t
        print(f"  {name:38s} 1 thread {one * 1e3:7.1f} ms, 2 threads {two * 1e3:7.1f} ms: "
              f"x{one / two:.2f}")
    print(f"load {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
