"""What a rewind's journal costs before the first workspace file may change: written as a
new file renamed into place (format 2: its content synced with the safety record, then its
folder), or written in place into the file that stays between rewinds (format 3: content
and record synced together, no folder).

Each round appends a 300-byte safety record, unsynced, to a ``checkpoints.jsonl`` and
writes a 1.7 KB journal (a 10-file rewind's) both ways, alternating which goes first, then
ends it (unlink, or truncate). The format 2 side is ``fs.atomic.atomic_write`` with
``sync_with``, as ``OpLog.begin`` was; the format 3 side is ``OpLog.begin`` itself.

    python bench/probes/rewind/journal_wait.py --dir /work/benchdata/rewind16/jw --rounds 60
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[2]  # bench/ (this probe is in bench/probes/<topic>/)
sys.path.insert(0, str(HERE.parent / "server"))

sys.path.insert(0, str(HERE))  # the shared modules
from wait_rounds import JOURNAL, RECORD, alternate  # noqa: E402

from turnback.fs.atomic import atomic_write  # noqa: E402
from turnback.fs.jsonl import append_lines, dumps  # noqa: E402
from turnback.rewind import signing  # noqa: E402
from turnback.rewind.oplog import OpLog  # noqa: E402


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

    def cleanup() -> None:
        shutil.rmtree(old, ignore_errors=True)
        shutil.rmtree(new, ignore_errors=True)

    alternate({"renamed": lambda: renamed(old), "in place": lambda: in_place(new, log)},
              a.rounds, cleanup)
    return 0


if __name__ == "__main__":
    sys.exit(main())
