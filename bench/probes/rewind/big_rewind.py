"""Time of a checkpoint of 10,000 changed files and of the rewind that puts them back, in-process,
on a generated workspace (issue 23's 10,000-file rewind, for an A/B of two package folders).

    python bench/probes/rewind/big_rewind.py PACKAGE_FOLDER WORKSPACE

The workspace's store is removed first; a first checkpoint, then 10,000 of its text files
(spread over it) get a line appended, an incremental checkpoint of them (as a server's, the
changed paths given) and a rewind to the first checkpoint are timed.
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[2]  # bench/ (this probe is in bench/probes/<topic>/)


def main(code: Path, ws: Path) -> None:
    sys.path.insert(0, str(code.resolve()))
    sys.path.insert(0, str(HERE))
    from edits import text_files

    from turnback import Store

    shutil.rmtree(ws / ".turnback", ignore_errors=True)
    files = [ws / r for r in text_files(ws)]
    with Store.open(ws, create=True) as store:
        first = store.checkpoint()
        changed = files[::max(1, len(files) // 10000)][:10000]
        for p in changed:
            p.write_bytes(p.read_bytes() + b"\n# changed\n")
        time.sleep(0.1)  # past the stat cache's racy margin
        rel = [str(p.relative_to(ws)) for p in changed]
        t0 = time.perf_counter()
        store.checkpoint(dirty=rel)
        t1 = time.perf_counter()
        store.rewind(first.id)
        t2 = time.perf_counter()
    print(f"{code}: checkpoint of {len(changed):,} files {t1 - t0:.2f} s, rewind {t2 - t1:.2f} s, "
          f"load {os.getloadavg()[0]:.1f}", flush=True)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    main(Path(sys.argv[1]), Path(sys.argv[2]).resolve())
