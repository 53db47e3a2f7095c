"""``checkpoints.jsonl`` with a sparse 2 GiB after its last record (branch ``redteam48``):
the bytes read, CPU and peak memory of one listing of the checkpoints in a fresh process,
for the Turnback on ``PYTHONPATH`` (Linux: bytes from ``/proc/self/io``'s ``rchar``, peak
memory from ``ru_maxrss``). ``torn``: no newline at the end (a torn tail); ``line``: a
newline at the end and a checkpoint after it (a long line in the middle).

    python bench/probes/store/redteam48_index_tail.py torn|line

Scratch data under ``$BENCHDATA`` (default the system's temporary folder), removed at the end.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from turnback import Store

TAIL = 2 << 30

CHILD = """
import resource, sys, time
with open("/proc/self/io") as f:
    before = int(next(l for l in f if l.startswith("rchar")).split()[1])
cpu = time.process_time()
from turnback import Store
with Store.open(sys.argv[1]) as store:
    n = len(store.checkpoints())
with open("/proc/self/io") as f:
    read = int(next(l for l in f if l.startswith("rchar")).split()[1]) - before
print(f"listed {n}, read {read >> 20} MiB, CPU {time.process_time() - cpu:.2f} s, "
      f"peak {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss >> 10} MiB")
"""


def main(kind: str) -> None:
    base = Path(tempfile.mkdtemp(dir=os.environ.get("BENCHDATA")))
    try:
        ws = base / "ws"
        ws.mkdir()
        (ws / "f.txt").write_text("one\n")
        with Store.open(ws) as store:
            store.checkpoint(label="first")
        index = ws / ".turnback" / "checkpoints.jsonl"
        with open(index, "ab") as f:
            f.write(b"x")
            f.truncate(os.path.getsize(index) + TAIL)
            if kind == "line":
                f.seek(0, os.SEEK_END)
                f.write(b"\n")
        if kind == "line":
            with Store.open(ws) as store:
                (ws / "f.txt").write_text("two\n")
                store.checkpoint(label="after")
        subprocess.run([sys.executable, "-c", CHILD, str(ws)], check=True)
    finally:
        shutil.rmtree(base)


if __name__ == "__main__":
    main(sys.argv[1])
