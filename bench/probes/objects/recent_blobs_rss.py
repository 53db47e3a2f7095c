"""A process's memory after many small checkpoints, with and without the kept recent blobs
(objects/recentblobs.py, bound 8 MiB): ``ROUNDS`` rounds of 10 edited files and an at-once
checkpoint (``Store.checkpoint(dirty=…)``, held batches as raw frames, as a server writes
them), VmRSS read from ``/proc/self/status`` after the walk and at the end.

    python bench/probes/objects/recent_blobs_rss.py WORKSPACE ROUNDS [--src OTHER/server]

Run each side on its own copy of one workspace (its store made beforehand), so both see
the same edits.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parents[2]  # bench/
_SRC = sys.argv[sys.argv.index("--src") + 1] if "--src" in sys.argv[:-1] else None
sys.path.insert(0, _SRC or str(HERE.parent / "server"))
sys.path.insert(0, str(HERE))

from edits import Editor  # noqa: E402

from turnback.store.facade import Store  # noqa: E402


def rss_kib() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def main() -> int:
    ws, rounds = Path(sys.argv[1]), int(sys.argv[2])
    store = Store.open(ws)
    store.objects.raw_held = True
    store.checkpoint(label="walk")
    before = rss_kib()
    ed = Editor(ws, seed=5)
    for _ in range(rounds):
        store.checkpoint(label="at once", dirty=set(ed.edit(10)))
    recent = getattr(store.objects, "recent", None)
    kept = recent.held_bytes if recent is not None else 0
    print(f"rounds {rounds}: VmRSS {before} KiB after the walk, {rss_kib()} KiB after; "
          f"kept blobs {kept / 1024:.0f} KiB")
    store.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
