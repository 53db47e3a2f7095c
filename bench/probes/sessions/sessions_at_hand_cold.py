"""What the first answer on a store never listed costs in-process: the sessions at hand.

In a fresh process: open the store made by ``bench/run_sessions.py`` (its ``index/``
removed first, as ``sessions_never_listed.py`` does), then time what the server's first
answer reads: ``sessions_at_hand_page(limit=200)`` (the directory scan, every session
file's header line, the meta lines at the end of the 200 shown), or where a commit has
no such method ``sessions_at_hand()`` (the same but no meta lines): wall, CPU, the bytes
this process read from the disk (``/proc/self/io``), the load average before and after.
``--cold`` drops the kernel's page cache first (root; every process on the machine pays
for it: sparingly); ``--evict`` only asks the kernel to drop the session files' cached
pages (``POSIX_FADV_DONTNEED``: no root, nothing else touched; the inodes and the
directory stay cached). Call it in turns with ``--ref`` for an A/B.

    python bench/probes/sessions/sessions_at_hand_cold.py /work/benchdata/cold16/sessions-ws \
        [--ref REF] [--src /work/benchdata/cold16/src] [--cold | --evict]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # bench/: the shared modules
import turnback_side

HERE = Path(__file__).resolve().parents[2]  # bench/ (this probe is in bench/probes/<topic>/)


def _read_bytes() -> int:
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("read_bytes:"):
            return int(line.split()[1])
    return 0


def _evict(folder: Path) -> None:
    for p in folder.iterdir():
        fd = os.open(p, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("workspace", type=Path)
    ap.add_argument("--ref", default=None)
    ap.add_argument("--src", type=Path, default=HERE / "work",
                    help="where --ref's copy of the package goes")
    how = ap.add_mutually_exclusive_group()
    how.add_argument("--cold", action="store_true", help="drop the page cache (root)")
    how.add_argument("--evict", action="store_true", help="drop the session files' pages")
    a = ap.parse_args(argv)
    commit = turnback_side.use_ref(a.ref, a.src) if a.ref else "working tree"
    from turnback import Store

    ws = a.workspace.resolve()
    shutil.rmtree(ws / ".turnback" / "index", ignore_errors=True)
    if a.evict:
        _evict(ws / ".turnback" / "sessions")
    if a.cold:
        os.sync()
        Path("/proc/sys/vm/drop_caches").write_text("3\n")
    load = os.getloadavg()
    at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    with Store.open(ws) as store:
        disk, cpu, wall = _read_bytes(), time.process_time(), time.perf_counter()
        paged = getattr(store, "sessions_at_hand_page", None)
        got = paged(None, 0, 200)[0] if paged is not None else store.sessions_at_hand()
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        disk = _read_bytes() - disk
    print(json.dumps({"commit": commit, "at": at, "cold": a.cold, "evict": a.evict,
                      "shown": len(got), "wallMs": round(wall * 1000, 1),
                      "cpuMs": round(cpu * 1000, 1), "diskBytes": disk,
                      "loadBefore": load, "loadAfter": os.getloadavg()}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
