"""What a rewind waits for before its first workspace file may change, the safety checkpoint's
log frame synced on its own and then the journal (the base before branch ``rewind16b``), or
the frame synced in the journal's wait (``rewind16b``).

Each round appends a 40 KB frame (a 10-file rewind's safety checkpoint: two zstd blocks and
its record) to an object log, unsynced, and writes a 1.7 KB journal (a 10-file rewind's),
both ways, alternating which goes first, then ends it:

- two waits: the frame ``fdatasync``ed, the record's line appended to ``checkpoints.jsonl``,
  then ``OpLog.begin`` with that file in its wait (as ``ObjectStore.commit`` then
  ``RewindOps._rewind_files`` did);
- one wait: ``OpLog.begin`` with the log in its wait, the line appended after it.

Times from the frame's write to the journal's wait returning.

    python bench/probes/rewind/safety_wait.py --dir /work/benchdata/rewind16b/sw --rounds 60
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[2]  # bench/ (this probe is in bench/probes/<topic>/)
sys.path.insert(0, str(HERE.parent / "server"))

sys.path.insert(0, str(HERE))  # the shared modules
from wait_rounds import JOURNAL, RECORD, alternate  # noqa: E402

from turnback.fs.jsonl import append_lines  # noqa: E402
from turnback.rewind.oplog import OpLog  # noqa: E402

FRAME = os.urandom(40_000)


class Side:
    def __init__(self, root: Path) -> None:
        root.mkdir(parents=True, exist_ok=True)
        self.root = root
        self.index = root / "checkpoints.jsonl"
        self.log_fd = os.open(root / "log", os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o600)
        os.fsync(self.log_fd)
        self.oplog = OpLog(root)
        self.oplog.begin(JOURNAL, fsync=True)  # the store's first rewind made the file
        self.oplog.end()

    def two_waits(self) -> float:
        t0 = time.perf_counter()
        os.write(self.log_fd, FRAME)
        os.fdatasync(self.log_fd)
        append_lines(self.index, [RECORD], fsync=False)
        self.oplog.begin(JOURNAL, fsync=True, sync_with=[self.index])
        took = time.perf_counter() - t0
        self.oplog.end()
        return took

    def one_wait(self) -> float:
        t0 = time.perf_counter()
        os.write(self.log_fd, FRAME)
        self.oplog.begin(JOURNAL, fsync=True, sync_with=[self.root / "log"])
        took = time.perf_counter() - t0
        append_lines(self.index, [RECORD], fsync=False)
        self.oplog.end()
        return took

    def close(self) -> None:
        os.close(self.log_fd)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", type=Path, default=HERE / "work" / "safety-wait")
    ap.add_argument("--rounds", type=int, default=60)
    a = ap.parse_args()
    sides = {"two waits": Side(a.dir / "two"), "one wait": Side(a.dir / "one")}

    def cleanup() -> None:
        for side in sides.values():
            side.close()
        shutil.rmtree(a.dir, ignore_errors=True)

    alternate({"two waits": sides["two waits"].two_waits,
               "one wait": sides["one wait"].one_wait}, a.rounds, cleanup)
    return 0


if __name__ == "__main__":
    sys.exit(main())
