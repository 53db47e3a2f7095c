"""What a rewind's journal costs before the first workspace file may change: written as a
new file renamed into place (format 2: its content synced with the safety record, then its
folder), or written in place into the file that stays between rewinds (format 3: content
and record synced together, no folder).

Each round appends a 300-byte safety record, unsynced, to a ``checkpoints.jsonl`` and
writes a 1.7 KB journal (a 10-file rewind's) both ways, alternating which goes first, then
ends it (unlink, or truncate). The format 2 side is ``fs.atomic.atomic_write`` with
``sync_with``, as ``OpLog.begin`` was; the format 3 side is ``OpLog.begin`` itself.

    python bench/journal_wait.py --dir /work/benchdata/rewind16/jw --rounds 60
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "server"))

from turnback.fs.atomic import atomic_write  # noqa: E402
from turnback.fs.jsonl import append_lines, dumps  # noqa: E402
from turnback.rewind import signing  # noqa: E402
from turnback.rewind.oplog import OpLog  # noqa: E402

RECORD = {"id": "0123456789ab", "label": "before rewind to 0123456789ab", "x": "y" * 200}
JOURNAL = {"id": "0123456789abcdef", "op": "rewind",
           "plan": {"write": {f"src/some/deep/folder/file_{i}.py": ["f", "ab" * 32, 1500]
                              for i in range(10)}, "create": {}, "remove": []}}


def renamed(root: Path) -> float:
    """Format 2: a new file, synced with the record, renamed, its folder synced."""
    index = root / "checkpoints.jsonl"
    append_lines(index, [RECORD], fsync=False)
    t0 = time.perf_counter()
    atomic_write(root / "journal.json", dumps(signing.sign(JOURNAL)), sync_with=[index])
    took = time.perf_counter() - t0
    (root / "journal.json").unlink()
    return took


def in_place(root: Path, log: OpLog) -> float:
    """Format 3: the same line written into the file that stays, synced with the record."""
    index = root / "checkpoints.jsonl"
    append_lines(index, [RECORD], fsync=False)
    t0 = time.perf_counter()
    log.begin(JOURNAL, fsync=True, sync_with=[index])
    took = time.perf_counter() - t0
    log.end()
    return took


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", type=Path, default=HERE / "work" / "journal-wait")
    ap.add_argument("--rounds", type=int, default=60)
    a = ap.parse_args()
    a.dir.mkdir(parents=True, exist_ok=True)
    old, new = a.dir / "v2", a.dir / "v3"
    old.mkdir(exist_ok=True)
    new.mkdir(exist_ok=True)
    log = OpLog(new)
    log.begin(JOURNAL, fsync=True)  # the store's first rewind made the file
    log.end()
    times: dict[str, list[float]] = {"renamed": [], "in place": []}
    load = [os.getloadavg()[0]]
    try:
        for i in range(a.rounds):
            order = ("renamed", "in place") if i % 2 == 0 else ("in place", "renamed")
            for side in order:
                took = renamed(old) if side == "renamed" else in_place(new, log)
                times[side].append(took * 1000)
    finally:
        load.append(os.getloadavg()[0])
        shutil.rmtree(old, ignore_errors=True)
        shutil.rmtree(new, ignore_errors=True)
    print(f"{a.rounds} rounds each, alternating, load {load[0]:.2f} -> {load[1]:.2f}")
    for side, ts in times.items():
        q = statistics.quantiles(ts, n=4)
        print(f"  {side:9s} median {statistics.median(ts):6.2f} ms  quartiles {q[0]:6.2f} "
              f"{q[2]:6.2f}  min {min(ts):6.2f}  max {max(ts):6.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
