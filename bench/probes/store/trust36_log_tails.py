"""``oplog.jsonl`` whose last operation is followed by a sparse 2 GiB with no newline (branch
``trust36``): the bytes read and CPU of one append to it, and of ``fsck --repair``'s set
aside, with the side file's size and the disk it takes, for the Turnback on ``PYTHONPATH``
(Linux: bytes from ``/proc/self/io``'s ``rchar``; disk from ``st_blocks``).

    python bench/probes/store/trust36_log_tails.py

Scratch data under ``$BENCHDATA`` (default the system's temporary folder), removed at the end.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from turnback import Store

TAIL = 2 << 30


def _rchar() -> int:
    with open("/proc/self/io") as f:
        for line in f:
            if line.startswith("rchar"):
                return int(line.split()[1])
    raise RuntimeError("no rchar in /proc/self/io")


def _measure(what: str, fn: Callable[[], object]) -> None:
    read, cpu = _rchar(), time.process_time()
    try:
        out = repr(fn())
    except Exception as exc:  # the refusal is the answer measured
        out = type(exc).__name__
    print(f"{what}: {out[:70]}, read {(_rchar() - read) >> 20} MiB, "
          f"CPU {time.process_time() - cpu:.2f} s")


def _store_with_tail(top: Path, name: str) -> tuple[Path, Path]:
    ws = top / name
    ws.mkdir()
    (ws / "f.txt").write_text("one\n")
    with Store.open(ws) as store:
        first = store.checkpoint(label="first")
        (ws / "f.txt").write_text("two\n")
        store.rewind(first.id)
        oplog = store.oplog.path
    with open(oplog, "ab") as f:
        f.truncate(oplog.stat().st_size + TAIL)  # zeros, no newline: sparse
    return ws, oplog


def main() -> None:
    top = Path(tempfile.mkdtemp(dir=os.environ.get("BENCHDATA")))
    try:
        ws, oplog = _store_with_tail(top, "append")
        with Store.open(ws) as store:
            _measure("an op-log append", lambda: store.oplog.add(
                {"id": "x" * 16, "op": "undo", "mode": "files"}, fsync=False))
        ws, oplog = _store_with_tail(top, "repair")
        with Store.open(ws) as store:
            _measure("fsck --repair's set aside", store.repair_logs)
        for side in sorted(oplog.parent.glob("oplog.jsonl.junk-*")):
            st = side.stat()
            print(f"side file: {st.st_size >> 20} MiB long, {(st.st_blocks * 512) >> 20} MiB "
                  "on disk")
        print(f"oplog.jsonl after: {oplog.stat().st_size} bytes")
    finally:
        shutil.rmtree(top)


if __name__ == "__main__":
    main()
