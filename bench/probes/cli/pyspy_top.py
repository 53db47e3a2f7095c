"""Summarise a ``py-spy record -f raw`` file: own and inclusive share of samples per function.

py-spy samples every thread, so this shows the worker threads' hashing and
compression too (a profiler in the main thread only sees it waiting).

    py-spy record -r 200 -f raw -o /tmp/x.raw -- python script.py
    python bench/probes/cli/pyspy_top.py /tmp/x.raw [--top 30] [--lines]
"""

from __future__ import annotations

import argparse
import collections
import sys
from pathlib import Path


def frame_key(frame: str, lines: bool) -> str:
    """``func (file:line)`` -> ``func (file)`` unless ``lines``."""
    if lines or " (" not in frame:
        return frame
    name, _, where = frame.partition(" (")
    return f"{name} ({where.rsplit(':', 1)[0]})"


def summarise(
    raw: Path, lines: bool
) -> tuple[int, collections.Counter[str], collections.Counter[str]]:
    own: collections.Counter[str] = collections.Counter()
    incl: collections.Counter[str] = collections.Counter()
    total = 0
    for line in raw.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        n = int(count)
        total += n
        frames = [frame_key(f, lines) for f in stack.split(";")]
        own[frames[-1]] += n
        for f in set(frames):
            incl[f] += n
    return total, own, incl


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("raw", type=Path)
    ap.add_argument("--top", type=int, default=30)
    ap.add_argument(
        "--rate", type=float, default=200.0, help="py-spy's -r (samples/s), for seconds"
    )
    ap.add_argument("--lines", action="store_true", help="keep line numbers in own time")
    a = ap.parse_args(argv)
    total, own, incl = summarise(a.raw, a.lines)
    if not total:
        print(f"no samples in {a.raw}", file=sys.stderr)
        return 1
    print(f"{total} samples (≈ {total / a.rate:.2f} thread-seconds busy)")
    for title, counter in (("own time", own), ("inclusive", incl)):
        print(f"--- {title}")
        for key, n in counter.most_common(a.top):
            print(f"{n / total * 100:5.1f}%  {n / a.rate:7.3f}s  {key}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
