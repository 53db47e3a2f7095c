"""A session file whose last event is followed by a sparse 2 GiB with no newline (branch
``redteam45``): the bytes read and CPU of one look at its head, and of ``fsck``, with the
Turnback on ``PYTHONPATH`` (Linux: bytes from ``/proc/self/io``'s ``rchar``).

    python bench/probes/sessions/torn_tail_bytes.py

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
    print(f"{what}: {out[:60]}, read {(_rchar() - read) >> 20} MiB, "
          f"CPU {time.process_time() - cpu:.2f} s")


def main() -> None:
    top = Path(tempfile.mkdtemp(dir=os.environ.get("BENCHDATA")))
    try:
        ws = top / "ws"
        ws.mkdir()
        with Store.open(ws, store_dir=top / "store") as st:
            sid = st.start_session(agent="probe").id
            path = st.backend.path(sid)
            with open(path, "ab") as f:
                f.truncate(path.stat().st_size + TAIL)  # zeros, no newline: sparse
            _measure("head", lambda: st.backend.head(sid))
            _measure("fsck", lambda: st.fsck().ok)
    finally:
        shutil.rmtree(top)


if __name__ == "__main__":
    main()
